package postgres_test

import (
	"testing"

	"github.com/meetingbot/meetingbot/storage/postgres"
	"github.com/meetingbot/meetingbot/storage/postgres/pgtest"
	"github.com/meetingbot/meetingbot/storage/storetest"
)

// TestTimerContract runs the contract of durable timers on PostgreSQL:
// each test in a schema of its own, each Store one replica on it.
func TestTimerContract(t *testing.T) {
	pgtest.Server(t)
	storetest.RunTimers(t, func(t *testing.T) storetest.TimerOpener {
		url := pgtest.URL(t)
		return func(t *testing.T) storetest.TimerStore { return open(t, url, postgres.Options{}) }
	})
}
