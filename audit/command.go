package audit

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"
)

// Exit statuses of Command.
const (
	ExitOK         = 0 // every expected reminder delivered, none twice
	ExitProblems   = 1 // something is missing or duplicated
	ExitUsage      = 2 // bad flags, or the configuration could not be loaded
	ExitIncomplete = 3 // no problem found, but a calendar or the ledger could not be read
)

// Command runs `bot audit` with args, the arguments after "audit":
//
//	--since 24h            audit the reminders due in the last 24 hours (default)
//	--from T [--to T]      audit [from, to) instead; RFC 3339 instants, --to defaults to now
//	--json                 print the report as JSON instead of a table
//
// It parses the flags before calling open, so a bad flag exits at once
// without touching the configuration; open builds the dependencies (the
// caller closes what open opened after Command returns). It prints the
// report to stdout, anything else to stderr, and returns the exit status:
// ExitOK, ExitProblems, ExitUsage or ExitIncomplete.
func Command(ctx context.Context, args []string, open func(context.Context) (Deps, error), stdout, stderr io.Writer) int {
	a, err := parseArgs(args)
	if errors.Is(err, flag.ErrHelp) {
		usage(stdout)
		return ExitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "bot audit: %v (see bot audit -h)\n", err)
		return ExitUsage
	}
	deps, err := open(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "bot audit: %v\n", err)
		return ExitUsage
	}
	if deps.Now == nil {
		deps.Now = time.Now
	}
	now := deps.Now().UTC()
	deps.Now = func() time.Time { return now } // one instant for the window and the audit
	in := Input{Deps: deps}
	in.From, in.To = a.window(now)
	if !in.From.Before(in.To) {
		fmt.Fprintf(stderr, "bot audit: --from %s is not before --to %s (see bot audit -h)\n", in.From.Format(time.RFC3339), in.To.Format(time.RFC3339))
		return ExitUsage
	}
	r, err := Reconcile(ctx, in)
	if err != nil {
		fmt.Fprintf(stderr, "bot audit: %v\n", err)
		return ExitIncomplete
	}
	for _, s := range r.Subscriptions {
		if s.Error != "" {
			fmt.Fprintf(stderr, "bot audit: subscription %q not audited: %s\n", s.Subscription, s.Error)
		}
		if s.SlackError != "" {
			fmt.Fprintf(stderr, "bot audit: subscription %q: Slack history unreadable, counted from the ledger: %s\n", s.Subscription, s.SlackError)
		}
	}
	if a.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(r)
	} else {
		err = r.WriteTable(stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "bot audit: %v\n", err)
		return ExitIncomplete
	}
	switch {
	case r.Problems():
		return ExitProblems
	case r.Incomplete():
		return ExitIncomplete
	}
	return ExitOK
}

// args are the parsed flags of the command.
type args struct {
	since    time.Duration
	from, to time.Time
	json     bool
}

// window returns the period [from, to) the flags name, as seen at now.
func (a args) window(now time.Time) (from, to time.Time) {
	to = now
	if !a.to.IsZero() {
		to = a.to
	}
	if !a.from.IsZero() {
		return a.from, to
	}
	return to.Add(-a.since), to
}

func parseArgs(list []string) (args, error) {
	var a args
	var from, to string
	fs := flag.NewFlagSet("bot audit", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported in one line by Command
	fs.DurationVar(&a.since, "since", 24*time.Hour, "audit the reminders due in this span before --to (or now)")
	fs.StringVar(&from, "from", "", "start of the period, an RFC 3339 instant")
	fs.StringVar(&to, "to", "", "end of the period (excluded), an RFC 3339 instant; now by default")
	fs.BoolVar(&a.json, "json", false, "print the report as JSON")
	if err := fs.Parse(list); err != nil {
		return args{}, err
	}
	if fs.NArg() > 0 {
		return args{}, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if set["since"] && set["from"] {
		return args{}, errors.New("--since and --from both set: give one of them")
	}
	if a.since <= 0 {
		return args{}, fmt.Errorf("--since %v: want a positive duration such as 2h", a.since)
	}
	var err error
	if a.from, err = instant("from", from); err != nil {
		return args{}, err
	}
	if a.to, err = instant("to", to); err != nil {
		return args{}, err
	}
	return a, nil
}

func instant(name, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return time.Time{}, fmt.Errorf("--%s %q: want an RFC 3339 instant such as 2026-03-02T09:00:00Z", name, v)
	}
	return t.UTC(), nil
}

func usage(w io.Writer) {
	fmt.Fprint(w, `Usage: bot audit [--since 24h | --from T [--to T]] [--json]

Compares, per meeting and offset, the reminders that were due with the ones
delivered (Slack history, or the ledger when history cannot be read).
Configuration comes from the same environment variables as the bot.

  --since D   audit reminders due in the last D (default 24h)
  --from T    audit from instant T (RFC 3339, e.g. 2026-03-02T09:00:00Z)
  --to T      up to instant T, excluded (default now)
  --json      print JSON instead of a table

Exit status: 0 all delivered once, 1 missing or duplicated reminders,
2 bad flags or configuration, 3 a calendar or the ledger could not be read.
`)
}
