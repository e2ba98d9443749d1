package notify_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/notify"
	"github.com/meetingbot/meetingbot/notify/slacktest"
	"github.com/meetingbot/meetingbot/storage/sqlite"
)

// calendarOf is one person's calendar as the mirror answers it.
type calendarOf struct {
	mu sync.Mutex
	ms []meetingbot.Meeting
}

func (c *calendarOf) set(ms ...meetingbot.Meeting) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ms = ms
}

// meetings answers the meetings starting in (from, to], the out-of-office
// events only for a subscription that asks for them, as the mirror does.
func (c *calendarOf) meetings(_ context.Context, sub meetingbot.Subscription, from, to time.Time) ([]meetingbot.Meeting, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []meetingbot.Meeting
	for _, m := range c.ms {
		if m.Start.After(from) && !m.Start.After(to) {
			out = append(out, m)
		}
	}
	return meetingbot.ForSubscription(sub, out), nil
}

// statusRig is one person's status setter over a real ledger, Slack
// emulated.
type statusRig struct {
	t     *testing.T
	srv   *slacktest.Server
	cal   *calendarOf
	store *sqlite.Store
	set   *notify.Status
	sub   meetingbot.Subscription
}

func newStatusRig(t *testing.T) *statusRig {
	t.Helper()
	srv := slacktest.NewServer()
	t.Cleanup(srv.Close)
	tok := userToken(t, srv, "U1")
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "bot.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	r := &statusRig{t: t, srv: srv, cal: &calendarOf{}, store: st,
		sub: meetingbot.Subscription{ID: "status:U1", Kind: meetingbot.KindStatus, Destination: meetingbot.StatusDestination("U1"), Offsets: []time.Duration{0}}}
	r.set = notify.NewStatus(notify.StatusConfig{
		APIURL: srv.URL(), Token: func(context.Context, string) (string, error) { return tok, nil },
		Meetings: r.cal.meetings, Ledger: st,
		Sleep: func(context.Context, time.Duration) error { return nil },
	})
	return r
}

// notify sets m's status at its start, as the scheduler does, and records
// what Slack answered in the ledger.
func (r *statusRig) notify(m meetingbot.Meeting) meetingbot.Receipt {
	r.t.Helper()
	rem := meetingbot.Reminder{Key: meetingbot.Key(m.ID, 0, m.Start), Subscription: r.sub, Meeting: m, TriggerAt: m.Start}
	e := meetingbot.Entry{Subscription: r.sub.ID, Key: rem.Key, EventID: m.ID, Start: m.Start, TriggerAt: m.Start}
	if _, _, err := r.store.Claim(r.t.Context(), e, m.Start, m.Start.Add(time.Minute)); err != nil {
		r.t.Fatal(err)
	}
	receipt, err := r.set.Notify(r.t.Context(), rem)
	if err != nil {
		r.t.Fatalf("Notify(%s) = %v", m.ID, err)
	}
	e.Outcome, e.Channel, e.MessageTS = meetingbot.Sent, receipt.Channel, receipt.TS
	if err := r.store.Record(r.t.Context(), e, m.Start); err != nil {
		r.t.Fatal(err)
	}
	return receipt
}

// Slack's own "In a meeting" preset has the bot's emoji and text: a
// person who set it themselves keeps it, whatever its expiration, at the
// next meeting's start and after a meeting is cancelled; a status the bot
// set (its expiration in the ledger) is the bot's to move and clear.
func TestStatusPresetIsThePersons(t *testing.T) {
	now := time.Now().Truncate(time.Second)
	m := meetingbot.Meeting{ID: "m", Title: "Review", Start: now, End: now.Add(30 * time.Minute)}
	for _, preset := range []slacktest.Status{
		{Text: notify.StatusText, Emoji: notify.StatusEmoji, Expiration: now.Add(time.Hour + 17*time.Second)}, // "1 hour"
		{Text: notify.StatusText, Emoji: notify.StatusEmoji},                                                  // "Don't clear"
		{Text: notify.StatusText, Emoji: notify.StatusEmoji, Expiration: m.End.Add(time.Minute)},              // ends near the meeting, not with it
	} {
		r := newStatusRig(t)
		r.srv.SetStatus("U1", preset)
		r.cal.set(m)
		if rc := r.notify(m); rc.TS != "own-status-kept" {
			t.Errorf("Notify over the preset %+v: receipt %q, want the person's own status kept", preset, rc.TS)
		}
		r.cal.set() // cancelled
		if what, _, err := r.set.Reconsider(t.Context(), r.sub, now.Add(time.Minute)); what != notify.Left || err != nil {
			t.Errorf("Reconsider of the preset %+v after a cancel = %s, %v; want left", preset, what, err)
		}
		if got := r.srv.StatusOf("U1"); got != preset {
			t.Errorf("the person's preset %+v became %+v", preset, got)
		}
	}

	// The bot's own: set at the start, recorded, cleared after a cancel.
	r := newStatusRig(t)
	r.cal.set(m)
	r.notify(m)
	if got := r.srv.StatusOf("U1"); got.Emoji != notify.StatusEmoji || !got.Expiration.Equal(m.End) {
		t.Fatalf("status = %+v, want the bot's until %v", got, m.End)
	}
	r.cal.set()
	if what, _, err := r.set.Reconsider(t.Context(), r.sub, now.Add(time.Minute)); what != notify.Cleared || err != nil {
		t.Errorf("Reconsider of the bot's status after a cancel = %s, %v; want cleared", what, err)
	}
	if got := r.srv.StatusOf("U1"); got != (slacktest.Status{}) {
		t.Errorf("status after a cancel = %+v, want cleared", got)
	}
}

// A meeting extended, declined, moved or cut short while its status
// shows: the status follows what the calendar says.
func TestStatusFollowsItsMeeting(t *testing.T) {
	now := time.Now().Truncate(time.Second)
	m := meetingbot.Meeting{ID: "m", Title: "Review", Start: now, End: now.Add(30 * time.Minute)}
	later := now.Add(2 * time.Minute)
	tests := []struct {
		name string
		now  []meetingbot.Meeting // the calendar after the change
		what string
		want time.Time // the expiration shown after, zero for cleared
	}{
		{"extended", []meetingbot.Meeting{{ID: "m", Title: "Review", Start: now, End: now.Add(time.Hour)}}, notify.Moved, now.Add(time.Hour)},
		{"cut short", []meetingbot.Meeting{{ID: "m", Title: "Review", Start: now, End: now.Add(10 * time.Minute)}}, notify.Moved, now.Add(10 * time.Minute)},
		{"declined", nil, notify.Cleared, time.Time{}},
		{"moved to the afternoon", []meetingbot.Meeting{{ID: "m", Title: "Review", Start: now.Add(5 * time.Hour), End: now.Add(6 * time.Hour)}}, notify.Cleared, time.Time{}},
		{"moved earlier, still on", []meetingbot.Meeting{{ID: "m", Title: "Review", Start: now.Add(-10 * time.Minute), End: now.Add(20 * time.Minute)}}, notify.Moved, now.Add(20 * time.Minute)},
		{"unchanged", []meetingbot.Meeting{m}, notify.Kept, m.End},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newStatusRig(t)
			r.cal.set(m)
			r.notify(m)
			r.cal.set(tt.now...)
			w, err := r.set.Want(t.Context(), r.sub, later)
			if err != nil {
				t.Fatal(err)
			}
			if w.Allows(m.End) != (tt.what == notify.Kept) {
				t.Errorf("Want(%s).Allows(%v) = %v, want %v", tt.name, m.End, w.Allows(m.End), tt.what == notify.Kept)
			}
			what, until, err := r.set.Reconsider(t.Context(), r.sub, later)
			if what != tt.what || err != nil || !until.Equal(tt.want) {
				t.Errorf("Reconsider(%s) = %s until %v, %v; want %s until %v", tt.name, what, until, err, tt.what, tt.want)
			}
			if got := r.srv.StatusOf("U1"); !got.Expiration.Equal(tt.want) || (tt.want.IsZero() != (got == slacktest.Status{})) {
				t.Errorf("status after %s = %+v, want until %v", tt.name, got, tt.want)
			}
		})
	}
}

// An out-of-office event (given only to a person who turned it on) sets
// "Out of office" until its end; a meeting during it leaves it showing,
// and one that outlasts it is "In a meeting" until its own end.
func TestStatusOutOfOffice(t *testing.T) {
	now := time.Now().Truncate(time.Second)
	r := newStatusRig(t)
	r.sub.OutOfOffice = true
	away := meetingbot.Meeting{ID: "away", Title: "Dentist", Start: now, End: now.Add(2 * time.Hour), OutOfOffice: true}
	during := meetingbot.Meeting{ID: "during", Title: "Call", Start: now.Add(time.Hour), End: now.Add(90 * time.Minute)}
	after := meetingbot.Meeting{ID: "after", Title: "Late call", Start: now.Add(110 * time.Minute), End: now.Add(3 * time.Hour)}
	r.cal.set(away, during, after)
	r.notify(away)
	want := slacktest.Status{Text: notify.OutOfOfficeText, Emoji: notify.OutOfOfficeEmoji, Expiration: away.End}
	if got := r.srv.StatusOf("U1"); got != want {
		t.Fatalf("status during an out-of-office event = %+v, want %+v (never its title)", got, want)
	}
	r.notify(during)
	if got := r.srv.StatusOf("U1"); got != want {
		t.Errorf("status at a meeting during it = %+v, want %+v still", got, want)
	}
	if w, err := r.set.Want(t.Context(), r.sub, during.Start.Add(time.Minute)); err != nil || !w.Allows(away.End) {
		t.Errorf("Want during both = %v, %v; want the out-of-office end allowed", w.Until, err)
	}
	r.notify(after)
	if got := r.srv.StatusOf("U1"); got.Text != notify.StatusText || !got.Expiration.Equal(after.End) {
		t.Errorf("status at a meeting outlasting it = %+v, want In a meeting until %v", got, after.End)
	}
}

// The turn Pace waited for is the send's, whichever of its reminders the
// status is set for: the set waits no second turn.
func TestPacedTurnIsTheSends(t *testing.T) {
	now := time.Now().Truncate(time.Second)
	r := newStatusRig(t)
	r.sub.OutOfOffice = true
	var waits []time.Duration
	var mu sync.Mutex
	tok := r.srv.GrantUserToken("U1")
	set := notify.NewStatus(notify.StatusConfig{
		APIURL: r.srv.URL(), Token: func(context.Context, string) (string, error) { return tok, nil },
		Meetings: r.cal.meetings, Ledger: r.store, PerMinute: 1, // one turn a minute
		Now: func() time.Time { return now },
		Sleep: func(_ context.Context, d time.Duration) error {
			mu.Lock()
			defer mu.Unlock()
			if d > 0 {
				waits = append(waits, d)
			}
			return nil
		},
	})
	away := meetingbot.Meeting{ID: "away", Start: now, End: now.Add(time.Hour), OutOfOffice: true}
	call := meetingbot.Meeting{ID: "call", Title: "Call", Start: now, End: now.Add(30 * time.Minute)}
	r.cal.set(away, call)
	rs := []meetingbot.Reminder{
		{Key: meetingbot.Key(away.ID, 0, now), Subscription: r.sub, Meeting: away},
		{Key: meetingbot.Key(call.ID, 0, now), Subscription: r.sub, Meeting: call},
	}
	if err := set.Pace(t.Context(), rs[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := set.NotifyDigest(t.Context(), rs); err != nil {
		t.Fatal(err)
	}
	if got := r.srv.StatusOf("U1"); got.Text != notify.StatusText {
		t.Errorf("status = %+v, want In a meeting", got)
	}
	if len(waits) != 0 {
		t.Errorf("waits for the pace = %v, want none: the turn Pace waited for is the digest's", waits)
	}
}
