package notify

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/meetingbot/meetingbot"
)

// DefaultPostsPerMinute is the workspace-wide posting budget the bot
// assumes until Slack says otherwise. Slack's chat.postMessage reference
// allows "1 message per second to a specific channel" and, for the whole
// workspace, "several hundred messages per minute"
// (https://docs.slack.dev/reference/methods/chat.postMessage): 300 is the
// low reading of "several hundred".
const DefaultPostsPerMinute = 300

// postMargin is how long before the instant a post is needed (its
// meeting's start) its turn must come: the call to Slack takes some
// hundreds of milliseconds.
const postMargin = time.Second

// minPostsPerMinute is the least the budget learns down to: one 429 after
// another never stops the bot posting altogether.
const minPostsPerMinute = 10

// ErrOverBudget is the end of a post that the workspace's posting budget
// cannot fit before it is needed: before its meeting starts (the
// context's meetingbot.Urgency) or before the context ends. Nothing was
// sent; the reminder is retried by the next sweep, which skips it once its
// meeting has started.
var ErrOverBudget = errors.New("the workspace's posting budget has no room for it in time")

// budget paces every post of the workspace (chat.postMessage) to a token
// bucket: two seconds of posts at once, then PerMinute a minute. Callers wait in order of
// urgency (the meeting start the scheduler gives), then of arrival, across
// all destinations. It learns the workspace's real budget from Slack: a
// 429 holds every post until its Retry-After and halves the pace, which
// then creeps back up while Slack accepts, never above the configured
// one. A caller whose turn would come after it is needed is told at once
// (ErrOverBudget) rather than kept waiting.
type budget struct {
	mu      sync.Mutex
	ceiling float64 // posts a minute configured: the most it paces to
	rate    float64 // posts a minute it paces to now
	burst   float64
	tokens  float64
	at      time.Time // when tokens was last brought up to date
	held    time.Time // no post before this: Slack's last Retry-After
	last429 time.Time
	queue   []*channelWaiter // the next first
	seq     uint64
	waiting int         // posts waiting for the budget now
	over    int         // posts told ErrOverBudget
	recent  []time.Time // posts Slack took within the last minute
}

// newBudget returns a budget of perMinute posts a minute, bursts of a
// tenth of that; nil (no pacing) when perMinute is negative.
func newBudget(perMinute int) *budget {
	if perMinute < 0 {
		return nil
	}
	if perMinute == 0 {
		perMinute = DefaultPostsPerMinute
	}
	b := &budget{ceiling: float64(perMinute), rate: float64(perMinute), burst: burstOf(float64(perMinute))}
	b.tokens = b.burst
	return b
}

// refill brings the bucket up to now; b.mu is held.
func (b *budget) refill(now time.Time) {
	if b.at.IsZero() {
		b.at = now
	}
	if now.After(b.at) {
		b.tokens = math.Min(b.burst, b.tokens+now.Sub(b.at).Minutes()*b.rate)
		b.at = now
	}
}

// turn is when the waiter at position ahead of the queue may post, as
// the bucket stands at now; b.mu is held.
func (b *budget) turn(now time.Time, ahead int) time.Time {
	from := now
	if b.held.After(from) {
		from = b.held
	}
	need := float64(ahead) + 1 - b.tokens
	if need <= 0 {
		return from
	}
	return from.Add(time.Duration(need / b.rate * float64(time.Minute)))
}

// wait takes a post from the budget, in order of urgency, sleeping until
// there is one. It fails with ErrOverBudget at once when the turn would
// come after ctx's urgency or deadline, and with ctx's error if ctx ends.
func (b *budget) wait(ctx context.Context, now func() time.Time, sleep func(context.Context, time.Duration) error) error {
	if b == nil {
		return nil
	}
	urgency, bounded := meetingbot.Urgency(ctx)
	if d, ok := ctx.Deadline(); ok && (!bounded || d.Before(urgency)) {
		urgency, bounded = d, true
	}
	if bounded {
		// The post itself takes a moment: it must leave before it is needed.
		urgency = urgency.Add(-postMargin)
	}
	b.mu.Lock()
	w := &channelWaiter{urgency: urgency, seq: b.seq, wake: make(chan struct{}, 1)}
	b.seq++
	i, _ := slices.BinarySearchFunc(b.queue, w, func(o, w *channelWaiter) int {
		if o.before(w) {
			return -1
		}
		return 1
	})
	t := now()
	b.refill(t)
	if bounded && b.turn(t, i).After(urgency) {
		b.over++
		b.mu.Unlock()
		return fmt.Errorf("%w (%d posts ahead, %.0f a minute)", ErrOverBudget, i, b.rate)
	}
	b.queue = slices.Insert(b.queue, i, w)
	b.waiting++
	b.overflow(t, i+1)
	b.mu.Unlock()
	defer b.leave(w)
	for {
		b.mu.Lock()
		if w.late {
			b.over++
			b.mu.Unlock()
			return fmt.Errorf("%w (pushed back by more urgent posts or a 429, %.0f a minute)", ErrOverBudget, b.rate)
		}
		if b.queue[0] != w {
			b.mu.Unlock()
			select {
			case <-w.wake:
				continue
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		t := now()
		b.refill(t)
		next := b.turn(t, 0)
		if bounded && next.After(urgency) {
			b.over++
			b.mu.Unlock()
			return fmt.Errorf("%w (%.0f a minute)", ErrOverBudget, b.rate)
		}
		if !next.After(t) {
			b.tokens--
			b.mu.Unlock()
			return nil
		}
		b.mu.Unlock()
		if err := sleep(ctx, next.Sub(t)); err != nil {
			return err
		}
	}
}

// overflow tells the waiters from position from on whose turn now comes
// after they are needed to give up: a more urgent post took a place ahead
// of them, or a 429 slowed the pace. b.mu is held.
func (b *budget) overflow(now time.Time, from int) {
	for j := from; j < len(b.queue); j++ {
		w := b.queue[j]
		if w.urgency.IsZero() || w.late || !b.turn(now, j).After(w.urgency) {
			continue
		}
		w.late = true
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
}

// leave removes w from the queue and tells the next one it is next.
func (b *budget) leave(w *channelWaiter) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if i := slices.Index(b.queue, w); i >= 0 {
		b.queue = slices.Delete(b.queue, i, i+1)
	}
	b.waiting--
	if len(b.queue) > 0 {
		select {
		case b.queue[0].wake <- struct{}{}:
		default:
		}
	}
}

// refused learns from a 429 Slack answered at now with Retry-After
// wait: nothing is posted until it has passed, the bucket is empty, and
// the pace is halved (down to minPostsPerMinute).
func (b *budget) refused(now time.Time, wait time.Duration) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.refill(now)
	b.tokens = 0
	if until := now.Add(wait); until.After(b.held) {
		b.held = until
	}
	// Several posts in flight meet the same limit: one halving for them.
	if now.Sub(b.last429) >= wait {
		b.rate = math.Max(minPostsPerMinute, b.rate/2)
		b.burst = burstOf(b.rate)
		b.overflow(now, 1)
	}
	b.last429 = now
}

// accepted learns from a post Slack took at now: a minute after the last
// 429, each post raises the pace by a tenth of a post a minute, up to the
// configured one.
func (b *budget) accepted(now time.Time) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.recent = append(b.recent[recentFrom(b.recent, now):], now)
	if b.rate < b.ceiling && now.Sub(b.last429) >= time.Minute {
		b.rate = math.Min(b.ceiling, b.rate+0.1)
		b.burst = burstOf(b.rate)
	}
}

// recentFrom is the index of the first of posts within a minute of now.
func recentFrom(posts []time.Time, now time.Time) int {
	i, _ := slices.BinarySearchFunc(posts, now.Add(-time.Minute), time.Time.Compare)
	return i
}

// BudgetState is what the workspace's posting budget stands at.
type BudgetState struct {
	// PerMinute is the pace the bot posts at now: the configured budget,
	// or less after Slack answered 429; 0 with pacing off.
	PerMinute float64
	// Refusals is the 429s chat.postMessage met since start-up.
	Refusals int
	// Used is the posts Slack took in the last minute.
	Used int
	// Waiting is the posts waiting for the budget now.
	Waiting int
	// OverBudget is the posts the budget could not fit before they were
	// needed, since start-up (each retried by the next sweep).
	OverBudget int
}

// Budget returns what the workspace's posting budget stands at.
func (s *Slack) Budget() BudgetState {
	st := BudgetState{Refusals: int(s.postRefusals.Load())}
	b := s.budget
	if b == nil {
		return st
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	st.PerMinute, st.Waiting, st.OverBudget = b.rate, b.waiting, b.over
	st.Used = len(b.recent) - recentFrom(b.recent, s.cfg.Now())
	return st
}

// burstOf is the burst the bot allows itself at perMinute: two seconds'
// worth. Slack's own burst is not published; a small one costs the first
// posts of a crowd a second or two and keeps the 429s that a
// smaller-than-assumed budget answers to a handful.
func burstOf(perMinute float64) float64 { return math.Max(1, perMinute/30) }
