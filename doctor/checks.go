package doctor

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/slack-go/slack"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/calendar"
	"github.com/meetingbot/meetingbot/config"
	"github.com/meetingbot/meetingbot/internal/outbound"
	"github.com/meetingbot/meetingbot/monitor"
	"github.com/meetingbot/meetingbot/storage/postgres"
	"github.com/meetingbot/meetingbot/storage/sqlite"
)

// doctorTimeout bounds one check, the clients' own retries included.
const doctorTimeout = time.Minute

// slackScope is a bot scope of the app manifests and what needs it.
type slackScope struct {
	name string
	// why is what the bot calls with it.
	why string
	// needed says whether cfg's features call it.
	needed func(cfg config.Config, kinds map[string]bool) bool
}

// Destination kinds of CALENDARS entries, as destinationKinds names them.
const (
	kindChannel = "channel" // C…, G…
	kindName    = "name"    // #name
	kindUser    = "user"    // U…, W…
	kindEmail   = "email"   // an email, or none: the calendar's owner
)

// slackScopes are the manifests' bot scopes (a test keeps them the same),
// each with the features that need it.
var slackScopes = []slackScope{
	{"chat:write", "chat.postMessage: post the reminders", func(config.Config, map[string]bool) bool { return true }},
	{"im:write", "conversations.open: open a DM", func(cfg config.Config, k map[string]bool) bool {
		return k[kindUser] || k[kindEmail] || cfg.SelfService()
	}},
	{"users:read", "users.lookupByEmail (beside users:read.email) and users.info", func(cfg config.Config, k map[string]bool) bool {
		return k[kindEmail] || cfg.SelfService()
	}},
	{"users:read.email", "users.lookupByEmail: the Slack user of an email, and the email of whoever types /meetingbot", func(cfg config.Config, k map[string]bool) bool {
		return k[kindEmail] || cfg.SelfService()
	}},
	{"channels:read", "conversations.list: a #name's channel", func(_ config.Config, k map[string]bool) bool { return k[kindName] }},
	{"groups:read", "conversations.list: a #name's private channel", func(_ config.Config, k map[string]bool) bool { return k[kindName] }},
	{"channels:history", "conversations.history: find a reminder after a crash before sending it again, and the audit", func(_ config.Config, k map[string]bool) bool {
		return k[kindChannel] || k[kindName]
	}},
	{"groups:history", "conversations.history in private channels: the same", func(_ config.Config, k map[string]bool) bool {
		return k[kindChannel] || k[kindName]
	}},
	{"im:history", "conversations.history in DMs, and replies to the bot's DM (message.im)", func(cfg config.Config, k map[string]bool) bool {
		return k[kindUser] || k[kindEmail] || cfg.SelfService()
	}},
	{"commands", "the /meetingbot command", func(cfg config.Config, _ map[string]bool) bool { return cfg.SelfService() }},
}

// Scopes lists the bot scopes doctor knows what needs, in the manifests'
// order: a test keeps them the manifests' and the Slack emulator's
// default grant.
func Scopes() []string {
	names := make([]string, len(slackScopes))
	for i, s := range slackScopes {
		names[i] = s.name
	}
	return names
}

// destinationKinds returns the kinds of destination cfg's CALENDARS has.
func destinationKinds(cfg config.Config) map[string]bool {
	kinds := map[string]bool{}
	for _, s := range cfg.Subscriptions {
		d := s.Destination
		switch {
		case d == "" || strings.Contains(d, "@"):
			kinds[kindEmail] = true
		case strings.HasPrefix(d, "#"):
			kinds[kindName] = true
		case strings.HasPrefix(d, "U") || strings.HasPrefix(d, "W"):
			kinds[kindUser] = true
		default:
			kinds[kindChannel] = true
		}
	}
	return kinds
}

// slackChecks check the bot token, the scopes the configuration needs, and
// the app-level token of Socket Mode.
func slackChecks(d *doctorEnv) []check {
	var grant struct {
		scopes []string
		known  bool
	}
	checks := []check{{"Slack token", func(ctx context.Context) outcome {
		ctx, cancel := context.WithTimeout(ctx, doctorTimeout)
		defer cancel()
		g, err := d.slack.Grant(ctx)
		switch {
		case err != nil && meetingbot.IsPermanent(err):
			d.slackState = slackRefused
			return fail("Slack refused it", err.Error())
		case err != nil:
			d.slackState = slackSilent
			return fail(didNotAnswer("Slack", d.cfg.SlackAPIURL, err), "check SLACK_API_URL ("+d.cfg.SlackAPIURL+") and the network, then run bot doctor again")
		}
		d.slackState = slackTook
		grant.scopes, grant.known = g.Scopes, g.ScopesKnown
		return pass("the bot user %s (%s) in %s (%s)", g.User, g.UserID, g.Team, g.TeamID)
	}}, {"Slack scopes", func(ctx context.Context) outcome {
		if d.slackState != slackTook {
			return d.skipped()
		}
		if !grant.known {
			return fail("Slack's answer to auth.test named no scopes (no x-oauth-scopes header)",
				"if SLACK_API_URL ("+d.cfg.SlackAPIURL+") is a proxy, let it pass Slack's response headers; the scopes the bot needs are in slack-app-manifest.yaml")
		}
		kinds := destinationKinds(d.cfg)
		var need, missing, why []string
		for _, s := range slackScopes {
			if !s.needed(d.cfg, kinds) {
				continue
			}
			need = append(need, s.name)
			if !slices.Contains(grant.scopes, s.name) {
				missing = append(missing, s.name)
				why = append(why, s.name+" for "+s.why)
			}
		}
		if len(missing) > 0 {
			return fail("the token lacks "+strings.Join(missing, ", "),
				"add "+strings.Join(why, "; ")+"; on your app's OAuth & Permissions page (Scopes > Bot Token Scopes), or create the app again from slack-app-manifest.yaml, then reinstall it to the workspace (Install App > Reinstall), which new scopes need")
		}
		return pass("the token has the %d scopes this configuration needs: %s", len(need), strings.Join(need, ", "))
	}}}
	if d.cfg.SlackAppToken != "" {
		checks = append(checks, check{"Slack app-level token (Socket Mode)", func(ctx context.Context) outcome {
			ctx, cancel := context.WithTimeout(ctx, doctorTimeout)
			defer cancel()
			api := slack.New(d.cfg.SlackToken, slack.OptionAPIURL(d.cfg.SlackAPIURL), slack.OptionAppLevelToken(d.cfg.SlackAppToken),
				slack.OptionHTTPClient(outbound.Client(nil)))
			// apps.connections.open hands out a WebSocket URL; doctor
			// never dials it.
			if _, _, err := api.StartSocketModeContext(ctx); err != nil {
				var se slack.SlackErrorResponse
				if errors.As(err, &se) {
					return fail("Slack refused it ("+se.Err+")",
						"generate an app-level token with the scope connections:write on your app's Basic Information page (App-Level Tokens) and put it, xapp-…, in SLACK_APP_TOKEN; and turn Socket Mode on (Socket Mode page), as slack-app-manifest.socket-mode.yaml does")
				}
				return fail(didNotAnswer("Slack", d.cfg.SlackAPIURL, err), "check SLACK_API_URL and the network, then run bot doctor again")
			}
			return pass("Slack opens Socket Mode connections for it")
		}})
	}
	return checks
}

// calendarChecks read each CALENDARS calendar once, as a sweep does, and
// check that the bot sees its events' details.
func calendarChecks(d *doctorEnv) []check {
	var ids []string
	for _, s := range d.cfg.Subscriptions {
		if !slices.Contains(ids, s.CalendarID) {
			ids = append(ids, s.CalendarID)
		}
	}
	if len(ids) == 0 || d.source == nil {
		return []check{{"calendars", func(context.Context) outcome {
			return pass("none in CALENDARS: people subscribe with /meetingbot, which checks each calendar as it is added")
		}}}
	}
	var checks []check
	for _, id := range ids {
		checks = append(checks, check{"calendar " + id, func(ctx context.Context) outcome {
			ctx, cancel := context.WithTimeout(ctx, doctorTimeout)
			defer cancel()
			role, fix, err := d.source.Access(ctx, id)
			switch {
			case err != nil && fix != "":
				return fail("cannot be read", fix)
			case err != nil:
				return d.googleSilent(err)
			case role == calendar.FreeBusyReader:
				return fail("shows only free/busy: its reminders would have no title, link or join button", d.source.BusyOnlyFix(id))
			}
			return pass("readable with event details (access %s)", role)
		}})
	}
	return checks
}

// destinationChecks look each CALENDARS destination up the way a reminder
// is posted there, at the pace of the bot's own start-up check; they post
// nothing.
func destinationChecks(d *doctorEnv) []check {
	var checks []check
	var pace *monitor.DestinationCheck
	for _, sub := range d.cfg.Subscriptions {
		checks = append(checks, check{"destination of " + sub.ID, func(ctx context.Context) outcome {
			if d.slackState != slackTook {
				return d.skipped()
			}
			if pace == nil {
				pace = monitor.NewDestinationCheck(nil, d.slack.Resolve, func(meetingbot.Subscription, error) {}, d.log)
			}
			err := pace.Check(ctx, sub)
			switch {
			case ctx.Err() != nil:
				return fail("not checked: stopped", "")
			case err != nil && meetingbot.IsPermanent(err):
				return fail("Slack refuses "+monitor.DestinationName(sub), err.Error())
			case err != nil:
				return fail(didNotAnswer("Slack", d.cfg.SlackAPIURL, err), "check the network and SLACK_API_URL, then run bot doctor again")
			}
			return pass("reminders can be posted: %s", monitor.DestinationName(sub))
		}})
	}
	return checks
}

// databaseChecks check the database the way the bot opens it, without
// migrating it or registering a replica: reachable, writable (in a
// transaction rolled back), and migrated.
func databaseChecks(d *doctorEnv) []check {
	return []check{{"database", func(ctx context.Context) outcome {
		ctx, cancel := context.WithTimeout(ctx, doctorTimeout)
		defer cancel()
		if d.cfg.DatabaseURL != "" {
			h, err := postgres.Check(ctx, d.cfg.DatabaseURL)
			return postgresOutcome(d.cfg.DatabaseURL, h, err)
		}
		h, err := sqlite.Check(ctx, d.cfg.DatabasePath)
		if err != nil {
			return fail("cannot be used: "+err.Error(), sqliteFix(d.cfg.DatabasePath, err))
		}
		switch {
		case !h.Migrated:
			return pass("SQLite at %s: no ledger yet; the bot creates it and applies its %d migrations when it starts", d.cfg.DatabasePath, len(h.Pending))
		case len(h.Pending) > 0:
			return pass("SQLite at %s: writable; the bot applies %s when it starts", d.cfg.DatabasePath, strings.Join(h.Pending, ", "))
		}
		return pass("SQLite at %s: writable and migrated", d.cfg.DatabasePath)
	}}}
}

func sqliteFix(path string, err error) string {
	switch {
	case errors.Is(err, sqlite.ErrNotSQLite):
		return "DATABASE_PATH names a file that is not the bot's database: point it at another file, or move that one away"
	case errors.Is(err, sqlite.ErrSchemaTooNew):
		return "a newer bot migrated it: run that version, or restore the file it had before"
	}
	return fmt.Sprintf("give the bot's user write access to %s and its directory (SQLite writes its journal and the owner locks there)", path)
}

// postgresOutcome words what postgres.Check found.
func postgresOutcome(rawURL string, h postgres.Health, err error) outcome {
	where := postgres.Redact(rawURL)
	var pe *pgconn.PgError
	switch {
	case err == nil && !h.Migrated:
		return pass("PostgreSQL %s, schema %s: writable; the bot creates its tables and applies its %d migrations when it starts", where, h.Schema, len(h.Pending))
	case err == nil && len(h.Pending) > 0:
		return pass("PostgreSQL %s, schema %s: writable; the bot applies %s when it starts", where, h.Schema, strings.Join(h.Pending, ", "))
	case err == nil:
		return pass("PostgreSQL %s, schema %s: writable and migrated", where, h.Schema)
	case errors.As(err, &pe) && pe.Code == "3D000": // invalid_catalog_name
		return fail("the database does not exist: "+err.Error(), postgres.CreatedbFix(rawURL)+", then run bot doctor again; the bot creates its tables")
	case errors.As(err, &pe) && (pe.Code == "28P01" || pe.Code == "28000"): // invalid_password, invalid_authorization_specification
		return fail("PostgreSQL refused the user: "+err.Error(), "check the user and password in DATABASE_URL")
	case errors.Is(err, postgres.ErrSchemaTooNew):
		return fail(err.Error(), "a newer bot migrated it: run that version")
	case postgres.Unreachable(err):
		return fail("cannot be reached: "+err.Error(), "check the host and port in DATABASE_URL, that PostgreSQL runs and that it accepts connections from this host")
	}
	return fail("cannot be used: "+err.Error(), "give the user in DATABASE_URL the right to create tables in its schema (or point ?search_path= at one where it may)")
}
