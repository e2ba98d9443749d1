package feed_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/feed"
	"github.com/meetingbot/meetingbot/internal/clock"
	"github.com/meetingbot/meetingbot/storage/sqlite"
)

var t0 = time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)

const team = "team@group.calendar.google.com"

var channel = meetingbot.Subscription{ID: "slack:team=C0TEAM001", CalendarID: team, Destination: "C0TEAM001", FromSlack: true}

// calendar is the mirror's reading of the team calendar, as the mirror
// answers: the events starting in (from, to], and one event by ID (an
// ErrGone for one not there).
type calendar struct {
	mu     sync.Mutex
	events map[string]meetingbot.Meeting
	gets   int
}

func (c *calendar) Meetings(_ context.Context, _ meetingbot.Subscription, from, to time.Time) ([]meetingbot.Meeting, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []meetingbot.Meeting
	for _, m := range c.events {
		if m.Start.After(from) && !m.Start.After(to) {
			out = append(out, m)
		}
	}
	slices.SortFunc(out, func(a, b meetingbot.Meeting) int { return a.Start.Compare(b.Start) })
	return out, nil
}

func (c *calendar) Meeting(_ context.Context, _ meetingbot.Subscription, id string) (meetingbot.Meeting, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gets++
	m, ok := c.events[id]
	if !ok {
		return meetingbot.Meeting{}, fmt.Errorf("event %s: %w", id, meetingbot.ErrGone)
	}
	return m, nil
}

func (c *calendar) put(ms ...meetingbot.Meeting) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range ms {
		c.events[m.ID] = m
	}
}

func (c *calendar) remove(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.events, id)
}

// channelPosts records what the channel was told, one message each.
type channelPosts struct {
	mu       sync.Mutex
	messages [][]meetingbot.Notice
	fail     error // the next post's error, once
}

func (p *channelPosts) NotifyChange(ctx context.Context, n meetingbot.Notice) (meetingbot.Receipt, error) {
	return p.NotifyChanges(ctx, []meetingbot.Notice{n})
}

func (p *channelPosts) NotifyChanges(_ context.Context, ns []meetingbot.Notice) (meetingbot.Receipt, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.fail; err != nil {
		p.fail = nil
		if err == meetingbot.ErrUnconfirmed {
			p.messages = append(p.messages, ns) // Slack took it; the answer was lost
		}
		return meetingbot.Receipt{}, err
	}
	p.messages = append(p.messages, ns)
	return meetingbot.Receipt{Channel: "C0TEAM001", TS: fmt.Sprintf("%d.000100", len(p.messages))}, nil
}

func (p *channelPosts) Delivered(_ context.Context, r meetingbot.Reminder) (meetingbot.Receipt, bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, msg := range p.messages {
		for _, n := range msg {
			if n.Key == r.Key {
				return meetingbot.Receipt{Channel: "C0TEAM001", TS: fmt.Sprintf("%d.000100", i+1)}, true, nil
			}
		}
	}
	return meetingbot.Receipt{}, false, nil
}

// told returns each message as its notices' "change title" lines.
func (p *channelPosts) told() [][]string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out [][]string
	for _, msg := range p.messages {
		var lines []string
		for _, n := range msg {
			lines = append(lines, fmt.Sprintf("%v %s", n.Changes, n.Meeting().Title))
		}
		out = append(out, lines)
	}
	return out
}

type world struct {
	cal   *calendar
	posts *channelPosts
	clk   *clock.Fake
	path  string
	since time.Time
}

func newWorld(t *testing.T) *world {
	return &world{cal: &calendar{events: map[string]meetingbot.Meeting{}}, posts: &channelPosts{}, clk: clock.NewFake(t0),
		path: filepath.Join(t.TempDir(), "bot.db"), since: t0.Add(-time.Hour)}
}

// engine is one process of the bot on the world's database.
func (w *world) engine(t *testing.T) *feed.Engine {
	t.Helper()
	return w.engineOn(t, func(s *sqlite.Store) feed.Ledger { return s })
}

// engineOn is one process of the bot on the world's database whose
// ledger is ledger(the store).
func (w *world) engineOn(t *testing.T, ledger func(*sqlite.Store) feed.Ledger) *feed.Engine {
	t.Helper()
	s, err := sqlite.Open(t.Context(), w.path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	subs := func(context.Context) ([]feed.Followed, error) {
		return []feed.Followed{{Subscription: channel, Since: w.since}}, nil
	}
	e, err := feed.New(subs, w.cal, s, w.posts, ledger(s), feed.Options{Interval: 30 * time.Second, Clock: w.clk})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func (w *world) tick(t *testing.T, e *feed.Engine) {
	t.Helper()
	if err := e.Tick(t.Context()); err != nil {
		t.Fatalf("Tick at %v: %v", w.clk.Now(), err)
	}
}

// event is a team event starting at start for an hour, last changed at
// updated.
func event(id, title string, start, updated time.Time) meetingbot.Meeting {
	return meetingbot.Meeting{ID: id, Title: title, Start: start, End: start.Add(time.Hour), Updated: updated,
		Location: "Room 1", Creator: "Bob", CreatorEmail: "bob@example.com"}
}

func wantTold(t *testing.T, w *world, want ...[]string) {
	t.Helper()
	got := w.posts.told()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("messages = %v, want %v", got, want)
	}
}

// TestEachKindOfChangeIsToldOnce: after a first reading that tells
// nothing, an event added, moved, renamed, re-placed and cancelled is
// each told once, whatever the passes, restarts and processes that see
// it again.
func TestEachKindOfChangeIsToldOnce(t *testing.T) {
	w := newWorld(t)
	standup := event("standup", "Standup", t0.Add(2*time.Hour), t0.Add(-24*time.Hour))
	w.cal.put(standup)
	e := w.engine(t)
	w.tick(t, e)
	wantTold(t, w) // the first reading is the agenda's to tell

	step := func(change func(now time.Time)) {
		w.clk.Advance(time.Minute)
		change(w.clk.Now())
		w.clk.Advance(2 * time.Minute) // past the settle time
		w.tick(t, e)
		w.tick(t, e)
		w.tick(t, w.engine(t)) // a restart, or another replica
	}
	step(func(now time.Time) { w.cal.put(event("review", "Review", t0.Add(5*time.Hour), now)) })
	step(func(now time.Time) {
		m := standup
		m.Start, m.End, m.Updated = m.Start.Add(time.Hour), m.End.Add(time.Hour), now
		w.cal.put(m)
		standup = m
	})
	step(func(now time.Time) { standup.Title, standup.Updated = "Daily standup", now; w.cal.put(standup) })
	step(func(now time.Time) { standup.Location, standup.Updated = "Room 2", now; w.cal.put(standup) })
	step(func(time.Time) { w.cal.remove("review") })
	wantTold(t, w, []string{"[added] Review"}, []string{"[moved] Standup"}, []string{"[renamed] Daily standup"},
		[]string{"[placed] Daily standup"}, []string{"[cancelled] Review"})
}

// TestABurstOfEditsIsOneNoticeOfTheFinalState: an event edited three
// times in a minute is told once, as it ended, once Google's stamp of the
// last edit is older than the settle time.
func TestABurstOfEditsIsOneNoticeOfTheFinalState(t *testing.T) {
	w := newWorld(t)
	e := w.engine(t)
	w.tick(t, e)
	for i, title := range []string{"Offsite", "Offsite (draft)", "Team offsite"} {
		w.clk.Advance(20 * time.Second)
		w.cal.put(event("offsite", title, t0.Add(48*time.Hour+time.Duration(i)*time.Hour), w.clk.Now()))
		w.tick(t, e)
	}
	wantTold(t, w)
	w.clk.Advance(time.Minute)
	w.tick(t, e)
	wantTold(t, w, []string{"[added] Team offsite"})
	if got := w.posts.messages[0][0].Now.Start; !got.Equal(t0.Add(50 * time.Hour)) {
		t.Errorf("notice of the burst: start %v, want the final %v", got, t0.Add(50*time.Hour))
	}
}

// TestNoNoticeOfWhatAChannelIsNotTold: an attendee's answer (the bot's
// own RSVP write among them), an event that started before it changed,
// a private event's new title, and an event that only now comes within
// the window read tell nothing; a private event's move is told.
func TestNoNoticeOfWhatAChannelIsNotTold(t *testing.T) {
	w := newWorld(t)
	planning := event("planning", "Planning", t0.Add(3*time.Hour), t0.Add(-time.Hour))
	running := event("running", "Running", t0.Add(10*time.Minute), t0.Add(-time.Hour))
	secret := event("secret", "Interview", t0.Add(4*time.Hour), t0.Add(-time.Hour))
	secret.Private = true
	w.cal.put(planning, running, secret)
	e := w.engine(t)
	w.tick(t, e)

	w.clk.Advance(20 * time.Minute) // "running" has started
	now := w.clk.Now()
	planning.Response, planning.Updated = meetingbot.ResponseAccepted, now
	running.Title, running.Updated = "Running late", now
	secret.Title, secret.Updated = "Interview with Carol", now
	far := event("far", "Next week", now.Add(7*24*time.Hour+time.Minute), t0.Add(-48*time.Hour))
	w.cal.put(planning, running, secret, far)
	w.clk.Advance(5 * time.Minute) // "far" is within 7 days now
	w.tick(t, e)
	w.cal.remove("running")
	w.tick(t, e)
	wantTold(t, w)

	secret.Start, secret.End, secret.Updated = secret.Start.Add(time.Hour), secret.End.Add(time.Hour), w.clk.Now()
	w.cal.put(secret)
	w.clk.Advance(5 * time.Minute)
	w.tick(t, e)
	wantTold(t, w, []string{"[moved] Interview with Carol"})
	if n := w.posts.messages[0][0]; !n.Now.Private {
		t.Errorf("notice of a private event: Now.Private = false, want true (the message hides its title)")
	}
}

// TestAFloodIsOneDigest: 200 events imported at once, and cleared again,
// are one message each time, and clearing reads no event one by one.
func TestAFloodIsOneDigest(t *testing.T) {
	w := newWorld(t)
	e := w.engine(t)
	w.tick(t, e)
	w.clk.Advance(time.Minute)
	for i := range 200 {
		w.cal.put(event(fmt.Sprintf("import%03d", i), fmt.Sprintf("Imported %d", i), t0.Add(time.Duration(i+2)*30*time.Minute), w.clk.Now()))
	}
	w.clk.Advance(2 * time.Minute)
	w.tick(t, e)
	w.tick(t, w.engine(t))
	if got := w.posts.told(); len(got) != 1 || len(got[0]) != 200 {
		t.Fatalf("messages after an import of 200 = %d (first of %d), want 1 of 200", len(got), len(got[0]))
	}
	for i := range 200 {
		w.cal.remove(fmt.Sprintf("import%03d", i))
	}
	w.tick(t, e)
	if got := w.posts.told(); len(got) != 2 || len(got[1]) != 200 || got[1][0] != "[cancelled] Imported 0" {
		t.Errorf("messages after clearing 200 = %d, want a second of 200 cancellations", len(got))
	}
	if w.cal.gets != 0 {
		t.Errorf("events read one by one for a flood = %d, want 0", w.cal.gets)
	}
}

// TestAnEventMovedOutOfTheWindowIsMovedNotCancelled: an event moved from
// tomorrow to next month leaves the window read; the calendar says where
// it went.
func TestAnEventMovedOutOfTheWindowIsMovedNotCancelled(t *testing.T) {
	w := newWorld(t)
	review := event("review", "Review", t0.Add(24*time.Hour), t0.Add(-time.Hour))
	w.cal.put(review)
	e := w.engine(t)
	w.tick(t, e)
	w.clk.Advance(time.Minute)
	review.Start, review.End, review.Updated = t0.Add(30*24*time.Hour), t0.Add(30*24*time.Hour+time.Hour), w.clk.Now()
	w.cal.put(review)
	w.clk.Advance(2 * time.Minute)
	w.tick(t, e)
	w.tick(t, e)
	wantTold(t, w, []string{"[moved] Review"})
}

// TestAnEventMovedToATimePastIsMoved: an event the channel expects in an
// hour, moved to half an hour ago, is a move, not an event that started:
// the channel would otherwise still expect it. Cancelled after that, it
// has started, and is no notice.
func TestAnEventMovedToATimePastIsMoved(t *testing.T) {
	w := newWorld(t)
	review := event("review", "Review", t0.Add(time.Hour), t0.Add(-time.Hour))
	w.cal.put(review)
	e := w.engine(t)
	w.tick(t, e)
	w.clk.Advance(time.Minute)
	review.Start, review.End, review.Updated = t0.Add(-30*time.Minute), t0.Add(30*time.Minute), w.clk.Now()
	w.cal.put(review)
	w.clk.Advance(2 * time.Minute)
	w.tick(t, e)
	w.tick(t, w.engine(t))
	w.cal.remove("review")
	w.tick(t, e)
	wantTold(t, w, []string{"[moved] Review"})
	if len(w.posts.messages) == 0 {
		return
	}
	if got := w.posts.messages[0][0].Now.Start; !got.Equal(t0.Add(-30 * time.Minute)) {
		t.Errorf("notice of the move: start %v, want %v", got, t0.Add(-30*time.Minute))
	}
}

// TestALostMoveOutOfTheWindowIsSent: Slack's answer to the notice of an
// event moved out of the window read (to next month, or to a time past)
// was lost, and so was the message; the next pass reads the event from
// the calendar, finds the move still stands, does not find the notice in
// Slack, and sends it.
func TestALostMoveOutOfTheWindowIsSent(t *testing.T) {
	for name, start := range map[string]time.Time{"next month": t0.Add(30 * 24 * time.Hour), "past": t0.Add(-30 * time.Minute)} {
		t.Run(name, func(t *testing.T) {
			w := newWorld(t)
			review := event("review", "Review", t0.Add(time.Hour), t0.Add(-time.Hour))
			w.cal.put(review)
			e := w.engine(t)
			w.tick(t, e)
			w.clk.Advance(time.Minute)
			review.Start, review.End, review.Updated = start, start.Add(time.Hour), w.clk.Now()
			w.cal.put(review)
			w.clk.Advance(2 * time.Minute)
			w.posts.fail = fmt.Errorf("connection reset: %w", meetingbot.ErrUnconfirmed) // Slack did not take it
			w.tick(t, e)
			w.clk.Advance(3 * time.Minute) // past the lease
			w.tick(t, w.engine(t))
			w.tick(t, e)
			wantTold(t, w, []string{"[moved] Review"})
		})
	}
}

// TestAnInterruptedNoticeIsLookedUpNotResent: Slack took a notice and
// its answer was lost; the next pass finds it in Slack and records it,
// posting nothing again.
func TestAnInterruptedNoticeIsLookedUpNotResent(t *testing.T) {
	w := newWorld(t)
	e := w.engine(t)
	w.tick(t, e)
	w.clk.Advance(time.Minute)
	w.cal.put(event("review", "Review", t0.Add(5*time.Hour), w.clk.Now()))
	w.clk.Advance(2 * time.Minute)
	w.posts.fail = meetingbot.ErrUnconfirmed
	w.tick(t, e)
	w.clk.Advance(3 * time.Minute) // past the lease
	w.tick(t, w.engine(t))
	w.tick(t, e)
	wantTold(t, w, []string{"[added] Review"})
}

// TestFollowingAgainStartsFromANewFirstReading: a channel that stops
// following changes and starts again is not told what changed meanwhile.
func TestFollowingAgainStartsFromANewFirstReading(t *testing.T) {
	w := newWorld(t)
	e := w.engine(t)
	w.tick(t, e)
	w.clk.Advance(time.Hour)
	w.cal.put(event("review", "Review", t0.Add(5*time.Hour), w.clk.Now().Add(-10*time.Minute)))
	w.since = w.clk.Now().Add(-time.Minute) // followed again
	w.tick(t, e)
	w.clk.Advance(time.Minute)
	w.tick(t, e)
	wantTold(t, w)
}

// TestTwoProcessesTellEachChangeOnce: two processes on one database
// passing at once tell each change once.
func TestTwoProcessesTellEachChangeOnce(t *testing.T) {
	w := newWorld(t)
	a, b := w.engine(t), w.engine(t)
	w.tick(t, a)
	for i := range 5 {
		w.clk.Advance(time.Minute)
		w.cal.put(event(fmt.Sprintf("e%d", i), fmt.Sprintf("Event %d", i), t0.Add(time.Duration(i+3)*time.Hour), w.clk.Now()))
		w.clk.Advance(2 * time.Minute)
		var wg sync.WaitGroup
		for _, e := range []*feed.Engine{a, b} {
			wg.Go(func() { _ = e.Tick(t.Context()) })
		}
		wg.Wait()
	}
	got := w.posts.told()
	if len(got) != 5 {
		t.Errorf("messages = %v, want one for each of 5 events", got)
	}
}

// contended is a process's ledger that, once its first claim is taken,
// lets another process's pass run to its end before it goes on: two
// processes at one flood at the same instant, in their worst order.
type contended struct {
	feed.Ledger
	once  sync.Once
	other func()
}

func (l *contended) Claim(ctx context.Context, e meetingbot.Entry, now, leaseUntil time.Time) (meetingbot.ClaimStatus, meetingbot.Entry, error) {
	status, prev, err := l.Ledger.Claim(ctx, e, now, leaseUntil)
	if err == nil && status == meetingbot.Claimed {
		l.once.Do(l.other)
	}
	return status, prev, err
}

// TestTwoProcessesAtOneFloodPostOneDigest: two processes find the same
// 200 events imported at the same pass; the one that claims a notice of
// the flood first posts the digest, and the other leaves the flood to it
// rather than claim the rest and post a second digest.
func TestTwoProcessesAtOneFloodPostOneDigest(t *testing.T) {
	w := newWorld(t)
	b := w.engine(t)
	a := w.engineOn(t, func(s *sqlite.Store) feed.Ledger {
		return &contended{Ledger: s, other: func() {
			if err := b.Tick(t.Context()); err != nil {
				t.Errorf("the other process's pass: %v", err)
			}
		}}
	})
	w.tick(t, b)
	w.clk.Advance(time.Minute)
	for i := range 200 {
		w.cal.put(event(fmt.Sprintf("import%03d", i), fmt.Sprintf("Imported %d", i), t0.Add(time.Duration(i+2)*30*time.Minute), w.clk.Now()))
	}
	w.clk.Advance(2 * time.Minute)
	w.tick(t, a)
	w.clk.Advance(30 * time.Second)
	w.tick(t, b)
	w.tick(t, a)
	got := w.posts.told()
	var sizes []int
	for _, msg := range got {
		sizes = append(sizes, len(msg))
	}
	if len(got) != 1 || len(got[0]) != 200 || got[0][0] != "[added] Imported 0" {
		t.Errorf("messages of the two processes = %d of %v notices, want 1 of 200 in start order", len(got), sizes)
	}
}

// TestAnImportOverSeveralPassesIsOneDigest: 200 events imported over
// ten seconds, passes running meanwhile, are one digest once the import
// is done.
func TestAnImportOverSeveralPassesIsOneDigest(t *testing.T) {
	w := newWorld(t)
	e := w.engine(t)
	w.tick(t, e)
	for i := range 200 {
		if i%20 == 0 {
			w.clk.Advance(time.Second)
			w.tick(t, e)
		}
		w.cal.put(event(fmt.Sprintf("import%03d", i), fmt.Sprintf("Imported %d", i), t0.Add(time.Duration(i+2)*30*time.Minute), w.clk.Now()))
	}
	for range 5 {
		w.clk.Advance(30 * time.Second)
		w.tick(t, e)
	}
	if got := w.posts.told(); len(got) != 1 || len(got[0]) != 200 {
		t.Errorf("messages after an import over ten seconds = %d, want 1 of 200", len(got))
	}
}

// TestAChannelEditedWithoutPauseIsStillTold: a change waits for others
// still being made at most a few settle times.
func TestAChannelEditedWithoutPauseIsStillTold(t *testing.T) {
	w := newWorld(t)
	e := w.engine(t)
	w.tick(t, e)
	w.cal.put(event("review", "Review", t0.Add(5*time.Hour), w.clk.Now()))
	for i := range 20 {
		w.clk.Advance(30 * time.Second)
		w.cal.put(event("busy", fmt.Sprintf("Busy %d", i), t0.Add(6*time.Hour), w.clk.Now()))
		w.tick(t, e)
	}
	if got := w.posts.told(); len(got) == 0 || got[0][0] != "[added] Review" {
		t.Errorf("messages while another event is edited every 30s = %v, want the review's", got)
	}
}
