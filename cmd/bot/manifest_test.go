package main

import (
	"net/url"
	"os"
	"slices"
	"testing"

	"go.yaml.in/yaml/v3"
)

// manifest is the part of slack-app-manifest.yaml the bot depends on.
type manifest struct {
	Features struct {
		AppHome struct {
			HomeTab          bool `yaml:"home_tab_enabled"`
			MessagesTab      bool `yaml:"messages_tab_enabled"`
			MessagesReadOnly bool `yaml:"messages_tab_read_only_enabled"`
		} `yaml:"app_home"`
	} `yaml:"features"`
	OAuth struct {
		Scopes struct {
			Bot []string `yaml:"bot"`
		} `yaml:"scopes"`
	} `yaml:"oauth_config"`
	Settings struct {
		Events struct {
			RequestURL string   `yaml:"request_url"`
			BotEvents  []string `yaml:"bot_events"`
		} `yaml:"event_subscriptions"`
		SocketMode bool `yaml:"socket_mode_enabled"`
	} `yaml:"settings"`
}

// TestManifestLetsPeopleReplyToTheBot checks the Slack app manifest: a
// person who replies to a reminder DM can write in the Messages tab (not
// "Sending messages to this app has been turned off"), the reply reaches
// the bot as a message.im event at /slack/events, and the bot has every
// scope its calls need, the start-up destination checks included.
func TestManifestLetsPeopleReplyToTheBot(t *testing.T) {
	b, err := os.ReadFile("../../slack-app-manifest.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var m manifest
	if err := yaml.Unmarshal(b, &m); err != nil {
		t.Fatalf("parse slack-app-manifest.yaml: %v", err)
	}
	home := m.Features.AppHome
	if !home.MessagesTab || home.MessagesReadOnly {
		t.Errorf("app_home messages tab enabled=%v read-only=%v, want enabled and writable", home.MessagesTab, home.MessagesReadOnly)
	}
	if !slices.Contains(m.Settings.Events.BotEvents, "message.im") {
		t.Errorf("event_subscriptions.bot_events = %v, want message.im", m.Settings.Events.BotEvents)
	}
	u, err := url.Parse(m.Settings.Events.RequestURL)
	if !m.Settings.SocketMode && (err != nil || u.Scheme != "https" || u.Path != "/slack/events") {
		t.Errorf("event_subscriptions.request_url = %q, want https://…/slack/events", m.Settings.Events.RequestURL)
	}
	for _, scope := range []string{
		"chat:write",                     // chat.postMessage, chat.update
		"im:write",                       // conversations.open
		"users:read", "users:read.email", // users.lookupByEmail, users.info
		"channels:read", "groups:read", // conversations.list, conversations.info
		"channels:history", "groups:history", "im:history", // conversations.history; message.im
	} {
		if !slices.Contains(m.OAuth.Scopes.Bot, scope) {
			t.Errorf("bot scopes lack %s", scope)
		}
	}
}
