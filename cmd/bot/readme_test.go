package main

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/meetingbot/meetingbot/calendar"
	"github.com/meetingbot/meetingbot/config"
)

// TestHelpAndReadmeAgreeOnTheDemo checks that `bot -h` and the README say
// the same about when the demo runs, and that the setup page gives the
// gcloud command Google still allows for the personal route, the one the
// bot's own hints give.
func TestHelpAndReadmeAgreeOnTheDemo(t *testing.T) {
	var stdout, stderr strings.Builder
	if err := run(context.Background(), []string{"-h"}, environ(), &stdout, &stderr); err != nil {
		t.Fatalf("bot -h: %v", err)
	}
	help := strings.Join(strings.Fields(stdout.String()), " ")
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
