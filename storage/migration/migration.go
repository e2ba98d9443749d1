// Package migration reads a store's numbered SQL migrations from its
// embedded files, for the SQLite store and the PostgreSQL store alike,
// which may not import each other. Applying them is each store's own:
// how to lock, and how to record a version, differ by database.
package migration

import (
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

// Migration is one numbered SQL file.
type Migration struct {
	Version int    // the number its name starts with
	Name    string // its file name, e.g. 001_init.sql
	SQL     string
}

// Load reads the files matching dir/*.sql in fsys, each named with a
// number and an underscore (001_init.sql), in order of that number. It
// fails on a name without one, naming the file.
func Load(fsys fs.FS, dir string) ([]Migration, error) {
	names, err := fs.Glob(fsys, path.Join(dir, "*.sql"))
	if err != nil {
		return nil, fmt.Errorf("list migrations: %w", err)
	}
	var migs []Migration
	for _, name := range names {
		base := path.Base(name)
		num, _, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil {
			return nil, fmt.Errorf("migration %s: name must start with a number and an underscore", base)
		}
		body, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, fmt.Errorf("read migration %s: %w", base, err)
		}
		migs = append(migs, Migration{Version: v, Name: base, SQL: string(body)})
	}
	sort.Slice(migs, func(i, j int) bool { return migs[i].Version < migs[j].Version })
	return migs, nil
}
