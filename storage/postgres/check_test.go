package postgres_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/meetingbot/meetingbot/storage/postgres"
	"github.com/meetingbot/meetingbot/storage/postgres/pgtest"
)

// TestCheck looks at an empty schema and one the bot migrated, writing
// nothing that stays and registering no replica.
func TestCheck(t *testing.T) {
	url := pgtest.URL(t)
	ctx := context.Background()
	h, err := postgres.Check(ctx, url)
	if err != nil || h.Migrated || len(h.Pending) == 0 || h.Schema == "" {
		t.Fatalf("Check(empty schema) = %+v, %v; want not migrated, every migration pending", h, err)
	}
	s, err := postgres.Open(ctx, url, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	var before, after int
	if err := c.QueryRow(ctx, `SELECT count(*) FROM replicas`).Scan(&before); err != nil {
		t.Fatal(err)
	}
	if h, err := postgres.Check(ctx, url); err != nil || !h.Migrated || len(h.Pending) != 0 {
		t.Errorf("Check(migrated) = %+v, %v; want migrated, nothing pending", h, err)
	}
	if err := c.QueryRow(ctx, `SELECT count(*) FROM replicas`).Scan(&after); err != nil || after != before {
		t.Errorf("replicas after Check = %d (%v), before %d: want none registered", after, err, before)
	}
	var probe bool
	if err := c.QueryRow(ctx, `SELECT to_regclass('meetingbot_doctor_probe') IS NOT NULL`).Scan(&probe); err != nil || probe {
		t.Errorf("after Check, the probe table exists: %v (%v), want rolled back", probe, err)
	}
}
