package main

import (
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/meetingbot/meetingbot/config"
)

var update = flag.Bool("update", false, "rewrite the README's configuration table from config.Vars")

const (
	tableStart = "<!-- config table: generated from config.Vars; rewrite with go test ./cmd/bot -run Readme -update -->\n"
	tableEnd   = "<!-- end config table -->"
)

// TestReadmeConfigurationTable keeps the README's configuration table the
// one `bot -h` prints: both come from config.Vars.
func TestReadmeConfigurationTable(t *testing.T) {
	const path = "../../README.md"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	i := strings.Index(readme, tableStart)
	j := strings.Index(readme, tableEnd)
	if i < 0 || j < i {
		t.Fatalf("README.md lacks the configuration table markers %q … %q", tableStart, tableEnd)
	}
	got := readme[i+len(tableStart) : j]
	want := config.Markdown()
	if *update {
		if err := os.WriteFile(path, []byte(readme[:i+len(tableStart)]+want+readme[j:]), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if got != want {
		t.Errorf("README configuration table = \n%s\nwant (go test ./cmd/bot -run Readme -update)\n%s", got, want)
	}
	for _, v := range config.Vars {
		if !strings.Contains(got, "`"+v.Name+"`") {
			t.Errorf("README configuration table lacks %s", v.Name)
		}
	}
}
