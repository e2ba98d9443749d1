package slacktest_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/meetingbot/meetingbot/notify/slacktest"
)

func seeded(t *testing.T) *slacktest.Server {
	t.Helper()
	s := slacktest.NewServer()
	t.Cleanup(s.Close)
	s.AddUser(slacktest.User{ID: "U0ALICE001", Name: "alice", Email: "alice@example.com"})
	s.AddChannel(slacktest.Channel{ID: "C0GENERAL1", Name: "general", Member: true})
	s.AddChannel(slacktest.Channel{ID: "C0RANDOM01", Name: "random"})
	s.AddChannel(slacktest.Channel{ID: "G0SECRET01", Name: "secret", Private: true, Member: true})
	return s
}

func post(t *testing.T, s *slacktest.Server, method string, form url.Values) (int, map[string]any) {
	t.Helper()
	resp, err := http.PostForm(s.URL()+method, form)
	if err != nil {
		t.Fatalf("PostForm(%s) error: %v", method, err)
	}
	defer resp.Body.Close()
	var body map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("decode %s: %v", method, err)
	}
	return resp.StatusCode, body
}

// The emulator must answer with at least the fields Slack documents, so code
// tested against it does not depend on a field only the emulator has.
func TestResponsesHaveDocumentedShape(t *testing.T) {
	s := seeded(t)
	tok := url.Values{"token": {slacktest.Token}}
	with := func(kv ...string) url.Values {
		v := url.Values{"token": {slacktest.Token}}
		for i := 0; i < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return v
	}
	md := `{"event_type":"task_created","event_payload":{"id":"TK-1"}}`
	post(t, s, "chat.postMessage", with("channel", "C0GENERAL1", "text", "one", "metadata", md))
	post(t, s, "chat.postMessage", with("channel", "C0GENERAL1", "text", "two", "metadata", md))
	_, got := post(t, s, "conversations.history", with("channel", "C0GENERAL1", "limit", "1", "include_all_metadata", "1"))
	msg := got["messages"].([]any)[0].(map[string]any)
	wantMsg := fixture(t, "conversations.history")["messages"].([]any)[0].(map[string]any)
	if missing := missingKeys(wantMsg, msg); len(missing) > 0 {
		t.Errorf("history message lacks documented fields %v; got %v", missing, msg)
	}
	tests := []struct {
		method string
		form   url.Values
	}{
		{"auth.test", tok},
		{"chat.postMessage", with("channel", "C0GENERAL1", "text", "hi")},
		{"conversations.open", with("users", "U0ALICE001")},
		{"conversations.list", with("limit", "1")},
		{"conversations.history", with("channel", "C0GENERAL1", "limit", "1", "include_all_metadata", "1")},
		{"users.lookupByEmail", with("email", "alice@example.com")},
	}
	for _, tt := range tests {
		t.Run(tt.method, func(t *testing.T) {
			_, got := post(t, s, tt.method, tt.form)
			want := fixture(t, tt.method)
			if missing := missingKeys(want, got); len(missing) > 0 {
				t.Errorf("%s response lacks documented fields %v; got %v", tt.method, missing, got)
			}
		})
	}
	_, got = post(t, s, "chat.postMessage", with("channel", "C0NOWHERE1", "text", "hi"))
	if missing := missingKeys(fixture(t, "error"), got); len(missing) > 0 {
		t.Errorf("error response lacks %v; got %v", missing, got)
	}
}

func fixture(t *testing.T, name string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "slack", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("fixture %s: %v", name, err)
	}
	return m
}

func missingKeys(want, got map[string]any) []string {
	var out []string
	for k, v := range want {
		g, ok := got[k]
		if !ok || g == nil {
			out = append(out, k)
			continue
		}
		if wm, ok := v.(map[string]any); ok && k == "response_metadata" {
			gm, _ := g.(map[string]any)
			for _, sub := range missingKeys(wm, gm) {
				out = append(out, k+"."+sub)
			}
		}
	}
	slices.Sort(out)
	return out
}

func TestSlackGoRoundTrip(t *testing.T) {
	s := seeded(t)
	var hooked []slacktest.Message
	done := make(chan struct{}, 10)
	s.OnMessage(func(m slacktest.Message) { hooked = append(hooked, m); done <- struct{}{} })
	api := slack.New(slacktest.Token, slack.OptionAPIURL(s.URL()))
	ctx := context.Background()

	auth, err := api.AuthTestContext(ctx)
	if err != nil || auth.BotID != slacktest.BotID || auth.UserID != slacktest.BotUserID {
		t.Fatalf("AuthTest() = %+v, %v, want bot %s", auth, err, slacktest.BotID)
	}
	bot, err := api.GetBotInfoContext(ctx, slack.GetBotInfoParameters{Bot: auth.BotID})
	if err != nil || bot.AppID != slacktest.AppID || bot.UserID != slacktest.BotUserID {
		t.Fatalf("GetBotInfo(%s) = %+v, %v, want app %s", auth.BotID, bot, err, slacktest.AppID)
	}
	if _, err := api.GetBotInfoContext(ctx, slack.GetBotInfoParameters{Bot: "B0NOTOURS1"}); err == nil || err.Error() != "bot_not_found" {
		t.Fatalf("GetBotInfo(another bot) error = %v, want bot_not_found", err)
	}
	user, err := api.GetUserByEmailContext(ctx, "alice@example.com")
	if err != nil || user.ID != "U0ALICE001" {
		t.Fatalf("GetUserByEmail() = %+v, %v, want U0ALICE001", user, err)
	}
	dm, _, _, err := api.OpenConversationContext(ctx, &slack.OpenConversationParameters{Users: []string{user.ID}})
	if err != nil || !strings.HasPrefix(dm.ID, "D") {
		t.Fatalf("OpenConversation() = %+v, %v, want a D… channel", dm, err)
	}
	md := slack.SlackMetadata{EventType: "meeting_reminder", EventPayload: map[string]any{"key": "k1"}}
	ch, ts, err := api.PostMessageContext(ctx, dm.ID, slack.MsgOptionText("hello", false), slack.MsgOptionMetadata(md))
	if err != nil || ch != dm.ID || ts == "" {
		t.Fatalf("PostMessage() = %q, %q, %v", ch, ts, err)
	}
	<-done
	hist, err := api.GetConversationHistoryContext(ctx, &slack.GetConversationHistoryParameters{ChannelID: dm.ID, IncludeAllMetadata: true})
	if err != nil || len(hist.Messages) != 1 {
		t.Fatalf("GetConversationHistory() = %+v, %v, want 1 message", hist, err)
	}
	got := hist.Messages[0]
	if got.Metadata.EventType != "meeting_reminder" || got.Metadata.EventPayload["key"] != "k1" || got.BotID != slacktest.BotID || got.Timestamp != ts {
		t.Errorf("history message = %+v, want our metadata, bot and ts %s", got.Msg, ts)
	}
	if len(hooked) != 1 || hooked[0].TS != ts || len(s.Messages()) != 1 {
		t.Errorf("OnMessage saw %v, Messages() = %v, want the one message", hooked, s.Messages())
	}
	if _, _, err := slack.New("xoxb-wrong", slack.OptionAPIURL(s.URL())).PostMessageContext(ctx, dm.ID, slack.MsgOptionText("x", false)); err == nil || err.Error() != "invalid_auth" {
		t.Errorf("PostMessage(bad token) error = %v, want invalid_auth", err)
	}
}

func TestListPagesAndErrors(t *testing.T) {
	s := seeded(t)
	api := slack.New(slacktest.Token, slack.OptionAPIURL(s.URL()))
	ctx := context.Background()
	var names []string
	cursor := ""
	for pages := 0; ; pages++ {
		chans, next, err := api.GetConversationsContext(ctx, &slack.GetConversationsParameters{Cursor: cursor, Limit: 1, Types: []string{"public_channel", "private_channel"}})
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range chans {
			names = append(names, c.Name)
		}
		if next == "" {
			break
		}
		cursor = next
	}
	if want := []string{"general", "random", "secret"}; !slices.Equal(names, want) {
		t.Errorf("conversations.list over pages = %v, want %v", names, want)
	}
	tests := []struct {
		channel string
		want    string
	}{
		{"C0RANDOM01", "not_in_channel"},
		{"C0NOWHERE1", "channel_not_found"},
	}
	for _, tt := range tests {
		_, _, err := api.PostMessageContext(ctx, tt.channel, slack.MsgOptionText("x", false))
		if err == nil || err.Error() != tt.want {
			t.Errorf("PostMessage(%v) error = %v, want %v", tt.channel, err, tt.want)
		}
	}
}

func TestFaults(t *testing.T) {
	s := seeded(t)
	api := slack.New(slacktest.Token, slack.OptionAPIURL(s.URL()))
	ctx := context.Background()
	s.Fail("chat.postMessage", "C0GENERAL1",
		slacktest.Fault{Status: 429, RetryAfter: 7},
		slacktest.Fault{Status: 503},
		slacktest.Fault{Error: "missing_scope"})
	send := func() error {
		_, _, err := api.PostMessageContext(ctx, "C0GENERAL1", slack.MsgOptionText("x", false))
		return err
	}
	var rl *slack.RateLimitedError
	if err := send(); !errors.As(err, &rl) || rl.RetryAfter != 7*time.Second {
		t.Errorf("first send error = %v, want RateLimitedError after 7s", err)
	}
	var sc slack.StatusCodeError
	if err := send(); !errors.As(err, &sc) || sc.Code != 503 {
		t.Errorf("second send error = %v, want 503", err)
	}
	if err := send(); err == nil || err.Error() != "missing_scope" {
		t.Errorf("third send error = %v, want missing_scope", err)
	}
	if err := send(); err != nil {
		t.Errorf("fourth send error = %v, want success", err)
	}
	if n := len(s.Messages()); n != 1 {
		t.Errorf("len(Messages()) = %d, want 1: a faulted call must not store", n)
	}

	// A delayed answer: the message lands, the client gives up waiting.
	s.Fail("chat.postMessage", "", slacktest.Fault{Delay: time.Minute})
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, _, err := api.PostMessageContext(short, "C0GENERAL1", slack.MsgOptionText("late", false)); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("delayed send error = %v, want deadline exceeded", err)
	}
	if n := len(s.Messages()); n != 2 {
		t.Errorf("len(Messages()) after delayed send = %d, want 2", n)
	}
	calls := s.CallsTo("chat.postMessage")
	if len(calls) != 5 || calls[0].Form.Get("channel") != "C0GENERAL1" || calls[0].Form.Has("token") || !calls[0].Authorized {
		t.Errorf("recorded calls = %+v, want 5 authorized calls without the token", calls)
	}
}

func TestJSONBody(t *testing.T) {
	s := seeded(t)
	req, _ := http.NewRequest(http.MethodPost, s.URL()+"chat.postMessage",
		strings.NewReader(`{"channel":"C0GENERAL1","text":"json","blocks":[{"type":"divider"}]}`))
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	req.Header.Set("Authorization", "Bearer "+slacktest.Token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	msgs := s.Messages()
	if len(msgs) != 1 || msgs[0].Text != "json" || string(msgs[0].Blocks) != `[{"type":"divider"}]` {
		t.Errorf("Messages() = %+v, want the JSON-posted message", msgs)
	}
}

// Faults after the work: the message is stored, the client cannot tell.
func TestFaultsAfterTheWork(t *testing.T) {
	s := seeded(t)
	api := slack.New(slacktest.Token, slack.OptionAPIURL(s.URL()))
	ctx := context.Background()
	s.Fail("chat.postMessage", "",
		slacktest.Fault{Status: 503, Applied: true},
		slacktest.Fault{Drop: true},
		slacktest.Fault{Body: `{"ok":true}`},
		slacktest.Fault{Error: "internal_error", Applied: true})
	var sc slack.StatusCodeError
	if _, _, err := api.PostMessageContext(ctx, "C0GENERAL1", slack.MsgOptionText("one", false)); !errors.As(err, &sc) || sc.Code != 503 {
		t.Errorf("send with an applied 503 error = %v, want 503", err)
	}
	_, _, err := api.PostMessageContext(ctx, "C0GENERAL1", slack.MsgOptionText("two", false))
	var se slack.SlackErrorResponse
	if err == nil || errors.As(err, &sc) || errors.As(err, &se) {
		t.Errorf("send with a dropped connection error = %v, want a transport error", err)
	}
	if ch, ts, err := api.PostMessageContext(ctx, "C0GENERAL1", slack.MsgOptionText("three", false)); err != nil || ch != "" || ts != "" {
		t.Errorf(`send answered {"ok":true} = %q, %q, %v, want no channel, no ts, no error`, ch, ts, err)
	}
	if _, _, err := api.PostMessageContext(ctx, "C0GENERAL1", slack.MsgOptionText("four", false)); err == nil || err.Error() != "internal_error" {
		t.Errorf("send with an applied internal_error = %v, want internal_error", err)
	}
	var texts []string
	for _, m := range s.Messages() {
		texts = append(texts, m.Text)
	}
	if want := []string{"one", "two", "three", "four"}; !slices.Equal(texts, want) {
		t.Errorf("stored messages = %v, want %v: each fault came after the work", texts, want)
	}
}

// The emulator refuses what Slack refuses, so a test sees a message that
// would never reach anyone.
func TestBlockKitLimits(t *testing.T) {
	s := seeded(t)
	section := func(text string) string {
		b, _ := json.Marshal([]map[string]any{{"type": "section", "text": map[string]any{"type": "mrkdwn", "text": text}}})
		return string(b)
	}
	button := func(text, u string) string {
		b, _ := json.Marshal([]map[string]any{{"type": "divider"}, {"type": "actions", "elements": []map[string]any{
			{"type": "button", "action_id": "join", "text": map[string]any{"type": "plain_text", "text": text}, "url": u}}}})
		return string(b)
	}
	header := func(text string) string {
		b, _ := json.Marshal([]map[string]any{{"type": "header", "text": map[string]any{"type": "plain_text", "text": text}}})
		return string(b)
	}
	longURL := func(n int) string { return "https://example.com/" + strings.Repeat("a", n-len("https://example.com/")) }
	many := "[" + strings.TrimSuffix(strings.Repeat(`{"type":"divider"},`, 51), ",") + "]"
	tests := []struct {
		name    string
		blocks  string
		wantErr string // "" when accepted; else the first entry of errors
	}{
		{"section at the limit", section(strings.Repeat("a", 3000)), ""},
		{"section of 3000 two-byte characters", section(strings.Repeat("é", 3000)), ""},
		{"section over the limit", section(strings.Repeat("a", 3001)), "must be less than 3001 characters [json-pointer:/blocks/0/text/text]"},
		{"empty section", section(""), "must be more than 0 characters [json-pointer:/blocks/0/text/text]"},
		{"header at the limit", header(strings.Repeat("h", 150)), ""},
		{"header over the limit", header(strings.Repeat("h", 151)), "must be less than 151 characters [json-pointer:/blocks/0/text/text]"},
		{"button text over the limit", button(strings.Repeat("b", 76), "https://example.com/"), "must be less than 76 characters [json-pointer:/blocks/1/elements/0/text/text]"},
		{"button URL at the limit", button("Join", longURL(3000)), ""},
		{"button URL over the limit", button("Join", longURL(3001)), "invalid url [json-pointer:/blocks/1/elements/0/url]"},
		{"button URL over http", button("Join", "http://example.com/j/1"), "invalid url [json-pointer:/blocks/1/elements/0/url]"},
		{"button URL without a host", button("Join", "https:///j/1"), "invalid url [json-pointer:/blocks/1/elements/0/url]"},
		{"button URL with a space", button("Join", "https://example.com/a b"), "invalid url [json-pointer:/blocks/1/elements/0/url]"},
		{"button URL of another scheme", button("Join", "javascript:alert(1)"), "invalid url [json-pointer:/blocks/1/elements/0/url]"},
		{"too many blocks", many, "no more than 50 items allowed [json-pointer:/blocks]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := len(s.Messages())
			_, got := post(t, s, "chat.postMessage", url.Values{"token": {slacktest.Token}, "channel": {"C0GENERAL1"}, "text": {"fallback"}, "blocks": {tt.blocks}})
			stored := len(s.Messages()) - before
			if tt.wantErr == "" {
				if got["ok"] != true || stored != 1 {
					t.Errorf("chat.postMessage(%s) = %v, stored %d, want ok and stored", tt.name, got, stored)
				}
				return
			}
			errs, _ := got["errors"].([]any)
			msgs, _ := got["response_metadata"].(map[string]any)["messages"].([]any)
			if got["ok"] != false || got["error"] != "invalid_blocks" || len(errs) == 0 || errs[0] != tt.wantErr || len(msgs) != len(errs) || stored != 0 {
				t.Errorf("chat.postMessage(%s) = %v, stored %d, want invalid_blocks with %q and nothing stored", tt.name, got, stored, tt.wantErr)
			}
		})
	}
	// slack-go hands the code to its caller, which classes it permanent.
	api := slack.New(slacktest.Token, slack.OptionAPIURL(s.URL()))
	_, _, err := api.PostMessageContext(context.Background(), "C0GENERAL1", slack.MsgOptionBlocks(
		slack.NewSectionBlock(slack.NewTextBlockObject(slack.MarkdownType, strings.Repeat("&amp;", 1000), false, false), nil, nil)))
	var se slack.SlackErrorResponse
	if !errors.As(err, &se) || se.Err != "invalid_blocks" || len(se.Errors) != 1 {
		t.Errorf("PostMessage(5000-character section) error = %#v, want invalid_blocks with one error", err)
	}
}

// A text beyond 40,000 characters is cut, posted, and warned about.
func TestLongTextTruncated(t *testing.T) {
	s := seeded(t)
	_, got := post(t, s, "chat.postMessage", url.Values{"token": {slacktest.Token}, "channel": {"C0GENERAL1"}, "text": {strings.Repeat("ü", 40001)}})
	msgs := s.Messages()
	warnings, _ := got["response_metadata"].(map[string]any)["warnings"].([]any)
	if got["ok"] != true || len(msgs) != 1 || msgs[0].Text != strings.Repeat("ü", 40000) || len(warnings) != 1 || warnings[0] != "message_truncated" {
		t.Errorf("chat.postMessage(40,001 characters) = %v, stored %d characters, want ok, 40,000 stored and a message_truncated warning", got, len([]rune(msgs[0].Text)))
	}
}

// A person who authorizes the app again gets the user token they have
// (slackapi/bolt-python#969), and one whose token was revoked a new one;
// with token rotation each authorization gets a new token.
func TestAuthorizingAgainReturnsTheSameUserToken(t *testing.T) {
	srv := slacktest.NewServer()
	defer srv.Close()
	first, err := srv.UserToken(t.Context(), "U1")
	if err != nil {
		t.Fatal(err)
	}
	again, err := srv.UserToken(t.Context(), "U1")
	if err != nil || again != first {
		t.Errorf("UserToken again = %q, %v; want the same token", again, err)
	}
	srv.RevokeUserTokens("U1")
	if fresh, _ := srv.UserToken(t.Context(), "U1"); fresh == first || fresh == "" {
		t.Errorf("UserToken after a revocation = %q, want a new token", fresh)
	}
	srv.SetTokenRotation(12 * time.Hour)
	a, _ := srv.UserToken(t.Context(), "U2")
	b, _ := srv.UserToken(t.Context(), "U2")
	if a == b {
		t.Errorf("with rotation, two authorizations gave the same token %q", a)
	}
}
