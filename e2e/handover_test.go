package e2e

import (
	"flag"
	"fmt"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot/storage/postgres/pgtest"
)

// handoverLong runs the handover scenario of issue 24 at its full size
// (three replicas, 30 subscriptions, 60 meetings over 80 seconds), about
// two minutes; CI runs the same shape smaller.
//
//	MEETINGBOT_TEST_DATABASE_URL=… go test ./e2e -run TestHandover -handover.long -count=20
var handoverLong = flag.Bool("handover.long", false, "run the replica handover test at full size (3 replicas, 30 subscriptions, 60 meetings over 80s)")

// handover is one run of replicas on one PostgreSQL through a kill, a
// restart and a stop, against a Slack that takes latency to answer: the
// replica killed is killed while Slack holds one of its posts, which
// Slack then never stores.
type handover struct {
	bots, rooms, meetings int
	tick, offset          time.Duration
	first, step           time.Duration // the first trigger after the base, and between triggers
	kill, restart, stop   time.Duration // after the base; restart 0: none
	slackLatency          time.Duration
}

// Three replicas share the subscriptions; Slack answers after 300 ms. The
// replica that holds a reminder's subscription is killed (SIGKILL) while
// Slack holds that reminder's post, started again later, and another is
// stopped (SIGTERM): every reminder arrives once, before its meeting,
// the one whose post died with its replica too, looked up in Slack and
// sent by another replica within a lease.
func TestHandoverLosesNoReminder(t *testing.T) {
	t.Parallel()
	h := handover{
		bots: 3, rooms: 6, meetings: 12, tick: time.Second, offset: 8 * time.Second,
		first: 5 * time.Second, step: 1500 * time.Millisecond,
		kill: 9500 * time.Millisecond, restart: 14 * time.Second, stop: 12 * time.Second,
		slackLatency: 300 * time.Millisecond,
	}
	if *handoverLong {
		h = handover{
			bots: 3, rooms: 30, meetings: 60, tick: 2 * time.Second, offset: 10 * time.Second,
			first: 5 * time.Second, step: 80 * time.Second / 60,
			kill: 25 * time.Second, restart: 50 * time.Second, stop: 40 * time.Second,
			slackLatency: 300 * time.Millisecond,
		}
	}
	h.run(t)
}

func (h handover) run(t *testing.T) {
	dbURL := withPassword(t, pgtest.URL(t))
	w := newWorld(t)
	w.slack.SetLatency(h.slackLatency)
	entries := rooms(w, h.rooms)
	env := replicaEnv(w, dbURL, "CALENDARS="+strings.Join(entries, ","), "REMINDER_OFFSETS="+h.offset.String(), "TICK_INTERVAL="+h.tick.String())
	var bots []*proc
	for range h.bots {
		bots = append(bots, start(t, w.dir, env))
	}
	addrs := make([]string, len(bots))
	for i, b := range bots {
		addrs[i] = b.ready()
	}
	share := h.rooms / h.bots
	for _, addr := range addrs {
		waitHealth(t, addr, http.StatusOK, fmt.Sprintf("holds %d of %d subscriptions", share, h.rooms), 30*time.Second)
	}

	base := at(time.Second)
	// Starts on whole seconds, as calendars keep them.
	var slots []slot
	for i := range h.meetings {
		cal, _, _ := strings.Cut(entries[i%len(entries)], "=")
		s := slot{cal: cal, title: fmt.Sprintf("Slot%02d review", i), start: base.Add(h.first + h.offset + time.Duration(i)*h.step).Truncate(time.Second)}
		w.meetingIn(t, cal, fmt.Sprintf("slot%02d", i), s.title, s.start)
		slots = append(slots, s)
	}
	trigger := func(s slot) time.Time { return s.start.Add(-h.offset) }
	nearest := func(d time.Duration) slot {
		best := slots[0]
		for _, s := range slots {
			if absDuration(trigger(s).Sub(base.Add(d))) < absDuration(trigger(best).Sub(base.Add(d))) {
				best = s
			}
		}
		return best
	}

	// The kill: the holder of the reminder due nearest the kill's instant,
	// while Slack holds its post.
	victim := nearest(h.kill)
	sleepUntil(trigger(victim).Add(-h.tick / 2))
	killed := holderOf(t, dbURL, bots, victim.cal+"=#eng")
	posts := len(w.slack.CallsTo("chat.postMessage"))
	eventually(t, 5*time.Second, "the post of "+victim.title+" reaching Slack", func() bool {
		calls := w.slack.CallsTo("chat.postMessage")
		for _, c := range calls[min(posts, len(calls)):] {
			if strings.Contains(c.Form.Get("text"), victim.title) {
				return true
			}
		}
		return false
	})
	killed.signal(syscall.SIGKILL)
	killed.wait(10 * time.Second)
	if got := w.messages(victim.title); len(got) != 0 {
		t.Logf("Slack stored %s's post before the kill; the lookup confirms it", victim.title)
	}

	stopAt := trigger(nearest(h.stop)).Add(-h.tick / 2)
	restarted := false
	for !restarted || !stopAt.IsZero() {
		switch {
		case h.restart == 0:
			restarted = true
		case !restarted && (stopAt.IsZero() || base.Add(h.restart).Before(stopAt)):
			sleepUntil(base.Add(h.restart))
			bots = append(bots, start(t, w.dir, env))
			restarted = true
		default:
			sleepUntil(stopAt)
			stopped := holderOf(t, dbURL, bots, nearest(h.stop).cal+"=#eng")
			stopped.signal(syscall.SIGTERM)
			if code, took := stopped.wait(15 * time.Second); code != 0 || took > 10*time.Second {
				t.Errorf("replica stopped with SIGTERM: exit %d after %v, want 0 within 10s", code, took)
			}
			stopAt = time.Time{}
		}
	}
	sleepUntil(slots[len(slots)-1].start.Add(2 * time.Second))
	for _, b := range bots {
		if !b.exited() {
			b.signal(syscall.SIGTERM)
			b.wait(15 * time.Second)
		}
	}

	checkOnceBeforeStart(t, w, slots, h.offset)
	for _, e := range ledgerOf(t, dbURL) {
		if e.Start.Equal(victim.start) {
			t.Logf("ledger: the reminder whose post died with its replica (%s): %s %s (%s), recorded %v after its trigger",
				victim.title, e.Outcome, e.Code, e.Reason, e.RecordedAt.Sub(trigger(victim)).Round(time.Millisecond))
		}
	}
}

func absDuration(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}
