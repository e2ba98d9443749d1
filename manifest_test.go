package meetingbot_test

import (
	"net/url"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/meetingbot/meetingbot/doctor"
	"github.com/meetingbot/meetingbot/notify/slacktest"
	"github.com/meetingbot/meetingbot/selfservice"
)

// The Slack app manifests: one for request URLs, one for Socket Mode.
const (
	manifestRequestURLs = "slack-app-manifest.yaml"
	manifestSocketMode  = "slack-app-manifest.socket-mode.yaml"
	manifestMinimal     = "slack-app-manifest.minimal.yaml"
)

// manifest is the part of a Slack app manifest the bot depends on.
type manifest struct {
	Features struct {
		AppHome struct {
			HomeTab          bool `yaml:"home_tab_enabled"`
			MessagesTab      bool `yaml:"messages_tab_enabled"`
			MessagesReadOnly bool `yaml:"messages_tab_read_only_enabled"`
		} `yaml:"app_home"`
		SlashCommands []struct {
			Command string `yaml:"command"`
			URL     string `yaml:"url"`
		} `yaml:"slash_commands"`
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
		Interactivity struct {
			Enabled    bool   `yaml:"is_enabled"`
			RequestURL string `yaml:"request_url"`
		} `yaml:"interactivity"`
		SocketMode bool `yaml:"socket_mode_enabled"`
	} `yaml:"settings"`
}

func readManifest(t *testing.T, path string) (manifest, []byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m manifest
	if err := yaml.Unmarshal(b, &m); err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	return m, b
}

// httpsPath reports whether u is an https URL with the given path.
func httpsPath(u, path string) bool {
	p, err := url.Parse(u)
	return err == nil && p.Scheme == "https" && p.Host != "" && p.Path == path
}

// TestManifestLetsPeopleReplyToTheBot checks both Slack app manifests: a
// person who replies to a reminder DM can write in the Messages tab (not
// "Sending messages to this app has been turned off"), the reply reaches
// the bot as a message.im event, and the bot has every scope its calls
// need, the start-up destination checks and self-service included.
func TestManifestLetsPeopleReplyToTheBot(t *testing.T) {
	for _, path := range []string{manifestRequestURLs, manifestSocketMode} {
		m, _ := readManifest(t, path)
		home := m.Features.AppHome
		if !home.MessagesTab || home.MessagesReadOnly {
			t.Errorf("%s: app_home messages tab enabled=%v read-only=%v, want enabled and writable", path, home.MessagesTab, home.MessagesReadOnly)
		}
		if !slices.Contains(m.Settings.Events.BotEvents, "message.im") {
			t.Errorf("%s: event_subscriptions.bot_events = %v, want message.im", path, m.Settings.Events.BotEvents)
		}
		for _, scope := range []string{
			"chat:write",                     // chat.postMessage, chat.update, chat.postEphemeral
			"im:write",                       // conversations.open
			"users:read", "users:read.email", // users.lookupByEmail, users.info
			"channels:read", "groups:read", // conversations.list, conversations.info
			"channels:history", "groups:history", "im:history", // conversations.history; message.im
			"commands", // /meetingbot
		} {
			if !slices.Contains(m.OAuth.Scopes.Bot, scope) {
				t.Errorf("%s: bot scopes lack %s", path, scope)
			}
		}
	}
}

// TestManifestsServeSelfService checks what self-service needs: the
// /meetingbot command, the Home tab and its app_home_opened event,
// interactivity; the request URLs at the paths the bot serves in one
// manifest, Socket Mode and no URL in the other, and nothing else apart.
func TestManifestsServeSelfService(t *testing.T) {
	web, webRaw := readManifest(t, manifestRequestURLs)
	socket, socketRaw := readManifest(t, manifestSocketMode)
	for name, m := range map[string]manifest{"request URLs": web, "Socket Mode": socket} {
		if !m.Features.AppHome.HomeTab {
			t.Errorf("%s manifest: home_tab_enabled = false, want true", name)
		}
		if len(m.Features.SlashCommands) != 1 || m.Features.SlashCommands[0].Command != "/meetingbot" {
			t.Errorf("%s manifest: slash_commands = %+v, want /meetingbot", name, m.Features.SlashCommands)
		}
		if !slices.Contains(m.Settings.Events.BotEvents, "app_home_opened") {
			t.Errorf("%s manifest: bot_events = %v, want app_home_opened", name, m.Settings.Events.BotEvents)
		}
		if !m.Settings.Interactivity.Enabled {
			t.Errorf("%s manifest: interactivity off, want on (the Home tab's controls, Mute this series)", name)
		}
	}
	if web.Settings.SocketMode || !socket.Settings.SocketMode {
		t.Errorf("socket_mode_enabled = %v (request URLs), %v (Socket Mode); want false, true", web.Settings.SocketMode, socket.Settings.SocketMode)
	}
	if len(web.Features.SlashCommands) == 1 && !httpsPath(web.Features.SlashCommands[0].URL, selfservice.PathCommands) {
		t.Errorf("request URLs manifest: /meetingbot url = %q, want https://…%s", web.Features.SlashCommands[0].URL, selfservice.PathCommands)
	}
	if !httpsPath(web.Settings.Events.RequestURL, selfservice.PathEvents) {
		t.Errorf("request URLs manifest: event_subscriptions.request_url = %q, want https://…%s", web.Settings.Events.RequestURL, selfservice.PathEvents)
	}
	if !httpsPath(web.Settings.Interactivity.RequestURL, selfservice.PathInteractivity) {
		t.Errorf("request URLs manifest: interactivity.request_url = %q, want https://…%s", web.Settings.Interactivity.RequestURL, selfservice.PathInteractivity)
	}

	// Apart from the URLs and Socket Mode, the two are the same app.
	var a, b map[string]any
	if yaml.Unmarshal(webRaw, &a) != nil || yaml.Unmarshal(socketRaw, &b) != nil {
		t.Fatal("manifests do not parse")
	}
	if dropURLs(b) {
		t.Errorf("Socket Mode manifest has a request URL")
	}
	dropURLs(a)
	a["settings"].(map[string]any)["socket_mode_enabled"] = nil
	b["settings"].(map[string]any)["socket_mode_enabled"] = nil
	if !reflect.DeepEqual(a, b) {
		t.Errorf("the two manifests differ beyond request URLs and Socket Mode:\n%v\n%v", a, b)
	}
}

// dropURLs removes every url and request_url key of a parsed manifest and
// reports whether there was one.
func dropURLs(v any) bool {
	found := false
	switch x := v.(type) {
	case map[string]any:
		for _, k := range []string{"url", "request_url"} {
			if _, ok := x[k]; ok {
				found = true
				delete(x, k)
			}
		}
		for _, e := range x {
			found = dropURLs(e) || found
		}
	case []any:
		for _, e := range x {
			found = dropURLs(e) || found
		}
	}
	return found
}

// TestManifestScopesAreJustified: in both manifests each bot scope, or
// each group of scopes on consecutive lines, has a comment above it
// saying which calls need it.
func TestManifestScopesAreJustified(t *testing.T) {
	for _, path := range []string{manifestRequestURLs, manifestSocketMode, manifestMinimal} {
		_, raw := readManifest(t, path)
		var doc yaml.Node
		if err := yaml.Unmarshal(raw, &doc); err != nil {
			t.Fatal(err)
		}
		scopes := lookup(&doc, "oauth_config", "scopes", "bot")
		if scopes == nil || len(scopes.Content) == 0 {
			t.Fatalf("%s: no bot scopes", path)
		}
		for i, item := range scopes.Content {
			grouped := i > 0 && item.Line == scopes.Content[i-1].Line+1
			if item.HeadComment == "" && !grouped {
				t.Errorf("%s: scope %s has no comment saying why", path, item.Value)
			}
		}
	}
}

// lookup follows keys down mappings from a document node.
func lookup(n *yaml.Node, keys ...string) *yaml.Node {
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	for _, k := range keys {
		var next *yaml.Node
		for i := 0; n != nil && n.Kind == yaml.MappingNode && i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == k {
				next = n.Content[i+1]
			}
		}
		if next == nil {
			return nil
		}
		n = next
	}
	return n
}

// TestDoctorScopesAreTheManifests keeps doctor's table of scopes, and the
// emulator's default grant, the manifests' bot scopes.
func TestDoctorScopesAreTheManifests(t *testing.T) {
	names := doctor.Scopes()
	for _, path := range []string{manifestRequestURLs, manifestSocketMode} {
		m, _ := readManifest(t, path)
		if !slices.Equal(names, m.OAuth.Scopes.Bot) {
			t.Errorf("doctor's scopes = %v, %s's = %v", names, path, m.OAuth.Scopes.Bot)
		}
	}
	if !slices.Equal(names, slacktest.DefaultScopes) {
		t.Errorf("doctor's scopes = %v, slacktest.DefaultScopes = %v", names, slacktest.DefaultScopes)
	}
}

// TestMinimalManifest keeps the minimal manifest what setup.md says it is:
// the request-URL manifest's bot scopes less the three only #name
// destinations and /meetingbot need, with no slash command, request URL,
// event, redirect URL or user scope; doctor then finds every scope a
// CALENDARS of channel IDs and emails needs.
func TestMinimalManifest(t *testing.T) {
	m, raw := readManifest(t, manifestMinimal)
	want := slices.DeleteFunc(doctor.Scopes(), func(s string) bool { return s == "channels:read" || s == "groups:read" || s == "commands" })
	if !slices.Equal(m.OAuth.Scopes.Bot, want) {
		t.Errorf("%s bot scopes = %v, want %v", manifestMinimal, m.OAuth.Scopes.Bot, want)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if dropURLs(doc) || len(m.Features.SlashCommands) > 0 || len(m.Settings.Events.BotEvents) > 0 || m.Settings.Interactivity.Enabled || m.Settings.SocketMode {
		t.Errorf("%s has a request URL, a slash command, events, interactivity or Socket Mode; want reminders alone", manifestMinimal)
	}
	oauth, _ := doc["oauth_config"].(map[string]any)
	scopes, _ := oauth["scopes"].(map[string]any)
	if _, ok := oauth["redirect_urls"]; ok || scopes["user"] != nil {
		t.Errorf("%s has a redirect URL or user scopes; want neither", manifestMinimal)
	}
}

// TestScopesAreDocumented keeps setup.md's table of scopes whole: a row for
// every bot scope of the manifests and each user scope, saying what needs
// it and what is lost without it; and the scopes setup.md says the minimal
// manifest asks for are its.
func TestScopesAreDocumented(t *testing.T) {
	b, err := os.ReadFile("docs/setup.md")
	if err != nil {
		t.Fatal(err)
	}
	setup := string(b)
	var documented []string
	for _, row := range regexp.MustCompile("(?m)^\\| ((?:user )?`[a-z.:]+`(?:, `[a-z.:]+`)*) \\| [^|]+ \\| [^|]+ \\|$").FindAllStringSubmatch(setup, -1) {
		for _, m := range regexp.MustCompile("`([a-z.:]+)`").FindAllStringSubmatch(row[1], -1) {
			documented = append(documented, m[1])
		}
	}
	for _, scope := range append(doctor.Scopes(), "users.profile:read", "users.profile:write") {
		if !slices.Contains(documented, scope) {
			t.Errorf("docs/setup.md, What each Slack scope is for: no row for %s", scope)
		}
	}
	m, _ := readManifest(t, manifestMinimal)
	_, after, _ := strings.Cut(setup, "["+"`"+manifestMinimal+"`]")
	said, _, _ := strings.Cut(after, "; it has")
	for _, scope := range m.OAuth.Scopes.Bot {
		if !strings.Contains(said, "`"+scope+"`") && !strings.Contains(said, "history scopes") {
			t.Errorf("docs/setup.md does not say the minimal manifest asks for %s", scope)
		}
	}
}

// TestManifestHostPlaces counts the places of the request-URL manifest
// that name the bot's host, and keeps the docs that say to replace them
// saying how many and which.
func TestManifestHostPlaces(t *testing.T) {
	_, raw := readManifest(t, manifestRequestURLs)
	var paths []string
	for line := range strings.SplitSeq(string(raw), "\n") {
		if l := strings.TrimSpace(line); !strings.HasPrefix(l, "#") && strings.Contains(l, "https://meetingbot.example.com") {
			_, path, _ := strings.Cut(l, "https://meetingbot.example.com")
			paths = append(paths, path)
		}
	}
	if len(paths) == 0 {
		t.Fatalf("%s names no https://meetingbot.example.com URL", manifestRequestURLs)
	}
	words := map[int]string{1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six"}
	for _, doc := range []string{"README.md", "docs/setup.md"} {
		b, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		text := strings.Join(strings.Fields(string(b)), " ")
		i := strings.Index(text, "`meetingbot.example.com`")
		if i < 0 {
			t.Errorf("%s does not say to replace meetingbot.example.com", doc)
			continue
		}
		say := text[i:min(len(text), i+300)]
		if !strings.Contains(say, words[len(paths)]+" places") {
			t.Errorf("%s: %q; want it to say %s places, as %s has", doc, say, words[len(paths)], manifestRequestURLs)
		}
		for _, p := range paths {
			if !strings.Contains(say, "`"+p+"`") {
				t.Errorf("%s: %q; want it to name %s among the places", doc, say, p)
			}
		}
	}
}
