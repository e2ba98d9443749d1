package agenda_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot/agenda"
)

// A person's Slack profile is read once per ten minutes, whatever the
// passes ask in between: a zone changed in Slack is seen within them. A
// profile Slack does not answer for is not kept.
func TestProfilesAreKeptTenMinutes(t *testing.T) {
	now := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	reads, tz, fail := 0, "Europe/Paris", false
	p := agenda.NewProfiles(func(context.Context, string) (string, string, error) {
		reads++
		if fail {
			return "", "", errors.New("users.info: 503")
		}
		return "alice@example.com", tz, nil
	}, func() time.Time { return now })
	ask := func() agenda.Person {
		t.Helper()
		got, err := p.Person(context.Background(), "U1")
		if err != nil && !fail {
			t.Fatalf("Person = %v", err)
		}
		return got
	}
	ask()
	now = now.Add(9 * time.Minute)
	tz = "America/New_York"
	if got := ask(); got.TZ != "Europe/Paris" || reads != 1 {
		t.Errorf("within ten minutes: Person = %+v after %d reads, want the first reading, read once", got, reads)
	}
	now = now.Add(2 * time.Minute)
	if got := ask(); got.TZ != "America/New_York" || reads != 2 {
		t.Errorf("after ten minutes: Person = %+v after %d reads, want the zone changed in Slack", got, reads)
	}
	now, fail = now.Add(11*time.Minute), true
	ask()
	ask()
	if reads != 4 {
		t.Errorf("reads = %d after two failed reads, want each asked again", reads)
	}
}
