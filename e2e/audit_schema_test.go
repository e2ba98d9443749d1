package e2e

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite"
)

// bot audit on a database an older bot left: it refuses, saying to start
// the bot once (which migrates it), and changes nothing, for a bot of the
// older version may still run on it.
func TestAuditRefusesAnOlderSchema(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	env := w.env()
	init, err := os.ReadFile(filepath.Join("..", "storage", "sqlite", "migrations", "001_init.sql"))
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", env["DATABASE_PATH"])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(string(init) + `;
		CREATE TABLE migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_ms INTEGER NOT NULL) STRICT;
		INSERT INTO migrations VALUES (1, '001_init.sql', 0)`); err != nil {
		t.Fatal(err)
	}
	db.Close()

	a := start(t, w.dir, env, "audit", "--since", "1h")
	code, _ := a.wait(30 * time.Second)
	if out := a.out.String(); code == 0 || !strings.Contains(out, "start the bot once on it") {
		t.Errorf("bot audit on an older schema: exit %d, output %q; want it refused, saying to start the bot once", code, out)
	}
	db, err = sql.Open("sqlite", env["DATABASE_PATH"])
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM migrations`).Scan(&n); err != nil || n != 1 {
		t.Errorf("migrations recorded after bot audit = %d (%v), want 1: audit migrated the database", n, err)
	}
}
