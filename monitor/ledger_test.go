package monitor_test

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/scheduler"
	"github.com/meetingbot/meetingbot/storage/sqlite"
	"github.com/stretchr/testify/require"
)

// errDiskFull is what SQLite says when the disk is full.
var errDiskFull = errors.New("database or disk is full (13)")

// fullDisk is a real ledger whose writes fail while full is set, as on a
// full disk or a file turned read-only; reads still work.
type fullDisk struct {
	*sqlite.Store
	full atomic.Bool
}

func (d *fullDisk) fail() error {
	if d.full.Load() {
		return errDiskFull
	}
	return nil
}

func (d *fullDisk) AdvanceCursors(ctx context.Context, c map[string]time.Time) error {
	if err := d.fail(); err != nil {
		return err
	}
	return d.Store.AdvanceCursors(ctx, c)
}

func (d *fullDisk) Claim(ctx context.Context, e meetingbot.Entry, now, lease time.Time) (meetingbot.ClaimStatus, meetingbot.Entry, error) {
	if err := d.fail(); err != nil {
		return 0, meetingbot.Entry{}, err
	}
	return d.Store.Claim(ctx, e, now, lease)
}

func (d *fullDisk) Record(ctx context.Context, e meetingbot.Entry, now time.Time) error {
	if err := d.fail(); err != nil {
		return err
	}
	return d.Store.Record(ctx, e, now)
}

func (d *fullDisk) Prune(ctx context.Context, before time.Time) (int64, error) {
	if err := d.fail(); err != nil {
		return 0, err
	}
	return d.Store.Prune(ctx, before)
}

// noMeetings is a calendar with nothing on it, so nothing is ever due.
type noMeetings struct{}

func (noMeetings) Meetings(context.Context, meetingbot.Subscription, time.Time, time.Time) ([]meetingbot.Meeting, error) {
	return nil, nil
}

func (noMeetings) Meeting(context.Context, meetingbot.Subscription, string) (meetingbot.Meeting, error) {
	return meetingbot.Meeting{}, meetingbot.ErrGone
}

func (noMeetings) Notify(context.Context, meetingbot.Reminder) (meetingbot.Receipt, error) {
	return meetingbot.Receipt{}, errors.New("nothing is due")
}

func (noMeetings) NotifyDigest(context.Context, []meetingbot.Reminder) (meetingbot.Receipt, error) {
	return meetingbot.Receipt{}, errors.New("nothing is due")
}

func (noMeetings) Delivered(context.Context, meetingbot.Reminder) (meetingbot.Receipt, bool, error) {
	return meetingbot.Receipt{}, false, nil
}

// With nothing due, a ledger that cannot be written only failed the ticks:
// every subscription still swept. /healthz must say so all the same, or
// the first reminder due finds a ledger that cannot record it.
func TestHealthReportsFailingLedger(t *testing.T) {
	m, clk, srv := start(t)
	store, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "reminders.db"))
	require.NoError(t, err)
	t.Cleanup(func() { store.Close() })
	ledger := &fullDisk{Store: store}
	sched, err := scheduler.New([]meetingbot.Subscription{alice, team}, noMeetings{}, noMeetings{}, ledger, scheduler.Options{
		Clock: clk, Interval: 10 * time.Second, Observer: m, Logger: slog.New(slog.DiscardHandler),
	})
	require.NoError(t, err)
	tick := func() error {
		clk.Advance(10 * time.Second)
		return sched.Tick(context.Background())
	}
	require.NoError(t, tick())
	ledger.full.Store(true)
	for range 3 {
		if err := tick(); !errors.Is(err, errDiskFull) {
			t.Fatalf("Tick() = %v, want the ledger's write error", err)
		}
	}
	if status, body := get(t, srv.URL+"/healthz"); status != 200 {
		t.Errorf("GET /healthz after 3 failed ticks = %d %q, want 200 still (a passing fault is not an outage)", status, body)
	}
	require.Error(t, tick())
	status, body := get(t, srv.URL+"/healthz")
	if status != 503 || !containsAll(body, "ledger", "last complete tick at 2026-11-30T09:00:10Z", "database or disk is full") {
		t.Errorf("GET /healthz with a ledger failing for 4 ticks = %d %q, want 503 naming the ledger, since when and its error", status, body)
	}
	ledger.full.Store(false)
	require.NoError(t, tick())
	if status, body := get(t, srv.URL+"/healthz"); status != 200 {
		t.Errorf("GET /healthz once the ledger writes again = %d %q, want 200", status, body)
	}
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
