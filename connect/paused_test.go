package connect_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/connect"
	"github.com/meetingbot/meetingbot/storage/sqlite"
)

// A subscription whose calendar nothing can read is paused, not swept
// (and failed) every tick: after a disconnection or a stopped connection
// without a service account, or where the service account cannot read
// it. Everyone else's is swept.
func TestPausedSubscriptions(t *testing.T) {
	ctx := t.Context()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "bot.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	at := time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		user, account string
		state         meetingbot.ConnectionState
	}{{"U0BOB", "bob@example.com", meetingbot.ConnectionActive}, {"U0CAROL", "carol@example.com", meetingbot.ConnectionBroken}, {"U0ERIN", "erin@example.com", meetingbot.ConnectionBroken}} {
		if err := st.PutConnection(ctx, meetingbot.Connection{Provider: meetingbot.ProviderGoogle, UserID: c.user, Account: c.account,
			Token: []byte("sealed"), State: c.state, CreatedAt: at, UpdatedAt: at}); err != nil {
			t.Fatal(err)
		}
	}
	var made []meetingbot.Subscription
	for cal, by := range map[string]string{"bob@example.com": "U0BOB", "Carol@example.com": "U0CAROL", "dave@example.com": "U0DAVE", "erin@example.com": "U0ERIN"} {
		made = append(made, meetingbot.Subscription{ID: "slack:" + cal, CalendarID: cal, Reader: by, Destination: "U0X", Offsets: []time.Duration{time.Minute}})
	}
	// Someone else's subscription of Bob's calendar is not read with his
	// account: only the bot's credentials may, if it has some.
	made = append(made, meetingbot.Subscription{ID: "slack:bob@example.com in C0X", CalendarID: "bob@example.com", Reader: "U0X", Destination: "C0X", Offsets: []time.Duration{time.Minute}})
	slices.SortFunc(made, func(a, b meetingbot.Subscription) int {
		return strings.Compare(strings.ToLower(a.ID), strings.ToLower(b.ID))
	})
	// The service account reads Carol's calendar (shared with it), not
	// Erin's.
	var checks []string
	access := func(_ context.Context, calendarID string) (string, string, error) {
		checks = append(checks, calendarID)
		if calendarID == "Carol@example.com" || calendarID == "bob@example.com" {
			return "reader", "", nil
		}
		return "", "not shared", meetingbot.Permanent(errors.New("404"))
	}
	tests := []struct {
		name   string
		access connect.Access
		want   []string
	}{
		{"no service account", nil, []string{"slack:bob@example.com"}},
		{"a service account", access, []string{"slack:bob@example.com", "slack:bob@example.com in C0X", "slack:Carol@example.com", "slack:dave@example.com"}},
	}
	for _, tt := range tests {
		pauses := connect.NewPauses(st, tt.access, func() time.Time { return at })
		for range 3 { // every tick: the service account's access is checked once per calendar
			subs, err := pauses.Swept(ctx, made)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, s := range subs {
				ids = append(ids, s.ID)
			}
			if !slices.Equal(ids, tt.want) {
				t.Errorf("%s: swept %v, want %v", tt.name, ids, tt.want)
			}
		}
	}
	if want := []string{"bob@example.com", "Carol@example.com", "erin@example.com"}; !slices.Equal(checks, want) {
		t.Errorf("the service account's access checked for %v, want %v, once each", checks, want)
	}
}
