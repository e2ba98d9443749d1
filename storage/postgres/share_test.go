package postgres_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/internal/clock"
	"github.com/meetingbot/meetingbot/storage/postgres"
	"github.com/meetingbot/meetingbot/storage/postgres/pgtest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cluster is replicas sharing one schema, on one fake clock, with a tick of
// 30s: leases last 90s.
type cluster struct {
	t     *testing.T
	url   string
	clock *clock.Fake
	subs  []meetingbot.Subscription
}

const tick = 30 * time.Second

func newCluster(t *testing.T, n int) *cluster {
	c := &cluster{t: t, url: pgtest.URL(t), clock: clock.NewFake(time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC))}
	for i := range n {
		c.subs = append(c.subs, meetingbot.Subscription{ID: fmt.Sprintf("user%02d@example.com", i), CalendarID: fmt.Sprintf("user%02d@example.com", i), Offsets: []time.Duration{time.Minute}})
	}
	return c
}

func (c *cluster) replica() *postgres.Store {
	return open(c.t, c.url, postgres.Options{Interval: tick, Now: c.clock.Now})
}

// round runs one round of each replica, in order, and returns what each
// holds.
func (c *cluster) round(replicas ...*postgres.Store) [][]string {
	c.t.Helper()
	out := make([][]string, len(replicas))
	for i, r := range replicas {
		mine, err := r.Share(c.t.Context(), c.subs)
		require.NoError(c.t, err, "Share of replica %d", i)
		for _, s := range mine {
			out[i] = append(out[i], s.ID)
		}
	}
	return out
}

// covered fails unless every subscription is in some share: no
// subscription goes unswept.
func (c *cluster) covered(shares [][]string, what string) {
	c.t.Helper()
	held := map[string]bool{}
	for _, share := range shares {
		for _, id := range share {
			held[id] = true
		}
	}
	for _, sub := range c.subs {
		if !held[sub.ID] {
			c.t.Errorf("%s: %s is in no share (%v)", what, sub.ID, sizes(shares))
		}
	}
}

// settle runs rounds, a tick apart, until two in a row give the same
// shares (a handover takes a round to complete: the replica offering
// sweeps what it offers until the next), and checks that the shares are
// then disjoint and cover every subscription.
func (c *cluster) settle(replicas ...*postgres.Store) [][]string {
	c.t.Helper()
	last := c.round(replicas...)
	for range 5 {
		c.clock.Advance(tick)
		got := c.round(replicas...)
		if slices.EqualFunc(got, last, slices.Equal) {
			break
		}
		last = got
	}
	seen := map[string]int{}
	for i, share := range last {
		for _, id := range share {
			if j, ok := seen[id]; ok {
				c.t.Errorf("settled: %s held by replicas %d and %d", id, j, i)
			}
			seen[id] = i
		}
	}
	c.covered(last, "settled")
	return last
}

func sizes(shares [][]string) []int {
	out := make([]int, len(shares))
	for i, s := range shares {
		out[i] = len(s)
	}
	return out
}

func TestShareSplitsTheSubscriptionsEvenly(t *testing.T) {
	c := newCluster(t, 10)
	a, b, d := c.replica(), c.replica(), c.replica()
	c.covered(c.round(a, b, d), "the first round")
	n := sizes(c.settle(a, b, d))
	slices.Sort(n)
	assert.Equal(t, []int{3, 3, 4}, n, "shares of 10 subscriptions among 3 replicas")
}

func TestNewReplicaGetsWork(t *testing.T) {
	c := newCluster(t, 12)
	a, b := c.replica(), c.replica()
	got := c.round(a, b)
	assert.Equal(t, []int{12, 0}, sizes(got), "the first replica to run takes all")
	assert.Equal(t, []int{6, 6}, sizes(c.settle(a, b)))

	d := c.replica()
	for range 3 {
		c.clock.Advance(tick)
		c.covered(c.round(a, b, d), "while the third replica joins")
	}
	assert.Equal(t, []int{4, 4, 4}, sizes(c.settle(a, b, d)), "after the third replica joined")
}

// A replica killed stops renewing; the others take its subscriptions once
// its leases run out, LeaseTicks ticks after its last round, not before.
func TestKilledReplicasSubscriptionsAreTakenOverWithinThreeTicks(t *testing.T) {
	c := newCluster(t, 9)
	a, b, d := c.replica(), c.replica(), c.replica()
	require.Equal(t, []int{3, 3, 3}, sizes(c.settle(a, b, d)))
	postgres.Crash(d)

	for i := 1; i < postgres.LeaseTicks; i++ {
		c.clock.Advance(tick)
		assert.Equal(t, []int{3, 3}, sizes(c.round(a, b)), "%d ticks after the kill: the dead replica's leases still run", i)
	}
	c.clock.Advance(tick)
	got := c.round(a, b)
	c.covered(got, fmt.Sprintf("%d ticks after the kill", postgres.LeaseTicks))
	n := sizes(c.settle(a, b))
	slices.Sort(n)
	assert.Equal(t, []int{4, 5}, n, "after the takeover")
}

// A replica that stops (SIGTERM) hands its leases back: the others take
// them on their next round.
func TestClosedReplicaHandsItsSubscriptionsBackAtOnce(t *testing.T) {
	c := newCluster(t, 8)
	a, b := c.replica(), c.replica()
	require.Equal(t, []int{4, 4}, sizes(c.settle(a, b)))
	require.NoError(t, b.Close())
	c.clock.Advance(time.Second)
	got := c.round(a)
	assert.Len(t, got[0], 8, "subscriptions of the survivor, the next round after the other closed")
}

func TestShareFollowsSubscriptionsComingAndGoing(t *testing.T) {
	c := newCluster(t, 4)
	a, b := c.replica(), c.replica()
	c.settle(a, b)
	c.subs = append(c.subs, meetingbot.Subscription{ID: "slack:new", CalendarID: "new@example.com", Offsets: []time.Duration{0}})
	c.clock.Advance(tick)
	c.covered(c.round(a, b), "the round after one was added")
	c.settle(a, b)
	removed := c.subs[0].ID
	c.subs = c.subs[1:]
	c.clock.Advance(tick)
	got := c.settle(a, b)
	assert.NotContains(t, slices.Concat(got...), removed, "shares after %s was removed", removed)
}

// Replicas that run their rounds concurrently and in any order, join, die
// and leave: once the dead ones' leases have run out, the live ones'
// shares settle disjoint and cover every subscription.
func TestSharesSettleWhateverTheChurn(t *testing.T) {
	c := newCluster(t, 7)
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, seed))
	t.Logf("seed %d", seed)
	live := []*postgres.Store{c.replica(), c.replica()}
	for range 12 {
		switch rng.IntN(4) {
		case 0:
			live = append(live, c.replica())
		case 1:
			if len(live) > 1 {
				i := rng.IntN(len(live))
				if rng.IntN(2) == 0 {
					postgres.Crash(live[i])
				} else {
					live[i].Close()
				}
				live = slices.Delete(live, i, i+1)
			}
		}
		c.clock.Advance(time.Duration(rng.IntN(int(tick))))
		var wg sync.WaitGroup
		for _, r := range live {
			wg.Go(func() {
				_, err := r.Share(t.Context(), c.subs)
				assert.NoError(t, err)
			})
		}
		wg.Wait()
	}
	c.clock.Advance(postgres.LeaseTicks * tick) // the dead ones' leases run out
	got := sizes(c.settle(live...))
	slices.Sort(got)
	assert.LessOrEqual(t, got[len(got)-1]-got[0], 1, "settled shares %v differ by at most one", got)
}
