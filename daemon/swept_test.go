package daemon

import (
	"context"
	"errors"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/config"
	"github.com/meetingbot/meetingbot/connect"
	"github.com/meetingbot/meetingbot/monitor"
	"github.com/meetingbot/meetingbot/storage/sqlite"
)

// The subscriptions swept with people's accounts on are those made in
// Slack less the paused ones (connect.Pauses), and the monitor judges
// CALENDARS' and those, no more: a paused subscription never makes the
// bot unhealthy.
func TestSweptTellsTheMonitorWhatIsSwept(t *testing.T) {
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
	}{{"U0BOB", "bob@example.com", meetingbot.ConnectionActive}, {"U0CAROL", "carol@example.com", meetingbot.ConnectionBroken}} {
		if err := st.PutConnection(ctx, meetingbot.Connection{Provider: meetingbot.ProviderGoogle, UserID: c.user, Account: c.account,
			Token: []byte("sealed"), State: c.state, CreatedAt: at, UpdatedAt: at}); err != nil {
			t.Fatal(err)
		}
	}
	for cal, by := range map[string]string{"bob@example.com": "U0BOB", "carol@example.com": "U0CAROL", "dave@example.com": "U0DAVE"} {
		if _, _, err := st.AddSlackSubscription(ctx, meetingbot.SlackSubscription{ID: "slack:" + cal, Kind: meetingbot.SlackPersonal,
			CalendarID: cal, Destination: by, Offsets: []time.Duration{time.Minute}, CreatedBy: by, CreatedAt: at}); err != nil {
			t.Fatal(err)
		}
	}
	fixed := []meetingbot.Subscription{{ID: "room@example.com", CalendarID: "room@example.com", Offsets: []time.Duration{time.Minute}}}
	notShared := func(context.Context, string) (string, string, error) {
		return "", "not shared", meetingbot.Permanent(errors.New("404"))
	}
	for _, tt := range []struct {
		name   string
		access connect.Access
		want   string
	}{
		{"no service account", nil, "ok: 2 subscriptions swept"},
		{"a service account that reads no stopped calendar", notShared, "ok: 3 subscriptions swept"},
	} {
		b := &Bot{cfg: config.Config{Subscriptions: fixed, SlackSigningSecret: "secret"}, store: st,
			mon: monitor.New(monitor.Options{Subscriptions: fixed, Interval: time.Minute})}
		subs, err := b.swept(connect.NewPauses(st, tt.access, func() time.Time { return at }))(ctx)
		if err != nil {
			t.Fatal(err)
		}
		rec := httptest.NewRecorder()
		b.mon.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
		if body := rec.Body.String(); !strings.HasPrefix(body, tt.want) {
			t.Errorf("%s: swept %d, /healthz = %q, want %q: CALENDARS' and the swept ones", tt.name, len(subs), body, tt.want)
		}
	}
}
