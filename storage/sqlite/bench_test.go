package sqlite_test

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
)

// BenchmarkLedger measures a reminder's two ledger writes (Claim, then Settle
// as sent) against a baseline in the same run: one plain INSERT transaction
// on a SQLite file with the same settings, the least a durable write costs.
func BenchmarkLedger(b *testing.B) {
	now := time.Date(2026, 11, 30, 8, 50, 0, 0, time.UTC)
	b.Run("baseline-insert", func(b *testing.B) {
		path := filepath.Join(b.TempDir(), "plain.db")
		db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_txlock=immediate")
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
		if _, err := db.Exec(`CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER) STRICT`); err != nil {
			b.Fatal(err)
		}
		stmt, err := db.Prepare(`INSERT INTO t (k, v) VALUES (?, ?)`)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			tx, err := db.Begin()
			if err != nil {
				b.Fatal(err)
			}
			if _, err := tx.Stmt(stmt).Exec(fmt.Sprint("k", i), i); err != nil {
				b.Fatal(err)
			}
			if err := tx.Commit(); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "writes/s")
	})
	b.Run("claim-settle", func(b *testing.B) {
		s := open(b, filepath.Join(b.TempDir(), "bot.db"))
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			e := meetingbot.Entry{Subscription: "alice", Key: fmt.Sprint("ev", i, ":10m:2026-11-30T09:00:00Z"), EventID: "ev",
				Offset: 10 * time.Minute, Start: now.Add(10 * time.Minute), TriggerAt: now}
			if _, _, err := s.Claim(ctx, e, now, now.Add(time.Minute)); err != nil {
				b.Fatal(err)
			}
			e.Outcome, e.Channel, e.MessageTS = meetingbot.Sent, "C1", "1.1"
			if err := s.Record(ctx, e, now); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(2*b.N)/b.Elapsed().Seconds(), "writes/s")
	})
}
