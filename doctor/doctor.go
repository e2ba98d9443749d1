// Package doctor is bot doctor: it checks a configuration against the
// real services before the bot relies on it. What start-up cannot see (a
// scope missing from the Slack app, a calendar the credentials cannot
// read, a destination Slack refuses, a database that cannot be written, a
// PUBLIC_URL nobody outside reaches) shows there, one line each with the
// fix, instead of when a reminder fails. It reads the same configuration
// as the bot and changes nothing.
package doctor

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"

	"github.com/meetingbot/meetingbot/calendar"
	"github.com/meetingbot/meetingbot/config"
	"github.com/meetingbot/meetingbot/notify"
)

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

// Run checks cfg, one line each on out (or, with asJSON, a JSON report),
// changing nothing, and returns how many checks failed. Its error is a
// client's refusal of cfg (config.Rejected) or ctx's when ctx ended.
func Run(ctx context.Context, cfg config.Config, out io.Writer, asJSON bool) (int, error) {
	// The clients log nothing a person running doctor needs: every
	// finding is a line of the report.
	d := &doctorEnv{cfg: cfg, log: slog.New(slog.DiscardHandler)}
	// Without credentials of its own (people connect their own accounts
	// only), the bot reads no calendar for CALENDARS, which needs them.
	if cfg.HasServiceAccount() {
		var err error
		d.source, err = calendar.New(ctx, calendar.Config{
			CredentialsFile: cfg.CredentialsFile,
			CredentialsJSON: cfg.CredentialsJSON,
			Endpoint:        cfg.GoogleEndpoint,
			Impersonate:     cfg.Impersonate,
			Logger:          d.log,
		})
		if err != nil {
			return 0, config.Rejected(err)
		}
	}
	d.slack = notify.New(notify.Config{Token: cfg.SlackToken, APIURL: cfg.SlackAPIURL, Logger: d.log})

	if !asJSON {
		fmt.Fprintln(out, "bot doctor: checking the configuration against Slack, Google Calendar, the database and PUBLIC_URL; nothing is changed")
	}
	results, failed, err := d.run(ctx, out, asJSON)
	if err != nil {
		return failed, err
	}
	if !asJSON {
		fmt.Fprintf(out, "%d checks: %d passed, %d failed\n", len(results), len(results)-failed, failed)
		return failed, nil
	}
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return failed, enc.Encode(struct {
		OK     bool           `json:"ok"`
		Checks []doctorResult `json:"checks"`
	}{failed == 0, results})
}

// run runs every check in order, each line on out as it comes unless
// asJSON, and returns the results and how many failed.
func (d *doctorEnv) run(ctx context.Context, out io.Writer, asJSON bool) ([]doctorResult, int, error) {
	var results []doctorResult
	failed := 0
	for _, checks := range doctorChecks {
		for _, c := range checks(d) {
			o := c.run(ctx)
			if ctx.Err() != nil {
				return results, failed, ctx.Err()
			}
			o.detail, o.fix = oneLine(o.detail), oneLine(o.fix)
			if !o.ok {
				failed++
			}
			results = append(results, doctorResult{Name: c.name, OK: o.ok, Detail: o.detail, Fix: o.fix})
			if !asJSON {
				fmt.Fprintln(out, doctorLine(c.name, o))
			}
		}
	}
	return results, failed, nil
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
