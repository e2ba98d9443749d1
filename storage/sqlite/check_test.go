package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/meetingbot/meetingbot/storage/sqlite"
)

// TestCheck looks at a path with no database, a database the bot
// migrated, and a file that is not SQLite, and leaves each as it was.
func TestCheck(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()

	none := filepath.Join(dir, "none.db")
	h, err := sqlite.Check(ctx, none)
	if err != nil || h.Migrated || len(h.Pending) == 0 {
		t.Errorf("Check(no file) = %+v, %v; want not migrated, every migration pending", h, err)
	}
	if _, err := os.Stat(none); !os.IsNotExist(err) {
		t.Errorf("Check(no file) created it (stat: %v)", err)
	}

	path := filepath.Join(dir, "reminders.db")
	s, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if h, err := sqlite.Check(ctx, path); err != nil || !h.Migrated || len(h.Pending) != 0 {
		t.Errorf("Check(migrated) = %+v, %v; want migrated, nothing pending", h, err)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var probes int
	if err := db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE name = 'meetingbot_doctor_probe'`).Scan(&probes); err != nil || probes != 0 {
		t.Errorf("after Check, the probe table is there %d times (%v), want rolled back", probes, err)
	}

	junk := filepath.Join(dir, "junk.db")
	if err := os.WriteFile(junk, []byte("not a database at all, no"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := sqlite.Check(ctx, junk); !errors.Is(err, sqlite.ErrNotSQLite) {
		t.Errorf("Check(junk) = %v, want ErrNotSQLite", err)
	}
}
