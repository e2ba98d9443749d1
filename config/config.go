// Package config reads the bot's configuration from environment variables,
// once, into a plain Config. Every malformed or missing value is reported at
// once, each problem on its own line naming the variable, what was wrong and
// a valid example. Secrets (the Slack token, inline Google credentials) never
// appear in a Config's String or in an error, and neither does a value of
// another variable that looks like one (JSON, a PEM key, a Slack or Google
// token, a long base64 or hex blob): such a value is refused, unquoted.
package config

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/meetingbot/meetingbot"
)

// Defaults of the variables that have one.
const (
	DefaultSlackAPIURL     = "https://slack.com/api/"
	DefaultGoogleEndpoint  = "https://www.googleapis.com/calendar/v3/"
	DefaultDatabasePath    = "reminders.db"
	DefaultHTTPAddr        = ":8080"
	DefaultTickInterval    = meetingbot.DefaultTickInterval
	DefaultReminderOffsets = "10m"
)

// Config is the parsed configuration.
type Config struct {
	// SlackToken is SLACK_BOT_TOKEN. Secret.
	SlackToken string
	// SlackAPIURL is SLACK_API_URL, ending in a slash.
	SlackAPIURL string
	// CredentialsFile is GOOGLE_APPLICATION_CREDENTIALS, a path.
	CredentialsFile string
	// CredentialsJSON is GOOGLE_CREDENTIALS_JSON. Secret.
	CredentialsJSON []byte
	// GoogleEndpoint is GOOGLE_API_ENDPOINT, ending in a slash.
	GoogleEndpoint string
	// Impersonate is GOOGLE_IMPERSONATE.
	Impersonate bool
	// Subscriptions come from CALENDARS, each with Offsets; their IDs are
	// the entries as written (trimmed), so they stay the same across
	// restarts as long as the entry does.
	Subscriptions []meetingbot.Subscription
	// Offsets is REMINDER_OFFSETS, ascending.
	Offsets []time.Duration
	// TickInterval is TICK_INTERVAL.
	TickInterval time.Duration
	// DatabasePath is DATABASE_PATH; empty when DatabaseURL is set.
	DatabasePath string
	// DatabaseURL is DATABASE_URL: a PostgreSQL URL that several replicas
	// share instead of DatabasePath's SQLite file. Secret: it holds a
	// password; String shows only its host and database.
	DatabaseURL string
	// PublicURL is PUBLIC_URL without a trailing slash: the bot's https
	// base URL, which turns on Calendar push notifications to NotifyURL.
	// Empty: poll only.
	PublicURL string
	// ResyncInterval is CALENDAR_RESYNC_INTERVAL: how old a calendar's
	// last sync may be before a sweep syncs it again; DefaultResyncPush
	// with PublicURL (for a calendar whose push channel is live: one
	// without is resynced every 5 minutes at most), TickInterval without.
	ResyncInterval time.Duration
	// CalendarQuota and CalendarUserQuota are CALENDAR_QUOTA_PER_MINUTE
	// and CALENDAR_QUOTA_PER_USER_PER_MINUTE: the Calendar API requests a
	// minute the Google Cloud project allows in all and per user (see
	// quota.go).
	CalendarQuota, CalendarUserQuota int
	// CalendarDailyThreshold is CALENDAR_DAILY_REQUEST_THRESHOLD: the
	// Calendar API requests a day past which Google bills the project;
	// the bot projects its day against it (quota.go).
	CalendarDailyThreshold int
	// SlackPostsPerMinute is SLACK_POSTS_PER_MINUTE: the workspace-wide
	// posting budget every post is paced to; 0 paces channels only
	// (posting.go).
	SlackPostsPerMinute int
	// EarlyMax is REMINDER_EARLY_MAX: the most a reminder may be posted
	// ahead of its trigger when more fall due together than the posting
	// budget passes by then, and never more than a quarter of its offset;
	// 0 posts none ahead (posting.go).
	EarlyMax time.Duration
	// HTTPAddr is HTTP_ADDR.
	HTTPAddr string
	// MetricsAddr is METRICS_ADDR: a second, private listener for
	// /metrics and the detailed /healthz; empty keeps both on HTTPAddr.
	MetricsAddr string
	// LogLevel is LOG_LEVEL.
	LogLevel slog.Level
	// LogFormat is LOG_FORMAT: "json" or "text".
	LogFormat string
	// JoinURLHosts is JOIN_URL_HOSTS, lowercased: hosts, beside the known
	// meeting services, whose https links become a reminder's Join button.
	JoinURLHosts []string
	// SlackSigningSecret is SLACK_SIGNING_SECRET: Slack's requests to
	// /slack/* on HTTPAddr are verified with it. Secret.
	SlackSigningSecret string
	// SlackAppToken is SLACK_APP_TOKEN, an app-level token (xapp-…) for
	// Socket Mode. Secret.
	SlackAppToken string
	// SlackAdmins is SLACK_ADMINS: Slack user IDs who may post any
	// calendar's reminders in a channel.
	SlackAdmins []string
	// GoogleOAuth is GOOGLE_OAUTH_CLIENT_JSON's Web application client:
	// people connect their own Google accounts (oauth.go). Nil when off.
	// Secret.
	GoogleOAuth *GoogleOAuthClient
	// TokenKeys is TOKEN_ENCRYPTION_KEY, checked by package keyring. Secret.
	TokenKeys string
	// SlackClientID and SlackClientSecret are SLACK_CLIENT_ID and
	// SLACK_CLIENT_SECRET: people connect their own Slack user, for their
	// status during meetings (oauth.go). The secret is secret.
	SlackClientID, SlackClientSecret string
	// Demo is true when none of SLACK_BOT_TOKEN, Google credentials and
	// CALENDARS is set (DemoWhen): there is nothing to run but the demo.
	Demo bool
}

// String describes c without its secrets, for a start-up log line.
func (c Config) String() string {
	ids := make([]string, len(c.Subscriptions))
	for i, s := range c.Subscriptions {
		ids[i] = s.ID
	}
	offs := make([]string, len(c.Offsets))
	for i, o := range c.Offsets {
		offs[i] = meetingbot.FormatOffset(o)
	}
	db := c.DatabasePath
	if c.DatabaseURL != "" {
		db = RedactURL(c.DatabaseURL)
	}
	return fmt.Sprintf("calendars=[%s] offsets=[%s] tick=%v db=%s http=%s metrics=%s slack=%s google=%s impersonate=%v %s public_url=%s resync=%v %s",
		strings.Join(ids, " "), strings.Join(offs, ","), c.TickInterval, db, c.HTTPAddr, c.MetricsAddr,
		c.SlackAPIURL, c.GoogleEndpoint, c.Impersonate, c.selfServiceString(), c.PublicURL, c.ResyncInterval, c.oauthString())
}

// Problem is one thing wrong with the configuration.
type Problem struct {
	// Var names the variable, or several joined by " and ".
	Var string
	// Value is the offending value as given; empty for a missing value
	// and for secrets, which are never shown.
	Value string
	// Msg says what is wrong and gives a valid example.
	Msg string
}

// String formats the problem as VAR="value": what is wrong, e.g. VAR=good.
func (p Problem) String() string {
	s := p.Var
	if p.Value != "" {
		s += "=" + strconv.Quote(p.Value)
	}
	return s + ": " + p.Msg
}

// Error lists every problem found; Parse returns it.
type Error struct {
	Problems []Problem
}

// Error returns the problems, one per line.
func (e *Error) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// IsConfig reports whether err is, or wraps, a configuration *Error or
// a configuration Rejected.
func IsConfig(err error) bool {
	var e *Error
	var r rejected
	return errors.As(err, &e) || errors.As(err, &r)
}

// Rejected marks err, a client's refusal of configuration that parsed (a
// credentials JSON without a usable private key, a TOKEN_ENCRYPTION_KEY
// that is not a key), as the operator's to fix before anything starts:
// IsConfig reports true for it, and the bot exits 2 with its text.
func Rejected(err error) error { return rejected{err} }

type rejected struct{ err error }

func (e rejected) Error() string { return e.err.Error() }
func (e rejected) Unwrap() error { return e.err }

// Parse reads the configuration through getenv (os.Getenv in production).
// An empty value counts as unset. It returns an *Error listing every
// problem, or the Config. It reads the file GOOGLE_APPLICATION_CREDENTIALS
// names, to check it, and nothing else.
func Parse(getenv func(string) string) (Config, error) {
	p := &parser{getenv: getenv}
	c := Config{
		SlackToken:      p.token("SLACK_BOT_TOKEN"),
		SlackAPIURL:     p.baseURL("SLACK_API_URL", DefaultSlackAPIURL),
		GoogleEndpoint:  p.baseURL("GOOGLE_API_ENDPOINT", DefaultGoogleEndpoint),
		Impersonate:     p.boolean("GOOGLE_IMPERSONATE"),
		Offsets:         p.offsets("REMINDER_OFFSETS"),
		TickInterval:    p.interval("TICK_INTERVAL"),
		HTTPAddr:        p.addr("HTTP_ADDR", DefaultHTTPAddr),
		MetricsAddr:     p.addr("METRICS_ADDR", ""),
		LogLevel:        p.level("LOG_LEVEL"),
		LogFormat:       p.format("LOG_FORMAT"),
		CredentialsFile: p.get("GOOGLE_APPLICATION_CREDENTIALS"),
		JoinURLHosts:    p.hosts("JOIN_URL_HOSTS"),
		PublicURL:       p.publicURL("PUBLIC_URL"),
	}
	c.ResyncInterval = p.resync("CALENDAR_RESYNC_INTERVAL", c.PublicURL != "", c.TickInterval)
	p.quotas(&c)
	p.posting(&c)
	c.CredentialsJSON = p.credentials(c.CredentialsFile, c.Impersonate)
	p.selfService(&c)
	p.oauth(&c)
	c.DatabaseURL, c.DatabasePath = p.database()
	hasCalendars := p.set("CALENDARS")
	hasServiceAccount := p.set("GOOGLE_APPLICATION_CREDENTIALS") || p.set("GOOGLE_CREDENTIALS_JSON")
	// People's own accounts can stand in for the service account, except
	// for CALENDARS (below).
	hasGoogle := hasServiceAccount || p.set("GOOGLE_OAUTH_CLIENT_JSON")
	hasSlack := p.set("SLACK_BOT_TOKEN")
	switch {
	case !hasSlack && !hasGoogle && !hasCalendars && p.selfServiceSet():
		p.add("SLACK_BOT_TOKEN and GOOGLE_APPLICATION_CREDENTIALS", `missing: self-service from Slack is set up (SLACK_SIGNING_SECRET or SLACK_APP_TOKEN), so both are needed, e.g. SLACK_BOT_TOKEN=xoxb-1234-5678-abcd GOOGLE_APPLICATION_CREDENTIALS=/secrets/key.json (unset SLACK_SIGNING_SECRET and SLACK_APP_TOKEN to run the demo)`)
	case !hasSlack && !hasGoogle && !hasCalendars:
		c.Demo = true
	case hasSlack && !hasGoogle:
		p.add("GOOGLE_APPLICATION_CREDENTIALS", `missing: SLACK_BOT_TOKEN is set, so Google credentials are needed too, e.g. GOOGLE_APPLICATION_CREDENTIALS=/secrets/key.json or GOOGLE_CREDENTIALS_JSON="$(cat key.json)"`)
	case !hasSlack && hasGoogle:
		p.add("SLACK_BOT_TOKEN", "missing: Google credentials are set, so a Slack bot token is needed too, e.g. SLACK_BOT_TOKEN=xoxb-1234-5678-abcd")
	case !hasSlack && !hasGoogle:
		p.add("SLACK_BOT_TOKEN and GOOGLE_APPLICATION_CREDENTIALS", `missing: CALENDARS is set, so both are needed, e.g. SLACK_BOT_TOKEN=xoxb-1234-5678-abcd GOOGLE_APPLICATION_CREDENTIALS=/secrets/key.json (unset CALENDARS to run the demo)`)
	}
	if _, port, _ := net.SplitHostPort(c.MetricsAddr); c.MetricsAddr == c.HTTPAddr && port != "0" {
		p.add("HTTP_ADDR and METRICS_ADDR", fmt.Sprintf("both %q; METRICS_ADDR is a second, private listener, e.g. METRICS_ADDR=127.0.0.1:9091", c.HTTPAddr))
	}
	if !p.reported("TICK_INTERVAL") && !p.reported("REMINDER_OFFSETS") {
		p.tickFits(c.TickInterval, p.get("TICK_INTERVAL") == "", c.Offsets)
	}
	if hasCalendars && !hasServiceAccount && p.set("GOOGLE_OAUTH_CLIENT_JSON") {
		p.add("CALENDARS", `is read with the bot's own Google credentials, and none are set (people's connected accounts read only their own calendars): set GOOGLE_APPLICATION_CREDENTIALS too, e.g. GOOGLE_APPLICATION_CREDENTIALS=/secrets/key.json, or unset CALENDARS and let people subscribe from Slack`)
	}
	if !c.Demo && (hasCalendars || !p.selfServiceSet()) {
		// With self-service on, people subscribe from Slack and CALENDARS
		// may be empty.
		c.Subscriptions = p.calendars("CALENDARS", c.Offsets)
	}
	if len(p.problems) > 0 {
		return Config{}, &Error{Problems: p.problems}
	}
	return c, nil
}
