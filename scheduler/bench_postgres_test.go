package scheduler_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/meetingbot/meetingbot/storage/postgres"
	"github.com/meetingbot/meetingbot/storage/postgres/pgtest"
	"github.com/meetingbot/meetingbot/storage/sqlite"
)

// BenchmarkTickStores measures one tick over 1,000 subscriptions on each
// store in the same run: SQLite, and PostgreSQL as one of several
// replicas would run it (its share renewed every tick, holding all of
// them). Idle and due as BenchmarkTick; a due reminder the tick could not
// claim (the ledger busy past its timeout) is counted, not fatal. The
// PostgreSQL cases skip when MEETINGBOT_TEST_DATABASE_URL is unset.
func BenchmarkTickStores(b *testing.B) {
	for _, due := range []bool{false, true} {
		kind := "idle"
		if due {
			kind = "due"
		}
		b.Run(fmt.Sprintf("sqlite/%s/subs=1000", kind), func(b *testing.B) {
			store, err := sqlite.Open(context.Background(), filepath.Join(b.TempDir(), "bench.db"))
			if err != nil {
				b.Fatal(err)
			}
			defer store.Close()
			benchTickOn(b, store, nil, 1000, due, false)
		})
		b.Run(fmt.Sprintf("postgres/%s/subs=1000", kind), func(b *testing.B) {
			store, err := postgres.Open(context.Background(), pgtest.URL(b), postgres.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer store.Close()
			benchTickOn(b, store, store.Share, 1000, due, false)
		})
	}
}
