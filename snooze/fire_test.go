package snooze_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/internal/clock"
	"github.com/meetingbot/meetingbot/snooze"
	"github.com/meetingbot/meetingbot/storage/sqlite"
	"github.com/meetingbot/meetingbot/timer"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// calendarView is a Source: the mirror lists listed, and a read of one
// meeting (events.get) answers get.
type calendarView struct {
	listed []meetingbot.Meeting
	get    func(id string) (meetingbot.Meeting, error)
}

func (v calendarView) Meetings(ctx context.Context, sub meetingbot.Subscription, from, to time.Time) ([]meetingbot.Meeting, error) {
	var out []meetingbot.Meeting
	for _, m := range v.listed {
		if m.Start.After(from) && !m.Start.After(to) {
			out = append(out, m)
		}
	}
	return out, nil
}

func (v calendarView) Meeting(ctx context.Context, sub meetingbot.Subscription, id string) (meetingbot.Meeting, error) {
	return v.get(id)
}

// sentDM is one snooze DM Slack took.
type sentDM struct {
	r     meetingbot.Reminder
	moved bool
}

// dmSlack is a Notifier: it keeps the DMs it took; lost makes the next
// post's answer lost (after Slack took it, when taken), lookupErr makes
// lookups fail.
type dmSlack struct {
	mu        sync.Mutex
	dms       []sentDM
	lost      bool
	taken     bool
	lookupErr error
}

func (s *dmSlack) NotifySnooze(ctx context.Context, r meetingbot.Reminder, of meetingbot.Snooze, moved bool) (meetingbot.Receipt, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lost {
		s.lost = false
		if s.taken {
			s.dms = append(s.dms, sentDM{r, moved})
		}
		return meetingbot.Receipt{}, fmt.Errorf("slack: read tcp: connection reset: %w", meetingbot.ErrUnconfirmed)
	}
	s.dms = append(s.dms, sentDM{r, moved})
	return meetingbot.Receipt{Channel: "D" + r.Subscription.Destination, TS: fmt.Sprint(len(s.dms))}, nil
}

func (s *dmSlack) Delivered(ctx context.Context, r meetingbot.Reminder) (meetingbot.Receipt, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lookupErr != nil {
		return meetingbot.Receipt{}, false, s.lookupErr
	}
	for i, d := range s.dms {
		if d.r.Key == r.Key {
			return meetingbot.Receipt{Channel: "D" + r.Subscription.Destination, TS: fmt.Sprint(i + 1)}, true, nil
		}
	}
	return meetingbot.Receipt{}, false, nil
}

func (s *dmSlack) sent() []sentDM {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]sentDM(nil), s.dms...)
}

// failingLedger is the real ledger, whose reads or records fail while told.
type failingLedger struct {
	*sqlite.Store
	readErr, recordErr error
}

func (l *failingLedger) Entries(ctx context.Context, sub string, keys []string) (map[string]meetingbot.Entry, error) {
	if l.readErr != nil {
		return nil, l.readErr
	}
	return l.Store.Entries(ctx, sub, keys)
}

func (l *failingLedger) Record(ctx context.Context, e meetingbot.Entry, now time.Time) error {
	if l.recordErr != nil {
		return l.recordErr
	}
	return l.Store.Record(ctx, e, now)
}

// fireWorld is a Handler over a real ledger, a calendar and Slack, on a
// fake clock, and the snooze it fires: "at start" of a meeting at 08:20,
// or "in 5 min" at 08:05.
type fireWorld struct {
	c         *clock.Fake
	view      *calendarView
	fakeSlack *dmSlack
	ledger    *failingLedger
	h         *snooze.Handler
	m         meetingbot.Meeting
}

func newFireWorld(t *testing.T) *fireWorld {
	t.Helper()
	store, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "bot.db"))
	require.NoError(t, err)
	t.Cleanup(func() { store.Close() })
	start := t0.Add(20 * time.Minute)
	w := &fireWorld{c: clock.NewFake(t0), fakeSlack: &dmSlack{}, ledger: &failingLedger{Store: store},
		m: meetingbot.Meeting{ID: "ev", Title: "Design review", Start: start, End: start.Add(30 * time.Minute), JoinURL: "https://meet.google.com/abc"}}
	w.view = &calendarView{listed: []meetingbot.Meeting{w.m}, get: func(string) (meetingbot.Meeting, error) { return w.m, nil }}
	w.h, err = snooze.NewHandler(w.view, w.fakeSlack, w.ledger, snooze.Options{Clock: w.c, Logger: discard()})
	require.NoError(t, err)
	return w
}

// timer is the snooze of mode, as stored, taken for its attempt-th time.
func (w *fireWorld) timer(mode meetingbot.SnoozeMode, attempt int) meetingbot.Timer {
	fire := w.m.Start
	if mode == meetingbot.SnoozeIn5m {
		fire = t0.Add(5 * time.Minute)
	}
	tm := meetingbot.Snooze{User: "U1", Mode: mode, Reminder: meetingbot.Key("ev", 10*time.Minute, w.m.Start), Subscription: "team",
		Calendar: "team@example.com", Meeting: w.m}.Timer(fire)
	tm.Attempts = attempt
	return tm
}

// moveTo makes the calendar say the meeting starts at start.
func (w *fireWorld) moveTo(start time.Time) meetingbot.Meeting {
	moved := w.m
	moved.Start, moved.End = start, start.Add(30*time.Minute)
	w.view.listed = []meetingbot.Meeting{moved}
	w.view.get = func(string) (meetingbot.Meeting, error) { return moved, nil }
	return moved
}

func (w *fireWorld) gone(err error) {
	w.view.listed = nil
	w.view.get = func(string) (meetingbot.Meeting, error) { return meetingbot.Meeting{}, err }
}

// TestHandlerFollowsTheMeeting: what a snooze does at its instant, by what
// the calendar says of its meeting then.
func TestHandlerFollowsTheMeeting(t *testing.T) {
	start := t0.Add(20 * time.Minute)
	later := start.Add(time.Hour)
	for _, tt := range []struct {
		name    string
		mode    meetingbot.SnoozeMode
		now     time.Time
		arrange func(w *fireWorld)
		state   meetingbot.TimerState
		code    meetingbot.ReasonCode
		dmStart time.Time // zero: no DM
		moved   bool
	}{
		{"confirmed", meetingbot.SnoozeAtStart, start, func(w *fireWorld) {}, meetingbot.TimerDone, meetingbot.ReasonSent, start, false},
		{"cancelled", meetingbot.SnoozeAtStart, start, func(w *fireWorld) { w.gone(meetingbot.ErrGone) }, meetingbot.TimerDone, meetingbot.ReasonMeetingCancelled, time.Time{}, false},
		{"declined", meetingbot.SnoozeAtStart, start, func(w *fireWorld) { w.gone(meetingbot.ErrDeclined) }, meetingbot.TimerDone, meetingbot.ReasonMeetingCancelled, time.Time{}, false},
		{"moved, at start", meetingbot.SnoozeAtStart, start, func(w *fireWorld) { w.moveTo(later) }, meetingbot.TimerMoved, "", time.Time{}, false},
		{"moved, in 5 min", meetingbot.SnoozeIn5m, t0.Add(5 * time.Minute), func(w *fireWorld) { w.moveTo(later) }, meetingbot.TimerDone, meetingbot.ReasonSent, later, true},
		{"ended", meetingbot.SnoozeAtStart, start.Add(31 * time.Minute), func(w *fireWorld) {}, meetingbot.TimerDone, meetingbot.ReasonMeetingEnded, time.Time{}, false},
		{"calendar unreachable", meetingbot.SnoozeAtStart, start, func(w *fireWorld) {
			w.view.listed = nil
			w.view.get = func(string) (meetingbot.Meeting, error) {
				return meetingbot.Meeting{}, errors.New("googleapi: Error 503")
			}
		}, meetingbot.TimerDone, meetingbot.ReasonSent, start, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := newFireWorld(t)
			tt.arrange(w)
			w.c.Set(tt.now)
			tm := w.timer(tt.mode, 1)
			res := w.h.Fire(t.Context(), tm)
			assert.Equal(t, tt.state, res.State, "Fire(%s) state (%s)", tt.name, res.Reason)
			if tt.state == meetingbot.TimerDone {
				assert.Equal(t, tt.code, res.Code, "Fire(%s) code (%s)", tt.name, res.Reason)
			}
			dms := w.fakeSlack.sent()
			if tt.dmStart.IsZero() {
				assert.Empty(t, dms, "DMs of %s", tt.name)
			} else if assert.Len(t, dms, 1, "DMs of %s", tt.name) {
				assert.Equal(t, tt.dmStart, dms[0].r.Meeting.Start, "the start the DM names")
				assert.Equal(t, tt.moved, dms[0].moved, "the DM says the meeting moved")
				assert.Equal(t, "U1", dms[0].r.Subscription.Destination, "the DM's person")
				assert.Equal(t, tm.Key, dms[0].r.Key, "the DM's key")
				got, err := w.ledger.Entries(t.Context(), meetingbot.SnoozeSubscription("U1"), []string{tm.Key})
				require.NoError(t, err)
				assert.Equal(t, meetingbot.Sent, got[tm.Key].Outcome, "the ledger's outcome of the DM")
			}
			if tt.state == meetingbot.TimerMoved {
				want := meetingbot.SnoozeKey("U1", meetingbot.Key("ev", 10*time.Minute, start), later)
				assert.Equal(t, want, res.Next.Key, "the key the snooze moves to")
				assert.Equal(t, later, res.Next.FireAt, "the instant it moves to")
				assert.Equal(t, later.Add(30*time.Minute), res.Next.Until, "its new bound, the meeting's new end")
			}
		})
	}
}

// TestHandlerPrivateMeetingKeepsWhatTheClickShowed: a private meeting's
// snooze that moves keeps the title and the link its reminder showed,
// nothing more of the calendar's.
func TestHandlerPrivateMeetingKeepsWhatTheClickShowed(t *testing.T) {
	w := newFireWorld(t)
	w.m.Title, w.m.JoinURL = "Private meeting", "" // as a channel's reminder shows it
	moved := w.moveTo(w.m.Start.Add(time.Hour))
	moved.Title, moved.JoinURL, moved.Private = "Salary talk", "https://meet.google.com/secret", true
	w.view.get = func(string) (meetingbot.Meeting, error) { return moved, nil }
	w.c.Set(w.m.Start)
	res := w.h.Fire(t.Context(), w.timer(meetingbot.SnoozeAtStart, 1))
	require.Equal(t, meetingbot.TimerMoved, res.State, res.Reason)
	s, ok := meetingbot.ParseSnooze(res.Next)
	require.True(t, ok)
	assert.Equal(t, "Private meeting", s.Meeting.Title, "the moved snooze's title")
	assert.Empty(t, s.Meeting.JoinURL, "the moved snooze's join link, which its reminder did not show")
	assert.True(t, s.Meeting.Private)
}

// TestHandlerUnconfirmedSendIsLookedUp: a DM whose answer was lost is
// looked up in Slack before any resend: found, it stands (one DM); not
// found, it is sent again (one DM); a lookup that fails waits and asks
// again.
func TestHandlerUnconfirmedSendIsLookedUp(t *testing.T) {
	for _, tt := range []struct {
		name       string
		taken      bool // Slack took the post whose answer was lost
		lookupFail bool // the first lookup fails
		reason     meetingbot.ReasonCode
	}{
		{"taken", true, false, meetingbot.ReasonInterruptedConfirmed},
		{"not taken", false, false, meetingbot.ReasonResent},
		{"taken, lookup failing once", true, true, meetingbot.ReasonInterruptedConfirmed},
	} {
		t.Run(tt.name, func(t *testing.T) {
			w := newFireWorld(t)
			w.c.Set(w.m.Start)
			w.fakeSlack.lost, w.fakeSlack.taken = true, tt.taken
			tm := w.timer(meetingbot.SnoozeAtStart, 1)
			res := w.h.Fire(t.Context(), tm)
			require.Equal(t, meetingbot.TimerPending, res.State, "Fire after a lost answer: %s", res.Reason)
			assert.Equal(t, w.m.Start.Add(5*time.Second), res.Retry, "its retry")
			if tt.lookupFail {
				w.fakeSlack.lookupErr = errors.New("slack: 503 service unavailable")
				w.c.Set(res.Retry)
				tm.Attempts++
				res = w.h.Fire(t.Context(), tm)
				require.Equal(t, meetingbot.TimerPending, res.State, "Fire while the lookup fails: %s", res.Reason)
				w.fakeSlack.lookupErr = nil
			}
			w.c.Set(res.Retry)
			tm.Attempts++
			res = w.h.Fire(t.Context(), tm)
			assert.Equal(t, meetingbot.TimerDone, res.State, res.Reason)
			assert.Equal(t, meetingbot.ReasonSent, res.Code, res.Reason)
			assert.Len(t, w.fakeSlack.sent(), 1, "DMs")
			got, err := w.ledger.Entries(t.Context(), meetingbot.SnoozeSubscription("U1"), []string{tm.Key})
			require.NoError(t, err)
			assert.Equal(t, meetingbot.Sent, got[tm.Key].Outcome)
			assert.Equal(t, tt.reason, got[tm.Key].Code, "how the ledger says it went out")
		})
	}
}

// TestHandlerStoreFailure: a ledger that cannot be read sends nothing and
// retries; one that cannot record a DM Slack took retries, and the retry
// finds the DM in Slack rather than sending it again.
func TestHandlerStoreFailure(t *testing.T) {
	w := newFireWorld(t)
	w.c.Set(w.m.Start)
	tm := w.timer(meetingbot.SnoozeAtStart, 1)
	w.ledger.readErr = errors.New("database is locked")
	res := w.h.Fire(t.Context(), tm)
	assert.Equal(t, meetingbot.TimerPending, res.State, "Fire with the ledger unreadable: %s", res.Reason)
	assert.Empty(t, w.fakeSlack.sent(), "DMs while the ledger cannot be read")
	w.ledger.readErr = nil

	w.ledger.recordErr = errors.New("disk I/O error")
	res = w.h.Fire(t.Context(), tm)
	assert.Equal(t, meetingbot.TimerPending, res.State, "Fire with the ledger not recording: %s", res.Reason)
	require.Len(t, w.fakeSlack.sent(), 1, "DMs")
	w.ledger.recordErr = nil

	w.c.Set(res.Retry)
	tm.Attempts++
	res = w.h.Fire(t.Context(), tm)
	assert.Equal(t, meetingbot.TimerDone, res.State, res.Reason)
	assert.Equal(t, meetingbot.ReasonSent, res.Code)
	assert.Len(t, w.fakeSlack.sent(), 1, "DMs after the retry: the one Slack took, found again")
}

var _ timer.Handler = (*snooze.Handler)(nil)
