package config

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/meetingbot/meetingbot"
)

// Var documents one environment variable: its name, its default as shown to
// the operator, and what it means.
type Var struct {
	Name    string
	Default string
	Meaning string
}

// DemoWhen says when `bot` runs the demo instead of the bot, in the words
// `bot -h` and the README use.
const DemoWhen = "with none of SLACK_BOT_TOKEN, Google credentials and CALENDARS set"

// Vars lists every variable the bot reads, in the order `bot -h` and
// docs/configuration.md show them.
var Vars = []Var{
	{"SLACK_BOT_TOKEN", "none", "Slack bot token (xoxb-…); secret, never printed. " + strings.ToUpper(DemoWhen[:1]) + DemoWhen[1:] + ", the built-in demo runs"},
	{"SLACK_API_URL", DefaultSlackAPIURL, "Slack Web API base URL (a proxy or a local emulator); https, or http to a loopback host only"},
	{"SLACK_SIGNING_SECRET", "none", "the app's Signing Secret, 32 hex digits (Basic Information > App Credentials); secret, never printed. Turns on self-service from Slack: POST /slack/commands, /slack/interactivity and /slack/events on HTTP_ADDR, each request verified with it (v0 signature, timestamp within 5 minutes)"},
	{"SLACK_APP_TOKEN", "none", "app-level token (xapp-…) with the scope connections:write; secret, never printed. Turns on self-service from Slack over Socket Mode, for a bot without a public URL"},
	{"SLACK_ADMINS", "none", "comma-separated Slack user IDs (U…/W…) who may post any calendar's reminders in a channel with /meetingbot subscribe, besides workspace admins and owners; needs SLACK_SIGNING_SECRET or SLACK_APP_TOKEN"},
	{"GOOGLE_APPLICATION_CREDENTIALS", "none", "path to a service-account or authorized-user JSON key file"},
	{"GOOGLE_CREDENTIALS_JSON", "none", "the same JSON, inline; secret, never printed. Set this or GOOGLE_APPLICATION_CREDENTIALS, not both"},
	{"GOOGLE_API_ENDPOINT", DefaultGoogleEndpoint, "Google Calendar API base URL (a proxy or a local emulator); https, or http to a loopback host only"},
	{"GOOGLE_IMPERSONATE", "false", "true: the service account reads each calendar as its owner (domain-wide delegation)"},
	{"GOOGLE_OAUTH_CLIENT_JSON", "none", "the JSON of an OAuth client of type Web application (as the Google Cloud console downloads it), whose redirect URIs include PUBLIC_URL" + GoogleCallbackPath + "; secret, never printed. People connect their own Google account with /meetingbot connect, and their calendar is read with their own token; needs PUBLIC_URL, TOKEN_ENCRYPTION_KEY and self-service (SLACK_SIGNING_SECRET or SLACK_APP_TOKEN). The service account becomes optional (CALENDARS still needs it)"},
	{"SLACK_CLIENT_ID", "none", "the app's Client ID (Basic Information > App Credentials), with SLACK_CLIENT_SECRET: people connect their own Slack user with /meetingbot status on, and the bot sets their status while they are in a meeting; the app lists the redirect URL PUBLIC_URL" + SlackCallbackPath + " and the user scopes users.profile:read and users.profile:write; needs PUBLIC_URL, TOKEN_ENCRYPTION_KEY and self-service"},
	{"SLACK_CLIENT_SECRET", "none", "the app's Client Secret (Basic Information > App Credentials); secret, never printed. Set with SLACK_CLIENT_ID"},
	{"TOKEN_ENCRYPTION_KEY", "none", "base64 of 32 random bytes (openssl rand -base64 32) that encrypts (AES-256-GCM) every token people's connections store; secret, never printed. Comma-separated keys rotate: the first encrypts, any decrypts, and a token read under an old key is encrypted again under the first. Required with GOOGLE_OAUTH_CLIENT_JSON or SLACK_CLIENT_ID"},
	{"CALENDARS", "none", "comma-separated calendarId[=destination]; destination C…/G… (channel ID), #name, U…/W… (user ID) or an email; none = DM the calendar's owner by email. Required unless the demo runs or self-service from Slack is on (SLACK_SIGNING_SECRET or SLACK_APP_TOKEN), where people subscribe with /meetingbot; these stay the operator's, shown in Slack but not editable there"},
	{"REMINDER_OFFSETS", DefaultReminderOffsets, "comma-separated Go durations before each meeting's start, whole seconds, no duplicates; 0 = starting now, sent up to " + meetingbot.FormatOffset(meetingbot.StartGrace) + " after the start"},
	{"TICK_INTERVAL", meetingbot.FormatOffset(DefaultTickInterval), "how often the calendars are swept, from 1s to 10m; at most the smallest REMINDER_OFFSETS above 0, and at most " + meetingbot.FormatOffset(meetingbot.StartGrace) + " when 0 is one, or a reminder could fall between two sweeps (start-up refuses it)"},
	{"PUBLIC_URL", "none", "the bot's public https base URL that reaches HTTP_ADDR, e.g. https://meetingbot.fly.dev: turns on Calendar push notifications, one events.watch channel per calendar posting to PUBLIC_URL/google/notify, so a change is planned within seconds and calendars are read when they change (see docs/design.md, Push notifications and incremental sync). An http:// URL is refused: Google requires https. None: calendars are synced every CALENDAR_RESYNC_INTERVAL"},
	{"CALENDAR_RESYNC_INTERVAL", "30m with PUBLIC_URL, else TICK_INTERVAL", "how old a calendar's last (incremental) sync may be before a sweep syncs it again, from 1s to 1h. With PUBLIC_URL it is the safety sweep for lost notifications of a calendar whose push channel is live: a lost notification's change is seen within it, or at the calendar's next reminder, whichever comes first; a calendar without a live channel (not open yet, refused, expired) is synced every 5m, or this if shorter. Without PUBLIC_URL, how soon a change is seen"},
	{"CALENDAR_QUOTA_PER_MINUTE", "10000", "the Calendar API requests a minute the Google Cloud project allows (Google Cloud console > APIs & Services > Google Calendar API > Quotas); the bot paces its reads within it, and lowers its pace for a while when Google answers a rate limit anyway. With several replicas (DATABASE_URL) each paces itself to its share of the subscriptions, so give the project's figure, not a replica's"},
	{"CALENDAR_QUOTA_PER_USER_PER_MINUTE", "600", "the same per user: every calendar read as the service account (no GOOGLE_IMPERSONATE) counts against one user's quota, each calendar read as its owner against its owner's. When the calendars need more reads than it gives, the bot says so at start-up and on /metrics (meetingbot_calendar_quota_demand_ratio) with the fixes, reads the calendars whose reminders come soonest first (the checks just before reminders go out before routine resyncs), and reminds from its last reading of the others"},
	{"CALENDAR_DAILY_REQUEST_THRESHOLD", "1000000", "the Calendar API requests a day past which Google bills the project (its daily billing threshold, 1,000,000 in 2026, which cannot be raised; a lower figure for a budget of your own). The bot projects its day's requests against it at start-up, from the calendars, REMINDER_OFFSETS, TICK_INTERVAL, CALENDAR_RESYNC_INTERVAL and push, and every hour from the requests it made, on /metrics (meetingbot_calendar_daily_projection_ratio) and in bot doctor, and says past 80 % what brings it down (see docs/operations.md, What Calendar calls cost)"},
	{"SLACK_POSTS_PER_MINUTE", "300", "the posts a minute Slack lets the app make in the whole workspace (chat.postMessage: about one a second per channel and \"several hundred messages per minute\" in all, without a figure). Every post waits its turn within it, the meetings that start soonest first; a 429 from Slack holds every post for its Retry-After and lowers the pace for a while. 0: channels are paced, the workspace is not (see docs/operations.md, Slack's posting budget)"},
	{"REMINDER_EARLY_MAX", "5m", "the most a reminder may be posted ahead of its trigger when more reminders fall due together than SLACK_POSTS_PER_MINUTE passes by their triggers, and never more than a quarter of its offset (a 10m reminder at most 2m30s ahead, a 1m one 15s); whole seconds up to 1h. 0: none ahead, and a crowd waits its turn after its trigger"},
	{"JOIN_URL_HOSTS", "none", "comma-separated hosts, e.g. meet.jit.si, whose https links become a reminder's Join button beside Google Meet, Zoom, Microsoft Teams and Webex; a host covers its subdomains. Any other link from an event is shown as text"},
	{"DATABASE_PATH", DefaultDatabasePath, "SQLite file holding cursors and the ledger of sent reminders, for one machine"},
	{"DATABASE_URL", "none", "postgres://user:password@host:5432/dbname instead of DATABASE_PATH (set one, not both): several replicas share the subscriptions and the ledger in one PostgreSQL (see docs/setup.md, Several replicas); secret, never printed. ?search_path=schema puts the tables in that schema"},
	{"HTTP_ADDR", DefaultHTTPAddr, "listen address of /healthz and, unless METRICS_ADDR is set, /metrics; with PUBLIC_URL, of POST /google/notify too"},
	{"METRICS_ADDR", "none", "a second, private listen address for /metrics and the detailed /healthz, which name calendars and channels; set, HTTP_ADDR's /healthz says only ok or how many subscriptions fail. None: both on HTTP_ADDR"},
	{"LOG_LEVEL", "info", "debug, info, warn or error"},
	{"LOG_FORMAT", "json", "json or text (logs go to stderr)"},
}

// Usage writes the help of the bot: the subcommands and every variable with
// its default and meaning.
func Usage(w io.Writer) {
	fmt.Fprint(w, `Usage: bot [demo | audit | doctor | version]

A Slack bot that posts a reminder before each Google Calendar meeting.
Configuration comes only from environment variables.

  bot         run the bot; with none of SLACK_BOT_TOKEN, Google credentials
              and CALENDARS set, run the demo instead
  bot demo    run the built-in demo: local Calendar and Slack emulators,
              reminders printed to the terminal
  bot audit   compare the reminders that were due with what Slack received
              (bot audit -h for its flags)
  bot doctor  check the configuration against Slack, Google Calendar, the
              database and PUBLIC_URL, changing nothing (bot doctor -h)
  bot version print the version and the commit the binary was built from
              (also bot --version)

Environment:
`)
	for _, v := range Vars {
		fmt.Fprintf(w, "  %s (default: %s)\n", v.Name, v.Default)
		for _, line := range wrap(v.Meaning, usageWidth-6) {
			fmt.Fprintf(w, "      %s\n", line)
		}
	}
	fmt.Fprint(w, `
Malformed configuration exits with status 2, one line per problem.
Health: GET /healthz. Metrics: GET /metrics (Prometheus text format); with
a private listener set, both in detail there.
`)
}

// usageWidth is the widest line bot -h prints: a terminal's 80 columns.
const usageWidth = 80

// wrap breaks s into lines of at most width runes at spaces (a word longer
// than width stands alone).
func wrap(s string, width int) []string {
	var lines []string
	line := ""
	for word := range strings.FieldsSeq(s) {
		switch {
		case line == "":
			line = word
		case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) <= width:
			line += " " + word
		default:
			lines = append(lines, line)
			line = word
		}
	}
	if line != "" {
		lines = append(lines, line)
	}
	return lines
}

// Markdown returns the variables as the Markdown table in docs/configuration.md.
func Markdown() string {
	var b strings.Builder
	b.WriteString("| variable | default | meaning |\n| --- | --- | --- |\n")
	for _, v := range Vars {
		def := v.Default
		if def != "none" {
			def = "`" + def + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", v.Name, def, v.Meaning)
	}
	return b.String()
}
