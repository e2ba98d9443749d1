package meetingbot_test

import (
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/meetingbot/meetingbot/config"
)

var update = flag.Bool("update", false, "rewrite the configuration table in docs/configuration.md from config.Vars")

const (
	tableStart = "<!-- config table: generated from config.Vars; rewrite with go test . -run Readme -update -->\n"
	tableEnd   = "<!-- end config table -->"
)

// TestReadmeConfigurationTable keeps the configuration table of
// docs/configuration.md the one `bot -h` prints: both come from config.Vars.
func TestReadmeConfigurationTable(t *testing.T) {
	const path = "docs/configuration.md"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	i := strings.Index(readme, tableStart)
	j := strings.Index(readme, tableEnd)
	if i < 0 || j < i {
		t.Fatalf("%s lacks the configuration table markers %q … %q", path, tableStart, tableEnd)
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
		t.Errorf("%s configuration table = \n%s\nwant (go test . -run Readme -update)\n%s", path, got, want)
	}
	for _, v := range config.Vars {
		if !strings.Contains(got, "`"+v.Name+"`") {
			t.Errorf("%s configuration table lacks %s", path, v.Name)
		}
	}
}
