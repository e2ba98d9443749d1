package audit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/meetingbot/meetingbot/audit"
)

// The reminders a stopped connection pauses are named in the report, as
// text and as JSON; a store that cannot list them makes the audit
// incomplete, and says so.
func TestPausedInTheReport(t *testing.T) {
	e := newEnv(t)
	e.cal.srv.AddCalendar(team.CalendarID)
	noon := at(12, 0, 0)
	bob := audit.Paused{Provider: "google", Account: "bob@example.com", UserID: "U0BOB00001", Since: at(9, 30, 0),
		Reason: "Google stopped accepting the access you gave.", Subscriptions: []string{"slack:U0BOB00001"}}
	tests := []struct {
		name   string
		paused audit.PausedReader
		code   int
		text   []string
	}{
		{"one paused", func(context.Context) ([]audit.Paused, error) { return []audit.Paused{bob}, nil }, audit.ExitOK,
			[]string{"PAUSED  the google connection of bob@example.com (Slack user U0BOB00001) stopped at 2026-03-02 09:30:00Z: Google stopped accepting the access you gave; its reminders wait for a reconnection: slack:U0BOB00001"}},
		{"none paused", func(context.Context) ([]audit.Paused, error) { return nil, nil }, audit.ExitOK, nil},
		{"store failing", func(context.Context) ([]audit.Paused, error) { return nil, errors.New("database is locked") }, audit.ExitIncomplete,
			[]string{"paused reminders not listed: read connections: database is locked"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			deps := e.deps(noon)
			deps.Paused = tt.paused
			open := func(context.Context) (audit.Deps, error) { return deps, nil }
			var text, stderr bytes.Buffer
			if code := audit.Command(context.Background(), []string{"--since", "1h"}, open, &text, &stderr); code != tt.code {
				t.Errorf("Command = %d, want %d (stderr %q)", code, tt.code, stderr.String())
			}
			for _, want := range tt.text {
				if !strings.Contains(text.String(), want) {
					t.Errorf("the report lacks %q:\n%s", want, text.String())
				}
			}
			if tt.text == nil && strings.Contains(text.String(), "PAUSED") {
				t.Errorf("the report names paused reminders where none are:\n%s", text.String())
			}
			if stderr.Len() != 0 {
				t.Errorf("stderr = %q, want the paused reminders in the report only", stderr.String())
			}
			var js bytes.Buffer
			audit.Command(context.Background(), []string{"--since", "1h", "--json"}, open, &js, &stderr)
			var r audit.Report
			if err := json.Unmarshal(js.Bytes(), &r); err != nil {
				t.Fatalf("--json printed %q: %v", js.String(), err)
			}
			want, _ := tt.paused(context.Background())
			if len(r.Paused) != len(want) || (len(want) > 0 && (r.Paused[0].Account != want[0].Account || !r.Paused[0].Since.Equal(want[0].Since) ||
				strings.Join(r.Paused[0].Subscriptions, ",") != "slack:U0BOB00001")) {
				t.Errorf("--json paused = %+v, want %+v", r.Paused, want)
			}
			if (r.PausedError != "") != (tt.code == audit.ExitIncomplete) {
				t.Errorf("--json paused_error = %q", r.PausedError)
			}
		})
	}
}
