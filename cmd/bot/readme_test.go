package main

import (
	"flag"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot/calendar"
	"github.com/meetingbot/meetingbot/config"
)

var update = flag.Bool("update", false, "rewrite the configuration table in docs/configuration.md from config.Vars")

const (
	tableStart = "<!-- config table: generated from config.Vars; rewrite with go test ./cmd/bot -run Readme -update -->\n"
	tableEnd   = "<!-- end config table -->"
)

// TestReadmeConfigurationTable keeps the configuration table of
// docs/configuration.md the one `bot -h` prints: both come from config.Vars.
func TestReadmeConfigurationTable(t *testing.T) {
	const path = "../../docs/configuration.md"
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
		t.Errorf("%s configuration table = \n%s\nwant (go test ./cmd/bot -run Readme -update)\n%s", path, got, want)
	}
	for _, v := range config.Vars {
		if !strings.Contains(got, "`"+v.Name+"`") {
			t.Errorf("%s configuration table lacks %s", path, v.Name)
		}
	}
}

// TestHelpAndReadmeAgreeOnTheDemo checks that `bot -h` and the README say
// the same about when the demo runs, and that the setup page gives the
// gcloud command Google still allows for the personal route, the one the
// bot's own hints give.
func TestHelpAndReadmeAgreeOnTheDemo(t *testing.T) {
	p := start(t, t.TempDir(), nil, "-h")
	if code, _ := p.wait(30 * time.Second); code != 0 {
		t.Fatalf("bot -h: exit %d", code)
	}
	help := strings.Join(strings.Fields(p.out.String()), " ")
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(strings.ReplaceAll(string(readme), "`", "")), " ")
	if !strings.Contains(help, config.DemoWhen) || !strings.Contains(text, config.DemoWhen) {
		t.Errorf("bot -h and the README must both say the demo runs %q", config.DemoWhen)
	}
	if config.UserCredentialsCommand != calendar.UserCredentialsCommand {
		t.Errorf("config and calendar give different gcloud commands:\n%s\n%s", config.UserCredentialsCommand, calendar.UserCredentialsCommand)
	}
	setup, err := os.ReadFile("../../docs/setup.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range []string{string(readme), string(setup)} {
		if strings.Contains(doc, "login --scopes=") {
			t.Errorf("the docs must give gcloud with --client-id-file, never login --scopes= alone (Google blocks Calendar scopes through gcloud's own client)")
		}
	}
	if !strings.Contains(string(setup), "--client-id-file=client.json") {
		t.Errorf("docs/setup.md must give gcloud with --client-id-file (Google blocks Calendar scopes through gcloud's own client)")
	}
}
