package postgres_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/meetingbot/meetingbot/storage/postgres"
	"github.com/meetingbot/meetingbot/storage/postgres/pgtest"
	"github.com/meetingbot/meetingbot/storage/storetest"
)

// open opens a Store on url, closed when t ends.
func open(t testing.TB, url string, opts postgres.Options) *postgres.Store {
	t.Helper()
	s, err := postgres.Open(t.Context(), url, opts)
	require.NoError(t, err, "Open")
	t.Cleanup(func() { s.Close() })
	return s
}

// ownClock marks the PostgreSQL store as one that writes claims on the
// database's clock (see postgres.Store.Claim).
type ownClock struct{ *postgres.Store }

func (ownClock) OwnClock() {}

// TestContract runs the store contract on PostgreSQL: each test in a
// schema of its own, each Store one replica on it.
func TestContract(t *testing.T) {
	pgtest.Server(t)
	storetest.Run(t, func(t *testing.T) storetest.Opener {
		url := pgtest.URL(t)
		return func(t *testing.T) storetest.Store { return ownClock{open(t, url, postgres.Options{})} }
	})
}
