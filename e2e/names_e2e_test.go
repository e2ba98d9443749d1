package e2e

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot/storage/sqlite"
)

// A #name destination is listed for once: the bot says at start-up that
// channel IDs need no listing, keeps the name it found in its database,
// and after a restart posts there without listing Slack's channels again.
func TestChannelNameSurvivesARestart(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	env := w.env("CALENDARS=" + teamID)
	p1 := start(t, w.dir, env)
	p1.ready()
	eventually(t, 20*time.Second, "#eng kept in the database", func() bool { return keptNames(t, env["DATABASE_PATH"])["eng"] == engID })
	p1.signal(syscall.SIGTERM)
	if code, _ := p1.wait(15 * time.Second); code != 0 {
		t.Fatalf("bot exit status = %d, want 0", code)
	}
	if out := p1.out.String(); !strings.Contains(out, "CALENDARS names channels by #name") || !strings.Contains(out, `"channels":"#eng"`) {
		t.Errorf("start-up output lacks the line saying that #eng costs a listing:\n%s", out)
	}
	lists := len(w.slack.CallsTo("conversations.list"))

	p2 := start(t, w.dir, env)
	p2.ready()
	begins := at(8 * time.Second)
	w.meetingIn(t, team, "sync", "Team sync", begins)
	m := w.waitMessage(t, "Team sync", 20*time.Second)
	if m.Channel != engID {
		t.Errorf("reminder posted to %s, want #eng (%s)", m.Channel, engID)
	}
	if n := len(w.slack.CallsTo("conversations.list")); n != lists {
		t.Errorf("conversations.list calls after the restart = %d, want still %d", n, lists)
	}
}

// keptNames reads the channel names the bot at path keeps.
func keptNames(t *testing.T, path string) map[string]string {
	t.Helper()
	s, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	names, err := s.ChannelNames(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return names
}
