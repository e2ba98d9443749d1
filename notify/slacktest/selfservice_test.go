package slacktest_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"

	"github.com/meetingbot/meetingbot/notify/slacktest"
)

// selfServiceFixture reads a shape Slack documents, kept beside the package
// that consumes it.
func selfServiceFixture(t *testing.T, name string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "selfservice", "testdata", "slack", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("fixture %s: %v", name, err)
	}
	return m
}

// absentKeys lists the keys of want that got lacks; a key Slack documents
// as null may be null.
func absentKeys(want, got map[string]any) []string {
	var out []string
	for k, v := range want {
		if g, ok := got[k]; !ok || (g == nil && v != nil) {
			out = append(out, k)
		}
	}
	return out
}

func postJSON(t *testing.T, s *slacktest.Server, method, token string, body any) map[string]any {
	t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, s.URL()+method, strings.NewReader(string(b)))
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	defer resp.Body.Close()
	var got map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		t.Fatalf("decode %s: %v", method, err)
	}
	return got
}

func TestSelfServiceMethodsHaveDocumentedShape(t *testing.T) {
	s := seeded(t)
	s.SetProfile("U0ALICE001", slacktest.Profile{TZ: "Europe/Berlin", Admin: true})
	with := func(kv ...string) url.Values {
		v := url.Values{"token": {slacktest.Token}}
		for i := 0; i < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return v
	}
	_, info := post(t, s, "users.info", with("user", "U0ALICE001"))
	_, eph := post(t, s, "chat.postEphemeral", with("channel", "C0GENERAL1", "user", "U0ALICE001", "text", "only you"))
	view := postJSON(t, s, "views.publish", slacktest.Token, map[string]any{
		"user_id": "U0ALICE001", "view": map[string]any{"type": "home", "blocks": []any{}},
	})
	open := postJSON(t, s, "apps.connections.open", slacktest.AppToken, map[string]any{})
	for name, got := range map[string]map[string]any{
		"users.info": info, "chat.postEphemeral": eph, "views.publish": view, "apps.connections.open": open,
	} {
		want := selfServiceFixture(t, name)
		if missing := absentKeys(want, got); len(missing) > 0 {
			t.Errorf("%s lacks documented fields %v; got %v", name, missing, got)
		}
		for _, inner := range []string{"user", "view"} {
			if w, ok := want[inner].(map[string]any); ok {
				g, _ := got[inner].(map[string]any)
				if missing := absentKeys(w, g); len(missing) > 0 {
					t.Errorf("%s.%s lacks documented fields %v", name, inner, missing)
				}
			}
		}
	}

	api := slack.New(slacktest.Token, slack.OptionAPIURL(s.URL()))
	u, err := api.GetUserInfo("U0ALICE001")
	if err != nil {
		t.Fatalf("GetUserInfo: %v", err)
	}
	if u.TZ != "Europe/Berlin" || !u.IsAdmin || u.Profile.Email != "alice@example.com" {
		t.Errorf("GetUserInfo = tz %q admin %v email %q, want Europe/Berlin true alice@example.com", u.TZ, u.IsAdmin, u.Profile.Email)
	}
	s.SetProfile("U0ALICE001", slacktest.Profile{HideEmail: true})
	if u, _ := api.GetUserInfo("U0ALICE001"); u.Profile.Email != "" || u.TZ != "America/Los_Angeles" {
		t.Errorf("GetUserInfo without users:read.email = email %q tz %q, want none and Slack's default zone", u.Profile.Email, u.TZ)
	}
	if _, err := api.GetUserInfo("U0NOBODY01"); err == nil || err.Error() != "user_not_found" {
		t.Errorf("GetUserInfo(unknown) error = %v, want user_not_found", err)
	}
}

func TestViewsPublishRefusesWhatSlackRefuses(t *testing.T) {
	s := seeded(t)
	api := slack.New(slacktest.Token, slack.OptionAPIURL(s.URL()))
	ctx := context.Background()
	section := slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, "hello", false, false), nil, nil)
	publish := func(user string, hash *string, blocks ...slack.Block) error {
		_, err := api.PublishViewContext(ctx, slack.PublishViewContextRequest{
			UserID: user, Hash: hash, View: slack.HomeTabViewRequest{Type: slack.VTHomeTab, Blocks: slack.Blocks{BlockSet: blocks}},
		})
		return err
	}
	if err := publish("U0ALICE001", nil, section); err != nil {
		t.Fatalf("PublishView: %v", err)
	}
	v, ok := s.HomeView("U0ALICE001")
	if !ok || !strings.Contains(string(v.Blocks), "hello") {
		t.Fatalf("HomeView = %v, %v; want the published blocks", v, ok)
	}

	many := make([]slack.Block, 101)
	for i := range many {
		many[i] = section
	}
	emptySelect := slack.NewActionBlock("b", slack.NewOptionsSelectBlockElement(slack.OptTypeStatic, nil, "offsets"))
	picker := slack.NewTimePickerBlockElement("agenda")
	picker.InitialTime = "8:30"
	stale := "1.stale"
	for _, tt := range []struct {
		name   string
		user   string
		hash   *string
		blocks []slack.Block
		want   string
	}{
		{"101 blocks", "U0ALICE001", nil, many, "invalid_blocks"},
		{"a select without options", "U0ALICE001", nil, []slack.Block{emptySelect}, "invalid_blocks"},
		{"a time not HH:mm", "U0ALICE001", nil, []slack.Block{slack.NewActionBlock("a", picker)}, "invalid_blocks"},
		{"an outdated hash", "U0ALICE001", &stale, []slack.Block{section}, "hash_conflict"},
		{"an unknown user", "U0NOBODY01", nil, []slack.Block{section}, "user_not_found"},
	} {
		if err := publish(tt.user, tt.hash, tt.blocks...); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("PublishView(%s) error = %v, want %s", tt.name, err, tt.want)
		}
	}
	if n := len(s.HomeViews()); n != 1 {
		t.Errorf("HomeViews() has %d views, want only the valid one", n)
	}
	if err := publish("U0ALICE001", &v.Hash, section); err != nil {
		t.Errorf("PublishView(current hash) error = %v", err)
	}
}

func TestResponseURLTakesFiveMessagesWithinThirtyMinutes(t *testing.T) {
	s := seeded(t)
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	s.SetClock(func() time.Time { return now })
	ctx := context.Background()
	u := s.ResponseURL()
	for i := range 5 {
		if err := slack.PostWebhookContext(ctx, u, &slack.WebhookMessage{ResponseType: "ephemeral", Text: "reply"}); err != nil {
			t.Fatalf("PostWebhook #%d: %v", i+1, err)
		}
	}
	if err := slack.PostWebhookContext(ctx, u, &slack.WebhookMessage{Text: "sixth"}); err == nil {
		t.Error("PostWebhook #6 succeeded; Slack takes 5 messages per response_url")
	}
	late := s.ResponseURL()
	now = now.Add(31 * time.Minute)
	if err := slack.PostWebhookContext(ctx, late, &slack.WebhookMessage{Text: "late"}); err == nil {
		t.Error("PostWebhook after 31 minutes succeeded; a response_url expires after 30")
	}
	got := s.Responses()
	if len(got) != 5 || got[0].ResponseType != "ephemeral" || got[0].Text != "reply" || got[0].URL != u {
		t.Errorf("Responses() = %+v, want the 5 accepted replies", got)
	}

	api := slack.New(slacktest.Token, slack.OptionAPIURL(s.URL()))
	if _, err := api.PostEphemeral("C0GENERAL1", "U0ALICE001", slack.MsgOptionText("psst", false)); err != nil {
		t.Fatalf("PostEphemeral: %v", err)
	}
	if _, err := api.PostEphemeral("C0RANDOM01", "U0ALICE001", slack.MsgOptionText("psst", false)); err == nil || err.Error() != "not_in_channel" {
		t.Errorf("PostEphemeral(channel without the bot) error = %v, want not_in_channel", err)
	}
	if e := s.Ephemerals(); len(e) != 1 || e[0].User != "U0ALICE001" || e[0].Text != "psst" {
		t.Errorf("Ephemerals() = %+v", e)
	}
}

func TestSocketModeSpeaksToSlackGo(t *testing.T) {
	s := seeded(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	bot := slack.New(slacktest.Token, slack.OptionAPIURL(s.URL()))
	if _, _, err := bot.StartSocketModeContext(ctx); err == nil || err.Error() != "not_allowed_token_type" {
		t.Errorf("apps.connections.open with a bot token: error = %v, want not_allowed_token_type", err)
	}

	api := slack.New(slacktest.Token, slack.OptionAPIURL(s.URL()), slack.OptionAppLevelToken(slacktest.AppToken))
	client := socketmode.New(api)
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	go func() { _ = client.RunContext(runCtx) }()
	if err := s.WaitSocket(ctx, 1); err != nil {
		t.Fatalf("WaitSocket: %v", err)
	}

	cmd := slack.SlashCommand{Command: "/meetingbot", Text: "help", UserID: "U0ALICE001", ChannelID: "C0GENERAL1"}
	id, err := s.SendEnvelope(slacktest.Envelope{Type: "slash_commands", Payload: cmd, AcceptsResponsePayload: true})
	if err != nil {
		t.Fatalf("SendEnvelope: %v", err)
	}
	var hello, got bool
	for !got {
		select {
		case evt := <-client.Events:
			switch evt.Type {
			case socketmode.EventTypeHello:
				hello = true
			case socketmode.EventTypeSlashCommand:
				c := evt.Data.(slack.SlashCommand)
				if c.Text != "help" || c.UserID != "U0ALICE001" {
					t.Errorf("slash command = %+v", c)
				}
				if err := client.Ack(*evt.Request, map[string]any{"text": "hi"}); err != nil {
					t.Fatalf("Ack: %v", err)
				}
				got = true
			}
		case <-ctx.Done():
			t.Fatal("no slash command arrived")
		}
	}
	if !hello {
		t.Error("no hello before the first envelope")
	}
	ack, err := s.WaitAck(ctx, id)
	if err != nil || !strings.Contains(string(ack.Payload), `"hi"`) {
		t.Fatalf("WaitAck = %s, %v; want the ack's payload", ack.Payload, err)
	}

	// Slack refreshes connections: the client reconnects on a new URL.
	if err := s.Disconnect("refresh_requested"); err != nil {
		t.Fatalf("Disconnect: %v", err)
	}
	if err := s.WaitSocket(ctx, 2); err != nil {
		t.Fatalf("no reconnection after disconnect: %v", err)
	}
	if n := len(s.CallsTo("apps.connections.open")); n != 3 { // the bot token's, and one per connection
		t.Errorf("apps.connections.open called %d times, want 3", n)
	}
	stop()
	if _, err := s.SendEnvelope(slacktest.Envelope{Type: "events_api"}); err != nil && !errors.Is(err, slacktest.ErrNoSocket) {
		t.Errorf("SendEnvelope after the app left: %v", err)
	}
}

func TestSocketModeMessagesHaveDocumentedShape(t *testing.T) {
	s := seeded(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	open := postJSON(t, s, "apps.connections.open", slacktest.AppToken, map[string]any{})
	link, _ := open["url"].(string)
	ws, _, err := websocket.DefaultDialer.DialContext(ctx, link, nil)
	if err != nil {
		t.Fatalf("dial %q: %v", link, err)
	}
	defer ws.Close()
	read := func() map[string]any {
		t.Helper()
		var m map[string]any
		if err := ws.ReadJSON(&m); err != nil {
			t.Fatalf("read: %v", err)
		}
		return m
	}
	if missing := absentKeys(selfServiceFixture(t, "socket.hello"), read()); len(missing) > 0 {
		t.Errorf("hello lacks documented fields %v", missing)
	}
	if _, _, err := websocket.DefaultDialer.DialContext(ctx, link, nil); err == nil {
		t.Error("a second dial of a one-time URL succeeded")
	}

	events := selfServiceFixture(t, "socket.events_api")
	id, err := s.SendEnvelope(slacktest.Envelope{Type: "events_api", Payload: events["payload"]})
	if err != nil {
		t.Fatalf("SendEnvelope: %v", err)
	}
	env := read()
	if missing := absentKeys(events, env); len(missing) > 0 {
		t.Errorf("events_api envelope lacks documented fields %v", missing)
	}
	if env["envelope_id"] != id || env["type"] != "events_api" {
		t.Errorf("envelope = %v, want id %s", env, id)
	}
	if err := ws.WriteJSON(map[string]any{"envelope_id": id}); err != nil {
		t.Fatal(err)
	}
	if ack, err := s.WaitAck(ctx, id); err != nil || ack.Payload != nil {
		t.Errorf("WaitAck = %+v, %v; want an ack without payload", ack, err)
	}
	if err := s.Disconnect("refresh_requested"); err != nil {
		t.Fatal(err)
	}
	if missing := absentKeys(selfServiceFixture(t, "socket.disconnect"), read()); len(missing) > 0 {
		t.Errorf("disconnect lacks documented fields %v", missing)
	}
}

// TestSignMatchesSlacksExample signs the example of Slack's "Verifying
// requests from Slack" and checks it with slack-go's verifier.
func TestSignMatchesSlacksExample(t *testing.T) {
	const secret = "8f742231b10e8888abcd99yyyzzz85a5"
	body := []byte("token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c")
	h := http.Header{}
	slacktest.Sign(h, body, secret, time.Unix(1531420618, 0))
	if got, want := h.Get("X-Slack-Signature"), "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503"; got != want {
		t.Errorf("Sign(Slack's example) = %s, want %s", got, want)
	}
	slacktest.Sign(h, body, secret, time.Now())
	v, err := slack.NewSecretsVerifier(h, secret)
	if err != nil {
		t.Fatal(err)
	}
	v.Write(body)
	if err := v.Ensure(); err != nil {
		t.Errorf("slack-go refuses the signature: %v", err)
	}
}
