package scheduler_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/scheduler"
	"github.com/meetingbot/meetingbot/storage/sqlite"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countingLedger counts the ledger reads every sweep would make.
type countingLedger struct {
	*sqlite.Store
	mu               sync.Mutex
	cursors, entries int
	asked            []string // keys Entries was asked about
}

func (l *countingLedger) Cursor(ctx context.Context, sub string) (time.Time, bool, error) {
	l.mu.Lock()
	l.cursors++
	l.mu.Unlock()
	return l.Store.Cursor(ctx, sub)
}

func (l *countingLedger) Entries(ctx context.Context, sub string, keys []string) (map[string]meetingbot.Entry, error) {
	l.mu.Lock()
	l.entries++
	l.asked = append(l.asked, keys...)
	l.mu.Unlock()
	return l.Store.Entries(ctx, sub, keys)
}

// A process reads a subscription's cursor from the ledger once and then
// keeps it, and asks the ledger about a due reminder only until it knows
// the reminder settled: the sweeps that list it as due until its meeting
// starts cost no ledger reads for it.
func TestSweepsDoNotAskTheLedgerAgainAboutWhatIsSettled(t *testing.T) {
	e := newEnv(t)
	e.meeting(cal, "sync", at("09:00"))
	e.tickAt(at("08:40")) // writes the cursor
	counting := &countingLedger{}
	e.wrap = func(st *sqlite.Store) scheduler.Ledger { counting.Store = st; return counting }
	e.restart()

	e.tickEvery(at("08:49:30"), at("09:05"), 30*time.Second)
	require.Len(t, e.fakeSlack.Deliveries(), 1)
	assert.Equal(t, 1, counting.cursors, "cursor reads over 32 sweeps")
	assert.Zero(t, counting.entries, "ledger reads about the reminder its timer sent and recorded")
}

// What another process settled is read from the ledger, once, and not
// sent again.
func TestSweepsSeeWhatAnotherProcessSettled(t *testing.T) {
	e := newEnv(t)
	e.meeting(cal, "sync", at("09:00"))
	counting := &countingLedger{}
	e.wrap = func(st *sqlite.Store) scheduler.Ledger { counting.Store = st; return counting }
	e.restart()
	e.tickAt(at("08:40"))

	b := e.second(e.opts)
	defer b.Stop()
	e.clock.Set(at("08:50:05"))
	require.NoError(t, b.Tick(context.Background()))
	require.Len(t, e.fakeSlack.Deliveries(), 1, "sent by the other process")

	e.tickEvery(at("08:50:30"), at("08:55"), 30*time.Second)
	assert.Len(t, e.fakeSlack.Deliveries(), 1, "not sent again")
	assert.Equal(t, 1, counting.entries, "the ledger asked once, then the key is known settled")
}
