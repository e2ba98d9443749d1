package migration_test

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/meetingbot/meetingbot/storage/migration"
)

func TestLoadOrdersByNumber(t *testing.T) {
	fsys := fstest.MapFS{
		"m/010_later.sql": {Data: []byte("B")},
		"m/002_next.sql":  {Data: []byte("A")},
		"m/001_init.sql":  {Data: []byte("I")},
		"m/README":        {Data: []byte("not a migration")},
	}
	migs, err := migration.Load(fsys, "m")
	if err != nil {
		t.Fatalf("Load = %v", err)
	}
	var got []string
	for _, m := range migs {
		got = append(got, m.Name+"="+m.SQL)
	}
	if want := "001_init.sql=I 002_next.sql=A 010_later.sql=B"; strings.Join(got, " ") != want {
		t.Errorf("Load = %v, want %s", got, want)
	}
	if migs[2].Version != 10 {
		t.Errorf("Load()[2].Version = %d, want 10", migs[2].Version)
	}
}

func TestLoadRefusesAnUnnumberedFile(t *testing.T) {
	_, err := migration.Load(fstest.MapFS{"m/init.sql": {Data: []byte("x")}}, "m")
	if err == nil || !strings.Contains(err.Error(), "init.sql: name must start with a number") {
		t.Errorf("Load(init.sql) = %v, want an error naming the file", err)
	}
}
