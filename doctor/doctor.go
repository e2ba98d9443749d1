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
	// waiting marks a check that cannot pass yet and is not failing:
	// PUBLIC_URL before the bot's first deploy. It is not counted as
	// failed.
	waiting bool
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

func wait(detail, fix string) outcome { return outcome{waiting: true, detail: detail, fix: fix} }

// doctorEnv is what the checks share: the configuration, and the clients
// the bot itself would use, built once.
type doctorEnv struct {
	cfg    config.Config
	log    *slog.Logger
	source *calendar.Source
	slack  *notify.Slack
	// slackState is set by the Slack token's check: the checks that need the
	// token skip, and say why, unless Slack took it.
	slackState slackState
}

// slackState is what the Slack token's check found.
type slackState int

const (
	slackUnchecked slackState = iota
	slackTook                 // auth.test answered ok
	slackRefused              // Slack answered, and refused the token
	slackSilent               // Slack did not answer (network, DNS, timeout)
)

// skipped is the outcome of a check that needs the token when the token's
// check did not pass: whether Slack refused it or did not answer, which
// have different fixes.
func (d *doctorEnv) skipped() outcome {
	if d.slackState == slackSilent {
		return fail("not checked: Slack did not answer at "+d.cfg.SlackAPIURL, "check the network and SLACK_API_URL, then run bot doctor again")
	}
	return fail("not checked: Slack refused the token", "fix the Slack token first")
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
	Name string `json:"name"`
	OK   bool   `json:"ok"`
	// Waiting is a check that waits for the first deploy: not ok, and
	// not failed.
	Waiting bool   `json:"waiting,omitempty"`
	Detail  string `json:"detail"`
	Fix     string `json:"fix,omitempty"`
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
		fmt.Fprintln(out, summary(results, failed))
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
			if !o.ok && !o.waiting {
				failed++
			}
			results = append(results, doctorResult{Name: c.name, OK: o.ok, Waiting: o.waiting, Detail: o.detail, Fix: o.fix})
			if !asJSON {
				fmt.Fprintln(out, doctorLine(c.name, o))
			}
		}
	}
	return results, failed, nil
}

// summary is the last line: how many checks passed, failed and wait.
func summary(results []doctorResult, failed int) string {
	waiting := 0
	for _, r := range results {
		if r.Waiting {
			waiting++
		}
	}
	line := fmt.Sprintf("%d checks: %d passed, %d failed", len(results), len(results)-failed-waiting, failed)
	if waiting > 0 {
		line += fmt.Sprintf(", %d waiting for the first deploy", waiting)
	}
	return line
}

// doctorLine is a check's line: ✓, ✗ or … (waiting), what, what was
// found, the fix (or, waiting, what comes next).
func doctorLine(name string, o outcome) string {
	if o.ok {
		return "✓ " + name + ": " + o.detail
	}
	mark := "✗ "
	if o.waiting {
		mark = "… "
	}
	line := mark + name + ": " + o.detail
	switch {
	case o.fix != "" && o.waiting:
		line += "; then: " + o.fix
	case o.fix != "":
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
