package notify_test

import (
	"context"
	"slices"
	"testing"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/notify"
	"github.com/meetingbot/meetingbot/notify/slacktest"
)

// TestGrant reads the token's identity and its scopes from auth.test's
// x-oauth-scopes header, as the emulator sends it.
func TestGrant(t *testing.T) {
	e := newEnv(t)
	g, err := e.slack.Grant(context.Background())
	if err != nil {
		t.Fatalf("Grant() error = %v", err)
	}
	if g.UserID != slacktest.BotUserID || g.TeamID != slacktest.TeamID || !g.ScopesKnown || !slices.Equal(g.Scopes, slacktest.DefaultScopes) {
		t.Errorf("Grant() = %+v, want the bot %s in %s with the default scopes", g, slacktest.BotUserID, slacktest.TeamID)
	}
	e.srv.SetScopes("chat:write", "im:write")
	if g, err = e.slack.Grant(context.Background()); err != nil || !slices.Equal(g.Scopes, []string{"chat:write", "im:write"}) {
		t.Errorf("Grant() after SetScopes = %+v, %v; want chat:write and im:write", g, err)
	}
	e.srv.SetScopes()
	if g, err = e.slack.Grant(context.Background()); err != nil || !g.ScopesKnown || len(g.Scopes) != 0 {
		t.Errorf("Grant() with no scopes = %+v, %v; want known and none", g, err)
	}

	bad := notify.New(notify.Config{Token: "xoxb-1-2-wrong", APIURL: e.srv.URL()})
	if _, err := bad.Grant(context.Background()); err == nil || !meetingbot.IsPermanent(err) {
		t.Errorf("Grant() with a wrong token = %v, want a permanent error", err)
	}
}
