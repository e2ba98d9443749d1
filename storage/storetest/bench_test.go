package storetest_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/storage/postgres"
	"github.com/meetingbot/meetingbot/storage/postgres/pgtest"
	"github.com/meetingbot/meetingbot/storage/sqlite"
	"github.com/meetingbot/meetingbot/storage/storetest"
	_ "modernc.org/sqlite"
)

// BenchmarkLedger measures a reminder's two ledger writes (Claim, then
// Record as sent) on each store in the same run, from one goroutine and
// from eight at once (a sweep's sends, or several replicas), beside a
// baseline per store: one plain INSERT, the least a durable write costs
// there. The PostgreSQL cases skip when MEETINGBOT_TEST_DATABASE_URL is
// unset.
func BenchmarkLedger(b *testing.B) {
	ctx := context.Background()
	b.Run("sqlite/baseline-insert", func(b *testing.B) {
		path := filepath.Join(b.TempDir(), "plain.db")
		db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_txlock=immediate")
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
		if _, err := db.Exec(`CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER) STRICT`); err != nil {
			b.Fatal(err)
		}
		for i := 0; i < b.N; i++ {
			if _, err := db.Exec(`INSERT INTO t (k, v) VALUES (?, ?)`, fmt.Sprint("k", i), i); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "writes/s")
	})
	sqlite := func(b *testing.B) storetest.Store {
		s, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "bot.db"))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		return s
	}
	b.Run("sqlite/claim-record", func(b *testing.B) { claimRecord(b, sqlite(b), 1) })
	b.Run("sqlite/claim-record-8way", func(b *testing.B) { claimRecord(b, sqlite(b), 8) })

	b.Run("postgres/baseline-insert", func(b *testing.B) {
		url := pgtest.URL(b)
		pgtest.Exec(b, url, `CREATE TABLE t (k text PRIMARY KEY, v bigint)`)
		c := pgtest.Conn(b, url)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, err := c.Exec(ctx, `INSERT INTO t (k, v) VALUES ($1, $2)`, fmt.Sprint("k", i), i); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "writes/s")
	})
	pg := func(b *testing.B) storetest.Store {
		s, err := postgres.Open(ctx, pgtest.URL(b), postgres.Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		return s
	}
	b.Run("postgres/claim-record", func(b *testing.B) { claimRecord(b, pg(b), 1) })
	b.Run("postgres/claim-record-8way", func(b *testing.B) { claimRecord(b, pg(b), 8) })
}

// claimRecord claims and records b.N new keys from ways goroutines.
func claimRecord(b *testing.B, s storetest.Store, ways int) {
	ctx := context.Background()
	now := time.Date(2026, 11, 30, 8, 50, 0, 0, time.UTC)
	var next atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	errs := make(chan error, ways)
	for range ways {
		go func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(b.N) {
					errs <- nil
					return
				}
				e := meetingbot.Entry{Subscription: "alice", Key: fmt.Sprint("ev", i, ":10m:2026-11-30T09:00:00Z"), EventID: "ev",
					Offset: 10 * time.Minute, Start: now.Add(10 * time.Minute), TriggerAt: now}
				if _, _, err := s.Claim(ctx, e, now, now.Add(time.Minute)); err != nil {
					errs <- err
					return
				}
				e.Outcome, e.Channel, e.MessageTS = meetingbot.Sent, "C1", "1.1"
				if err := s.Record(ctx, e, now); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for range ways {
		if err := <-errs; err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(2*b.N)/b.Elapsed().Seconds(), "writes/s")
}
