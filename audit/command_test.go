package audit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/audit"
	"github.com/meetingbot/meetingbot/calendar/calendartest"
)

func (e *env) deps(now time.Time) audit.Deps {
	return audit.Deps{
		Subscriptions: []meetingbot.Subscription{team}, Source: e.cal.src, Ledger: e.store, Slack: e.slack,
		Interval: 30 * time.Second, Now: func() time.Time { return now },
	}
}

func TestCommand(t *testing.T) {
	seeded := seedDay(t)
	clean := newEnv(t)
	m := meeting("evt-ok", "ok", at(9, 0, 0))
	clean.cal.put(team.CalendarID, calendartest.NewEvent(m.ID, m.Title, m.Start, m.End))
	clean.deliver(reminder(team, m, 10*time.Minute), at(8, 50, 1))
	broken := newEnv(t)

	noon := at(12, 0, 0)
	open := func(d audit.Deps) func(context.Context) (audit.Deps, error) {
		return func(context.Context) (audit.Deps, error) { return d, nil }
	}
	brokenDeps := broken.deps(noon)
	brokenDeps.Source = failingSource{}
	tests := []struct {
		name   string
		args   []string
		open   func(context.Context) (audit.Deps, error)
		code   int
		stdout string // a substring of stdout, "" for none expected
		stderr string // a substring of stderr, "" for empty stderr
	}{
		{"problems found", []string{"--from", "2026-03-02T08:00:00Z", "--to", "2026-03-02T12:00:00Z"}, open(seeded.deps(noon)), 1, "MISSING", ""},
		{"problems in the default 24h", nil, open(seeded.deps(noon)), 1, "DUPLICATED", ""},
		{"clean", []string{"--since", "4h"}, open(clean.deps(noon)), 0, "Every expected reminder was delivered once.", ""},
		{"clean before the problems", []string{"--to", "2026-03-02T08:30:00Z"}, open(seeded.deps(noon)), 0, "TOTAL", ""},
		{"calendar unreadable", []string{"--since", "1h"}, open(brokenDeps), 3, "not audited", "not audited"},
		{"help", []string{"-h"}, nil, 0, "Usage: bot audit", ""},
		{"unknown flag", []string{"--bogus"}, nil, 2, "", "flag provided but not defined: -bogus"},
		{"since and from", []string{"--since", "2h", "--from", "2026-03-02T08:00:00Z"}, nil, 2, "", "--since and --from both set"},
		{"bad since", []string{"--since", "-1h"}, nil, 2, "", "want a positive duration"},
		{"bad instant", []string{"--from", "2026-03-02 08:00"}, nil, 2, "", "want an RFC 3339 instant"},
		{"from after to", []string{"--from", "2026-03-02T12:00:00Z", "--to", "2026-03-02T08:00:00Z"}, open(seeded.deps(noon)), 2, "", "is not before --to"},
		{"stray argument", []string{"yesterday"}, nil, 2, "", `unexpected argument "yesterday"`},
		{"configuration", nil, func(context.Context) (audit.Deps, error) {
			return audit.Deps{}, errors.New("CALENDARS: required, e.g. CALENDARS=alice@example.com")
		}, 2, "", "CALENDARS: required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			opener := tt.open
			if opener == nil {
				opener = func(context.Context) (audit.Deps, error) {
					t.Errorf("Command(%q) opened the configuration; flags should be checked first", tt.args)
					return audit.Deps{}, errors.New("not expected")
				}
			}
			code := audit.Command(context.Background(), tt.args, opener, &stdout, &stderr)
			if code != tt.code {
				t.Errorf("Command(%q) = %d, want %d (stderr %q)", tt.args, code, tt.code, stderr.String())
			}
			if !strings.Contains(stdout.String(), tt.stdout) || (tt.stdout == "") != (stdout.Len() == 0) {
				t.Errorf("Command(%q) stdout = %q, want it to contain %q", tt.args, stdout.String(), tt.stdout)
			}
			if !strings.Contains(stderr.String(), tt.stderr) || (tt.stderr == "") != (stderr.Len() == 0) {
				t.Errorf("Command(%q) stderr = %q, want it to contain %q", tt.args, stderr.String(), tt.stderr)
			}
			if n := strings.Count(stderr.String(), "\n"); tt.code == 2 && n != 1 {
				t.Errorf("Command(%q) wrote %d lines to stderr, want one clear line", tt.args, n)
			}
		})
	}
}

func TestCommandJSON(t *testing.T) {
	e := seedDay(t)
	noon := at(12, 0, 0)
	var stdout, stderr bytes.Buffer
	code := audit.Command(context.Background(), []string{"--json", "--since", "4h"},
		func(context.Context) (audit.Deps, error) { return e.deps(noon), nil }, &stdout, &stderr)
	if code != audit.ExitProblems {
		t.Fatalf("Command(--json) = %d, want %d (stderr %q)", code, audit.ExitProblems, stderr.String())
	}
	var got audit.Report
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("Command(--json) printed %q: %v", stdout.String(), err)
	}
	want, err := audit.Reconcile(context.Background(), e.input(at(8, 0, 0), noon, noon))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Command(--json) decoded = %+v\nwant %+v", got, want)
	}
	for _, field := range []string{`"offset": "10m"`, `"missing": [`, `"reason": "skipped: first taken up at 2026-03-02 09:03:00Z, 13m0s after its trigger and 3m0s after the meeting started`, `"counted_from": "slack"`} {
		if !strings.Contains(stdout.String(), field) {
			t.Errorf("Command(--json) output lacks %s", field)
		}
	}
	again, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	first, _ := json.Marshal(want)
	if !bytes.Equal(again, first) {
		t.Errorf("JSON round trip changed the report:\n%s\nwant\n%s", again, first)
	}
}

func TestWriteTable(t *testing.T) {
	e := seedDay(t)
	r, err := audit.Reconcile(context.Background(), e.input(at(8, 0, 0), at(12, 0, 0), at(12, 0, 0)))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := r.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	t.Logf("\n%s", out)
	for _, line := range []string{
		"SUBSCRIPTION  COUNTED FROM  EXPECTED  DELIVERED  MISSING  DUPLICATED  LATE  SUPERSEDED  UNEXPECTED  PENDING",
		"team          slack         8         3          3        1           1     2           1           1",
		"MISSING     team          2026-03-02 09:00:00Z  10m     2026-03-02 08:50:00Z  down (evt-down)",
		"the meeting moved to 2026-03-02 11:00:00Z; message edited: moved to 2026-03-02 11:00:00Z\n",
		"cancelled, declined, or moved outside the audited window; message not edited\n",
	} {
		if !strings.Contains(out, line) {
			t.Errorf("WriteTable() lacks the line\n%s", line)
		}
	}
}
