package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"

	"github.com/meetingbot/meetingbot/calendar"
	"github.com/meetingbot/meetingbot/config"
	"github.com/meetingbot/meetingbot/notify"
)

// bot doctor checks a configuration against the real services before the
// bot relies on it: what start-up cannot see (a scope missing from the
// Slack app, a calendar the credentials cannot read, a destination Slack
// refuses, a database that cannot be written, a PUBLIC_URL nobody outside
// reaches) shows there, one line each with the fix, instead of when a
// reminder fails. It reads the same environment as the bot and changes
// nothing.

// A check is one line of bot doctor: what it looks at, and how.
type check struct {
	// name says what is checked, e.g. "calendar alice@example.com".
	name string
	// run looks, changing nothing, and says what it found.
	run func(ctx context.Context) outcome
}

// outcome is a check's verdict.
type outcome struct {
	ok bool
	// detail says what was found: for a pass, what works; for a failure,
	// what is wrong.
	detail string
	// fix says what to do about a failure.
	fix string
}

func pass(format string, args ...any) outcome {
	return outcome{ok: true, detail: fmt.Sprintf(format, args...)}
}

func fail(detail, fix string) outcome { return outcome{detail: detail, fix: fix} }

// doctorEnv is what the checks share: the configuration, and the clients
// the bot itself would use, built once.
type doctorEnv struct {
	cfg    config.Config
	log    *slog.Logger
	source *calendar.Source
	slack  *notify.Slack
	// slackOK is set by the Slack token's check: the checks that need
	// the token skip when Slack refused it.
	slackOK bool
}

// doctorChecks lists what bot doctor checks, in order; each function
// returns the checks that apply to the configuration. A part of the bot
// with something to check adds a function here, in a file of its own.
var doctorChecks = []func(*doctorEnv) []check{
	slackChecks,
	calendarChecks,
	destinationChecks,
	databaseChecks,
	publicURLChecks,
	googleOAuthChecks,
	slackOAuthChecks,
	spendChecks,
}

// doctorResult is one check's line in bot doctor --json.
type doctorResult struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
}

// runDoctor is `bot doctor`: every check, one line each, and exit 0 when
// all pass, 1 otherwise (2 for flags or a configuration that does not
// parse, as for the bot).
func runDoctor(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bot doctor", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the checks as JSON, for scripts")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: bot doctor [--json]\n\nChecks the configuration in the environment against Slack, Google Calendar, the\ndatabase and PUBLIC_URL, changing nothing: one line per check, with the fix.\nExit status: 0 all pass, 1 one fails, 2 bad flags or configuration.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return usageError{"bot doctor: " + err.Error()}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("bot doctor: unexpected argument %q: configuration comes from environment variables", fs.Arg(0))}
	}
	cfg, err := config.Parse(getenv)
	if err != nil {
		return err
	}
	if cfg.Demo {
		return usageError{"bot doctor: no configuration: doctor checks the bot's environment (SLACK_BOT_TOKEN, Google credentials, CALENDARS or self-service, DATABASE_PATH or DATABASE_URL); with none set, bot runs the demo"}
	}
	// The clients log nothing a person running doctor needs: every
	// finding is a line of the report.
	d := &doctorEnv{cfg: cfg, log: slog.New(slog.DiscardHandler)}
	// Without credentials of its own (people connect their own accounts
	// only), the bot reads no calendar for CALENDARS, which needs them.
	if cfg.HasServiceAccount() {
		d.source, err = calendar.New(ctx, calendar.Config{
			CredentialsFile: cfg.CredentialsFile,
			CredentialsJSON: cfg.CredentialsJSON,
			Endpoint:        cfg.GoogleEndpoint,
			Impersonate:     cfg.Impersonate,
			Logger:          d.log,
		})
		if err != nil {
			return config.Rejected(err)
		}
	}
	d.slack = notify.New(notify.Config{Token: cfg.SlackToken, APIURL: cfg.SlackAPIURL, Logger: d.log})

	var results []doctorResult
	failed := 0
	if !*asJSON {
		fmt.Fprintln(stdout, "bot doctor: checking the configuration against Slack, Google Calendar, the database and PUBLIC_URL; nothing is changed")
	}
	for _, checks := range doctorChecks {
		for _, c := range checks(d) {
			o := c.run(ctx)
			if ctx.Err() != nil {
				return ctx.Err()
			}
			o.detail, o.fix = oneLine(o.detail), oneLine(o.fix)
			if !o.ok {
				failed++
			}
			results = append(results, doctorResult{Name: c.name, OK: o.ok, Detail: o.detail, Fix: o.fix})
			if !*asJSON {
				fmt.Fprintln(stdout, doctorLine(c.name, o))
			}
		}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(struct {
			OK     bool           `json:"ok"`
			Checks []doctorResult `json:"checks"`
		}{failed == 0, results}); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(stdout, "%d checks: %d passed, %d failed\n", len(results), len(results)-failed, failed)
	}
	if failed > 0 {
		return exitStatus(1)
	}
	return nil
}

// doctorLine is a check's line: ✓ or ✗, what, what was found, the fix.
func doctorLine(name string, o outcome) string {
	if o.ok {
		return "✓ " + name + ": " + o.detail
	}
	line := "✗ " + name + ": " + o.detail
	if o.fix != "" {
		line += "; fix: " + o.fix
	}
	return line
}

// oneLine joins the lines of s (an error can have several: pgx names each
// address it tried) with "; ", each said once.
func oneLine(s string) string {
	var parts []string
	for l := range strings.SplitSeq(s, "\n") {
		if l = strings.TrimSpace(l); l != "" && !slices.Contains(parts, l) {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, "; ")
}
