package scheduler_test

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync/atomic"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/internal/clock"
	"github.com/meetingbot/meetingbot/scheduler"
	"github.com/meetingbot/meetingbot/storage/sqlite"
)

// benchSource gives every subscription 20 meetings. Idle: they start in an
// hour, so nothing is due. Due: they start in 5 minutes with new IDs each
// tick, so every trigger is due and new.
type benchSource struct {
	now  func() time.Time
	due  bool
	tick atomic.Int64
}

func (s *benchSource) Meetings(ctx context.Context, sub meetingbot.Subscription, from, to time.Time) ([]meetingbot.Meeting, error) {
	now := s.now()
	lead := time.Hour
	if s.due {
		lead = 5 * time.Minute
	}
	n := s.tick.Load()
	out := make([]meetingbot.Meeting, 20)
	for i := range out {
		start := now.Add(lead + time.Duration(i)*time.Second)
		out[i] = meetingbot.Meeting{ID: fmt.Sprintf("ev%d_%d", n, i), Title: "Weekly sync", Start: start, End: start.Add(30 * time.Minute)}
	}
	return out, nil
}

// Meeting is never asked: no trigger falls between the ticks.
func (s *benchSource) Meeting(ctx context.Context, sub meetingbot.Subscription, id string) (meetingbot.Meeting, error) {
	return meetingbot.Meeting{}, meetingbot.ErrGone
}

type nopNotifier struct{ sent atomic.Int64 }

func (n *nopNotifier) Notify(ctx context.Context, r meetingbot.Reminder) (meetingbot.Receipt, error) {
	n.sent.Add(1)
	return meetingbot.Receipt{Channel: "C1", TS: "1.1"}, nil
}

func (n *nopNotifier) NotifyDigest(ctx context.Context, rs []meetingbot.Reminder) (meetingbot.Receipt, error) {
	n.sent.Add(int64(len(rs)))
	return meetingbot.Receipt{Channel: "C1", TS: "1.1"}, nil
}

func (n *nopNotifier) Delivered(ctx context.Context, r meetingbot.Reminder) (meetingbot.Receipt, bool, error) {
	return meetingbot.Receipt{}, false, nil
}

// peakHeap samples the live heap until stop is closed and returns its maximum.
func peakHeap(stop <-chan struct{}) <-chan uint64 {
	out := make(chan uint64, 1)
	go func() {
		sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		var peak uint64
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(sample)
			peak = max(peak, sample[0].Value.Uint64())
			select {
			case <-stop:
				out <- peak
				return
			case <-t.C:
			}
		}
	}()
	return out
}

// BenchmarkTick measures one tick over 1, 100 and 10,000 subscriptions with
// 20 meetings each in the window, idle (nothing due) and with everything due
// (40 ledger writes per subscription: a claim and a settle per reminder).
// Reported per subscription: ns and allocations; for the tick: ledger writes
// per second and the peak live heap.
func BenchmarkTick(b *testing.B) {
	for _, due := range []bool{false, true} {
		for _, n := range []int{1, 100, 10_000} {
			name := fmt.Sprintf("idle/subs=%d", n)
			if due {
				name = fmt.Sprintf("due/subs=%d", n)
			}
			b.Run(name, func(b *testing.B) { benchTick(b, n, due) })
		}
	}
}

func benchTick(b *testing.B, n int, due bool) {
	b.Helper()
	store, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer store.Close()
	benchTickOn(b, store, nil, n, due, true)
}

// benchTickOn is benchTick on a ledger of the caller's, with a replica's
// share when share is not nil. Strict, a due reminder a tick did not send
// fails the benchmark; otherwise it is counted (unsent-per-tick): a
// ledger that cannot keep up leaves it to the next tick.
func benchTickOn(b *testing.B, store scheduler.Ledger, share func(context.Context, []meetingbot.Subscription) ([]meetingbot.Subscription, error), n int, due, strict bool) {
	b.Helper()
	ctx := context.Background()
	subs := make([]meetingbot.Subscription, n)
	for i := range subs {
		subs[i] = meetingbot.Subscription{ID: fmt.Sprintf("sub%05d", i), CalendarID: fmt.Sprintf("user%05d@example.com", i), Offsets: []time.Duration{10 * time.Minute}}
	}
	c := clock.NewFake(t0)
	src := &benchSource{now: c.Now, due: due}
	nop := &nopNotifier{}
	s, err := scheduler.New(subs, src, nop, store, scheduler.Options{Clock: c, Logger: discardLogger(), Share: share})
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Tick(ctx); err != nil { // first run: cursors created
		b.Fatal(err)
	}
	nop.sent.Store(0)
	runtime.GC()
	stop := make(chan struct{})
	peak := peakHeap(stop)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		src.tick.Add(1)
		c.Set(c.Now().Add(30 * time.Second))
		if err := s.Tick(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	close(stop)
	elapsed := b.Elapsed()
	b.ReportMetric(float64(elapsed.Nanoseconds())/float64(b.N*n), "ns/sub")
	b.ReportMetric(float64(<-peak)/(1<<20), "peak-heap-MB")
	if due {
		if got, want := nop.sent.Load(), int64(b.N*n*20); got != want {
			if strict {
				b.Fatalf("sent %d reminders, want %d", got, want)
			}
			b.ReportMetric(float64(want-got)/float64(b.N), "unsent-per-tick")
		}
		b.ReportMetric(float64(nop.sent.Load()*2)/elapsed.Seconds(), "ledger-writes/s")
	}
}
