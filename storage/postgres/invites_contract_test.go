package postgres_test

import (
	"testing"

	"github.com/meetingbot/meetingbot/storage/postgres"
	"github.com/meetingbot/meetingbot/storage/postgres/pgtest"
	"github.com/meetingbot/meetingbot/storage/storetest"
)

// TestInvitesContract runs the contract of migration 016 on PostgreSQL:
// each test in a schema of its own, each Store one replica.
func TestInvitesContract(t *testing.T) {
	pgtest.Server(t)
	storetest.RunInvites(t, func(t *testing.T) storetest.InviteOpener {
		url := pgtest.URL(t)
		return func(t *testing.T) storetest.InviteStore { return open(t, url, postgres.Options{}) }
	})
}
