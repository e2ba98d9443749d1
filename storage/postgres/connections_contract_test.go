package postgres_test

import (
	"testing"

	"github.com/meetingbot/meetingbot/storage/postgres"
	"github.com/meetingbot/meetingbot/storage/postgres/pgtest"
	"github.com/meetingbot/meetingbot/storage/storetest"
)

// TestConnectionsContract runs the contract of the connection tables on
// PostgreSQL: each test in a schema of its own, each Store one replica.
func TestConnectionsContract(t *testing.T) {
	pgtest.Server(t)
	storetest.RunConnections(t, func(t *testing.T) storetest.ConnectionOpener {
		url := pgtest.URL(t)
		return func(t *testing.T) storetest.ConnectionStore { return open(t, url, postgres.Options{}) }
	})
}
