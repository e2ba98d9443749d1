package slacktest_test

import (
	"context"
	"errors"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/meetingbot/meetingbot/notify/slacktest"
)

func TestMain(m *testing.M) { os.Exit(slacktest.Checked(m).Run()) }

// checkTypes type-checks what s received, skipping when the compiler is
// not installed, except in CI.
func checkTypes(t *testing.T, s *slacktest.Server) error {
	t.Helper()
	err := s.CheckTypes(context.Background())
	if errors.Is(err, slacktest.ErrNoTypeScript) {
		if os.Getenv("CI") == "true" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	return err
}

// What Slack's own types refuse, the emulator's limits let through: a
// misspelt field, a style no button has, a block type Slack does not
// know, metadata without its payload. Each is caught by the compiler and
// named with the method that received it; the same payloads spelt right
// pass.
func TestCheckTypesCatchesWhatSlackTypesRefuse(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, method string
		form         url.Values
		want         string // in the complaint; "" for none
	}{
		{"section spelt right", "chat.postMessage", url.Values{
			"channel": {"C0GENERAL1"}, "text": {"hi"},
			"blocks": {`[{"type":"section","text":{"type":"mrkdwn","text":"hi"}}]`},
		}, ""},
		{"misspelt text of a section", "chat.postMessage", url.Values{
			"channel": {"C0GENERAL1"}, "text": {"hi"},
			"blocks": {`[{"type":"section","txet":{"type":"mrkdwn","text":"hi"}}]`},
		}, `chat.postMessage KnownBlock[]: error TS2353: Object literal may only specify known properties, and '"txet"' does not exist in type 'SectionBlock'`},
		{"button of no style", "chat.update", url.Values{
			"channel": {"C0GENERAL1"}, "ts": {"<posted>"}, "text": {"hi"},
			"blocks": {`[{"type":"actions","elements":[{"type":"button","text":{"type":"plain_text","text":"Go"},"action_id":"go","style":"green"}]}]`},
		}, `chat.update KnownBlock[]`},
		{"unknown block type", "chat.postEphemeral", url.Values{
			"channel": {"C0GENERAL1"}, "user": {"U0ALICE001"}, "text": {"hi"},
			"blocks": {`[{"type":"sektion","text":{"type":"mrkdwn","text":"hi"}}]`},
		}, `chat.postEphemeral KnownBlock[]`},
		{"metadata without event_payload", "chat.postMessage", url.Values{
			"channel": {"C0GENERAL1"}, "text": {"hi"}, "metadata": {`{"event_type":"meetingbot_reminder"}`},
		}, `chat.postMessage MessageMetadata: error TS2741: Property 'event_payload' is missing`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := seeded(t)
			form := tc.form
			form.Set("token", slacktest.Token)
			if form.Get("ts") == "<posted>" {
				m := s.AddMessage(slacktest.Message{Channel: "C0GENERAL1", Text: "hi"})
				form.Set("ts", m.TS)
			}
			if _, body := post(t, s, tc.method, form); body["ok"] != true {
				t.Fatalf("%s = %v, want ok: the emulator's own limits pass it", tc.method, body)
			}
			err := checkTypes(t, s)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("CheckTypes() = %v, want nil", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("CheckTypes() = %v, want a complaint containing %q", err, tc.want)
			}
			if err := s.CheckTypes(context.Background()); err != nil {
				t.Errorf("CheckTypes() again = %v, want nil: each payload is checked once", err)
			}
		})
	}
}

// A Home tab is a HomeView: a field of modals alone is refused.
func TestCheckTypesHomeView(t *testing.T) {
	t.Parallel()
	s := seeded(t)
	view := `{"type":"home","submit":{"type":"plain_text","text":"Save"},"blocks":[{"type":"divider"}]}`
	if _, body := post(t, s, "views.publish", url.Values{"token": {slacktest.Token}, "user_id": {"U0ALICE001"}, "view": {view}}); body["ok"] != true {
		t.Fatalf("views.publish = %v, want ok", body)
	}
	if err := checkTypes(t, s); err == nil || !strings.Contains(err.Error(), "views.publish HomeView") || !strings.Contains(err.Error(), "submit") {
		t.Errorf("CheckTypes() = %v, want views.publish's submit refused", err)
	}
}
