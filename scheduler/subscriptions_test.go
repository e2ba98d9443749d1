package scheduler_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// slackSubs is a changing list of subscriptions, as people make them from
// Slack.
type slackSubs struct {
	mu   sync.Mutex
	list []meetingbot.Subscription
	err  error
}

func (l *slackSubs) set(subs ...meetingbot.Subscription) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.list, l.err = subs, nil
}

func (l *slackSubs) fail(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.err = err
}

func (l *slackSubs) get(context.Context) ([]meetingbot.Subscription, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.list, l.err
}

// Subscriptions made, changed and removed in Slack take effect at the next
// sweep, without a restart; a removed one's timers are dropped, and a
// failing list keeps the last one.
func TestSubscriptionsComeAndGoWithoutRestart(t *testing.T) {
	e := newEnv(t, sub("alice"))
	extra := &slackSubs{}
	e.opts.Subscriptions = extra.get
	e.restart()
	e.meeting("alice@example.com", "a", at("09:00"))
	e.meeting("bob@example.com", "b", at("09:00"))
	e.meeting("bob@example.com", "b2", at("10:00"))
	e.meeting("carol@example.com", "c", at("09:30"))

	extra.set(sub("bob"), sub("alice", time.Minute)) // alice's own entry wins over one of the same ID
	e.tickAt(at("08:49:40"))
	extra.fail(errors.New("database is locked"))
	e.tickEvery(at("08:50"), at("08:55"), 30*time.Second)
	extra.set(sub("carol")) // bob removed, carol added
	e.tickEvery(at("08:55:30"), at("10:30"), 30*time.Second)

	got := map[string][]time.Time{}
	for _, d := range e.fakeSlack.Deliveries() {
		got[d.Subscription.ID] = append(got[d.Subscription.ID], d.At)
	}
	assert.Equal(t, []time.Time{at("08:50")}, got["alice"], "alice, as configured (10m)")
	assert.Equal(t, []time.Time{at("08:50")}, got["bob"], "bob until removed: nothing for 10:00")
	assert.Equal(t, []time.Time{at("09:20")}, got["carol"], "carol from the sweep after she was added")
}

// A muted series gets nothing in the subscription that muted it; its other
// meetings, and other subscriptions, go on.
func TestMutedSeriesGetsNoReminder(t *testing.T) {
	muted := sub("alice")
	muted.Muted = []string{"weekly"}
	e := newEnv(t, muted, sub("team"))
	e.cal.Put("alice@example.com", meetingbot.Meeting{ID: "weekly_20261130T090000Z", Series: "weekly", Title: "weekly", Start: at("09:00")})
	e.cal.Put("alice@example.com", meetingbot.Meeting{ID: "adhoc", Title: "adhoc", Start: at("09:05")})
	e.cal.Put("team@example.com", meetingbot.Meeting{ID: "weekly_20261130T090000Z", Series: "weekly", Title: "weekly", Start: at("09:00")})
	e.tickEvery(at("08:45"), at("09:10"), 30*time.Second)

	var got []string
	for _, d := range e.fakeSlack.Deliveries() {
		got = append(got, d.Subscription.ID+":"+d.Meeting.ID)
	}
	assert.ElementsMatch(t, []string{"alice:adhoc", "team:weekly_20261130T090000Z"}, got)
}

// With several replicas, each sweeps only its share: another replica's
// subscriptions are neither read nor reminded here, and a share that
// cannot be renewed keeps the last one.
func TestShareLimitsWhatIsSwept(t *testing.T) {
	e := newEnv(t, sub("alice"), sub("bob"))
	var shareErr error
	e.opts.Share = func(_ context.Context, subs []meetingbot.Subscription) ([]meetingbot.Subscription, error) {
		if shareErr != nil {
			return nil, shareErr
		}
		var mine []meetingbot.Subscription
		for _, s := range subs {
			if s.ID == "alice" {
				mine = append(mine, s)
			}
		}
		return mine, nil
	}
	e.restart()
	e.meeting("alice@example.com", "a", at("09:00"))
	e.meeting("bob@example.com", "b", at("09:00"))
	e.tickAt(at("08:49:40"))
	shareErr = errors.New("connection refused")
	e.tickEvery(at("08:50"), at("08:55"), 30*time.Second)

	got := e.fakeSlack.Deliveries()
	require.Len(t, got, 1)
	assert.Equal(t, "alice", got[0].Subscription.ID)
	assert.Equal(t, 0, e.cal.readsOf("bob@example.com"), "reads of another replica's calendar")
}

// A subscription removed while its timer is armed sends nothing when the
// timer would have fired.
func TestRemovedSubscriptionsTimerIsDropped(t *testing.T) {
	e := newEnv(t)
	extra := &slackSubs{}
	extra.set(sub("bob"))
	e.opts.Subscriptions = extra.get
	e.restart()
	e.meeting("bob@example.com", "b", at("09:00"))
	e.tickAt(at("08:49:30")) // arms 08:50
	extra.set()              // bob turns it off
	e.tickAt(at("08:49:45"))
	e.clock.Set(at("08:51"))
	assert.Empty(t, e.fakeSlack.Deliveries())
	assert.Zero(t, e.clock.Pending(), "timers left")
}

// A subscription made from Slack keeps its ID when it is turned off and on
// again (selfservice.SubscriptionID depends on the calendar and the
// destination alone), and with it its ledger keys and cursor: turning it
// off and on within a meeting's reminder window sends no reminder twice,
// and the reminders still due go out once.
func TestOffAndOnAgainWithinTheWindowSendsNothingTwice(t *testing.T) {
	e := newEnv(t)
	extra := &slackSubs{}
	e.opts.Subscriptions = extra.get
	e.restart()
	bob := meetingbot.SlackSubscription{
		ID: "slack:bob@example.com=U0BOB00001", Kind: meetingbot.SlackPersonal, CalendarID: "bob@example.com",
		Destination: "U0BOB00001", Offsets: []time.Duration{time.Minute, 10 * time.Minute}, CreatedBy: "U0BOB00001",
	}
	e.meeting("bob@example.com", "standup", at("09:00"))

	extra.set(bob.Subscription()) // /meetingbot on
	e.tickEvery(at("08:49"), at("08:51"), 30*time.Second)
	extra.set() // /meetingbot off, after the 10m reminder
	e.tickEvery(at("08:51:30"), at("08:53"), 30*time.Second)
	extra.set(bob.Subscription()) // /meetingbot on again, before the 1m one
	e.tickEvery(at("08:53:30"), at("09:05"), 30*time.Second)
	extra.set() // off and on once more, after both
	e.tickAt(at("09:05:30"))
	extra.set(bob.Subscription())
	e.tickEvery(at("09:06"), at("09:10"), 30*time.Second)

	var got []string
	for _, d := range e.fakeSlack.Deliveries() {
		got = append(got, fmt.Sprintf("%s %s at %s", d.Subscription.ID, meetingbot.FormatOffset(d.Offset), d.At.Format("15:04:05")))
	}
	assert.Equal(t, []string{
		"slack:bob@example.com=U0BOB00001 10m at 08:50:00",
		"slack:bob@example.com=U0BOB00001 1m at 08:59:00",
	}, got, "reminders of the 09:00 standup")
	for _, entry := range e.ledger() {
		assert.Equal(t, bob.ID, entry.Subscription, "ledger keys are the subscription's")
	}
}
