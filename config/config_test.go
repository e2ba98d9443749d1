package config_test

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/config"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	secretToken = "xoxb-111-222-SECRETtoken"
	secretKey   = "-----BEGIN PRIVATE KEY-----SECRETKEY"
)

var saJSON = `{"type":"service_account","client_email":"bot@x.iam.gserviceaccount.com","private_key":"` + secretKey + `"}`

// env turns KEY=value lines into a getenv.
func env(lines ...string) func(string) string {
	m := map[string]string{}
	for _, l := range lines {
		k, v, _ := strings.Cut(l, "=")
		m[k] = v
	}
	return func(k string) string { return m[k] }
}

// withoutNames drops the variable names from s: SLACK_SIGNING_SECRET
// names a secret without being one.
func withoutNames(s string) string {
	s = strings.ReplaceAll(s, "SLACK_CLIENT_SECRET", "SLACK_CLIENT_…")
	return strings.ReplaceAll(s, "SLACK_SIGNING_SECRET", "SLACK_SIGNING_…")
}

// prod is a valid production environment.
func prod(extra ...string) func(string) string {
	return env(append([]string{"SLACK_BOT_TOKEN=" + secretToken, "GOOGLE_CREDENTIALS_JSON=" + saJSON, "CALENDARS=alice@example.com"}, extra...)...)
}

func TestParseDefaults(t *testing.T) {
	c, err := config.Parse(prod())
	require.NoError(t, err)
	assert.Equal(t, config.Config{
		SlackToken:      secretToken,
		SlackAPIURL:     "https://slack.com/api/",
		CredentialsJSON: []byte(saJSON),
		GoogleEndpoint:  "https://www.googleapis.com/calendar/v3/",
		Subscriptions: []meetingbot.Subscription{
			{ID: "alice@example.com", CalendarID: "alice@example.com", Offsets: []time.Duration{10 * time.Minute}},
		},
		Offsets:        []time.Duration{10 * time.Minute},
		TickInterval:   30 * time.Second,
		ResyncInterval: 30 * time.Second,
		DatabasePath:   "reminders.db",
		HTTPAddr:       ":8080",
		LogLevel:       slog.LevelInfo,
		LogFormat:      "json",

		CalendarQuota:          10000,
		CalendarUserQuota:      600,
		CalendarDailyThreshold: 1000000,
		SlackPostsPerMinute:    300,
		EarlyMax:               5 * time.Minute,
	}, c)
	assert.NotContains(t, c.String(), "SECRET")
}

// PUBLIC_URL turns push on, and with it a slow safety resync; without it
// the calendars resync every tick, as they were read before.
func TestPushAndResync(t *testing.T) {
	tests := []struct {
		name   string
		env    []string
		public string
		notify string
		resync time.Duration
	}{
		{"poll only", nil, "", "", 30 * time.Second},
		{"poll only, tick 10s", []string{"TICK_INTERVAL=10s"}, "", "", 10 * time.Second},
		{"push", []string{"PUBLIC_URL=https://bot.example.com/"}, "https://bot.example.com", "https://bot.example.com/google/notify", 30 * time.Minute},
		{"push under a path", []string{"PUBLIC_URL=https://example.com/bot"}, "https://example.com/bot", "https://example.com/bot/google/notify", 30 * time.Minute},
		{"push, resync 15m", []string{"PUBLIC_URL=https://bot.example.com", "CALENDAR_RESYNC_INTERVAL=15m"}, "https://bot.example.com", "https://bot.example.com/google/notify", 15 * time.Minute},
		{"poll, resync 2m", []string{"CALENDAR_RESYNC_INTERVAL=2m"}, "", "", 2 * time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := config.Parse(prod(tt.env...))
			require.NoError(t, err)
			assert.Equal(t, tt.public, c.PublicURL, "PublicURL")
			assert.Equal(t, tt.notify, c.NotifyURL(), "NotifyURL()")
			assert.Equal(t, tt.resync, c.ResyncInterval, "ResyncInterval")
		})
	}
}

func TestParseEverything(t *testing.T) {
	dir := t.TempDir()
	key := filepath.Join(dir, "key.json")
	require.NoError(t, os.WriteFile(key, []byte(saJSON), 0o600))
	c, err := config.Parse(env(
		"SLACK_BOT_TOKEN="+secretToken,
		"SLACK_API_URL=http://127.0.0.1:9999/api",
		"GOOGLE_APPLICATION_CREDENTIALS="+key,
		"GOOGLE_API_ENDPOINT=http://127.0.0.1:9998/calendar/v3/",
		"GOOGLE_IMPERSONATE=true",
		"CALENDARS= alice@example.com , team@example.com=#eng,room@group.calendar.google.com=C0123ABCD,bob@example.com=U0BOB0001,carol@example.com=dave@example.com",
		"REMINDER_OFFSETS=10m,0,90s",
		"TICK_INTERVAL=1s",
		"DATABASE_PATH="+filepath.Join(dir, "bot.db"),
		"HTTP_ADDR=127.0.0.1:0",
		"LOG_LEVEL=debug",
		"LOG_FORMAT=text",
		"JOIN_URL_HOSTS= meet.jit.si, Video.ACME.example ",
		"METRICS_ADDR=127.0.0.1:9091",
	))
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1:9091", c.MetricsAddr)
	assert.Equal(t, []string{"meet.jit.si", "video.acme.example"}, c.JoinURLHosts)
	offs := []time.Duration{0, 90 * time.Second, 10 * time.Minute}
	assert.Equal(t, "http://127.0.0.1:9999/api/", c.SlackAPIURL)
	assert.Equal(t, key, c.CredentialsFile)
	assert.Nil(t, c.CredentialsJSON)
	assert.True(t, c.Impersonate)
	assert.Equal(t, offs, c.Offsets)
	assert.Equal(t, time.Second, c.TickInterval)
	assert.Equal(t, slog.LevelDebug, c.LogLevel)
	assert.Equal(t, "text", c.LogFormat)
	var ids []string
	for _, s := range c.Subscriptions {
		ids = append(ids, s.ID)
		assert.Equal(t, offs, s.Offsets, "offsets of %s", s.ID)
	}
	assert.Equal(t, []string{"alice@example.com", "team@example.com=#eng", "room@group.calendar.google.com=C0123ABCD",
		"bob@example.com=U0BOB0001", "carol@example.com=dave@example.com"}, ids)
	assert.Equal(t, "#eng", c.Subscriptions[1].Destination)
	assert.Equal(t, "team@example.com", c.Subscriptions[1].CalendarID)
}

func TestParseDemo(t *testing.T) {
	tests := []struct {
		name string
		env  func(string) string
		demo bool
	}{
		{"empty environment", env(), true},
		{"only tuning", env("TICK_INTERVAL=2s", "LOG_FORMAT=text"), true},
		{"production", prod(), false},
	}
	for _, tt := range tests {
		c, err := config.Parse(tt.env)
		require.NoError(t, err, tt.name)
		if c.Demo != tt.demo {
			t.Errorf("Parse(%s).Demo = %v, want %v", tt.name, c.Demo, tt.demo)
		}
	}
}

// TestParseProblems checks that each malformed variable is reported on a
// line that names it, says what is wrong, gives an example, and never shows
// a secret.
func TestParseProblems(t *testing.T) {
	dir := t.TempDir()
	notJSON := filepath.Join(dir, "key.txt")
	require.NoError(t, os.WriteFile(notJSON, []byte("not json "+secretKey), 0o600))
	userJSON := `{"type":"authorized_user","refresh_token":"SECRETrefresh"}`
	// OAuth client ID files as the Google Cloud console downloads them.
	desktopClient := `{"installed":{"client_id":"1-x.apps.googleusercontent.com","client_secret":"GOCSPX-SECRET","redirect_uris":["http://localhost"]}}`
	desktopFile := filepath.Join(dir, "client_secret_desktop.json")
	require.NoError(t, os.WriteFile(desktopFile, []byte(desktopClient), 0o600))
	webFile := filepath.Join(dir, "client_secret_web.json")
	require.NoError(t, os.WriteFile(webFile, []byte(`{"web":{"client_id":"1-x.apps.googleusercontent.com","client_secret":"GOCSPX-SECRET"}}`), 0o600))
	tests := []struct {
		name string
		env  func(string) string
		want string // the start of the one problem line
	}{
		{"token without google", env("SLACK_BOT_TOKEN="+secretToken, "CALENDARS=a@example.com"), "GOOGLE_APPLICATION_CREDENTIALS: missing"},
		{"google without token", env("GOOGLE_CREDENTIALS_JSON="+saJSON, "CALENDARS=a@example.com"), "SLACK_BOT_TOKEN: missing"},
		{"calendars alone", env("CALENDARS=a@example.com"), "SLACK_BOT_TOKEN and GOOGLE_APPLICATION_CREDENTIALS: missing"},
		{"no calendars", env("SLACK_BOT_TOKEN="+secretToken, "GOOGLE_CREDENTIALS_JSON="+saJSON), "CALENDARS: missing"},
		{"token shape", prod("SLACK_BOT_TOKEN=SECRET token"), "SLACK_BOT_TOKEN: must be a Slack bot token without spaces"},
		{"token not slack", prod("SLACK_BOT_TOKEN=SECRETtoken"), "SLACK_BOT_TOKEN: must be a Slack bot token starting with xoxb-"},
		{"user token", prod("SLACK_BOT_TOKEN=xoxp-1-2-SECRET"), "SLACK_BOT_TOKEN: is a user token (xoxp-…)"},
		{"app token", prod("SLACK_BOT_TOKEN=xapp-1-A1-SECRET"), "SLACK_BOT_TOKEN: is an app-level token (xapp-…)"},
		{"slack url", prod("SLACK_API_URL=slack.com/api"), `SLACK_API_URL="slack.com/api": must be an absolute`},
		{"google url", prod("GOOGLE_API_ENDPOINT=ftp://x/"), `GOOGLE_API_ENDPOINT="ftp://x/": must be an absolute`},
		{"slack url over http", prod("SLACK_API_URL=http://slack-proxy.example/api/"), `SLACK_API_URL="http://slack-proxy.example/api/": must be https, or http only to a loopback host (127.0.0.1, ::1, localhost), so that the token never crosses a network in the clear, e.g. SLACK_API_URL=https://slack.com/api/`},
		{"google url over http", prod("GOOGLE_API_ENDPOINT=http://10.0.0.7:8080/calendar/v3/"), `GOOGLE_API_ENDPOINT="http://10.0.0.7:8080/calendar/v3/": must be https, or http only to a loopback host`},
		{"loopback look-alike", prod("SLACK_API_URL=http://localhost.evil.example/api/"), `SLACK_API_URL="http://localhost.evil.example/api/": must be https`},
		{"any address", prod("SLACK_API_URL=http://0.0.0.0:9000/api/"), `SLACK_API_URL="http://0.0.0.0:9000/api/": must be https`},
		{"both credentials", prod("GOOGLE_APPLICATION_CREDENTIALS=" + notJSON), "GOOGLE_APPLICATION_CREDENTIALS and GOOGLE_CREDENTIALS_JSON: both set"},
		{"credentials file missing", env("SLACK_BOT_TOKEN="+secretToken, "CALENDARS=a@example.com", "GOOGLE_APPLICATION_CREDENTIALS="+dir+"/nope.json"), `GOOGLE_APPLICATION_CREDENTIALS="` + dir + `/nope.json": cannot read`},
		{"credentials file not json", env("SLACK_BOT_TOKEN="+secretToken, "CALENDARS=a@example.com", "GOOGLE_APPLICATION_CREDENTIALS="+notJSON), "GOOGLE_APPLICATION_CREDENTIALS: the file is not valid JSON"},
		{"credentials json", prod("GOOGLE_CREDENTIALS_JSON={" + secretKey), "GOOGLE_CREDENTIALS_JSON: the value is not valid JSON"},
		{"credentials path inline", prod("GOOGLE_CREDENTIALS_JSON=/secrets/SECRET-key.json"), "GOOGLE_CREDENTIALS_JSON: this looks like a path, not the JSON itself (the value is secret and not shown): use GOOGLE_APPLICATION_CREDENTIALS"},
		{"credentials relative path inline", prod("GOOGLE_CREDENTIALS_JSON=SECRET.json"), "GOOGLE_CREDENTIALS_JSON: this looks like a path"},
		{"desktop client inline", prod("GOOGLE_CREDENTIALS_JSON=" + desktopClient), `GOOGLE_CREDENTIALS_JSON: the value is an OAuth client ID of a Desktop app ("installed")`},
		{"desktop client file", env("SLACK_BOT_TOKEN="+secretToken, "CALENDARS=a@example.com", "GOOGLE_APPLICATION_CREDENTIALS="+desktopFile), `GOOGLE_APPLICATION_CREDENTIALS: the file is an OAuth client ID of a Desktop app ("installed")`},
		{"web client file", env("SLACK_BOT_TOKEN="+secretToken, "CALENDARS=a@example.com", "GOOGLE_APPLICATION_CREDENTIALS="+webFile), `GOOGLE_APPLICATION_CREDENTIALS: the file is an OAuth client ID of a Web application ("web")`},
		{"credentials without type", prod(`GOOGLE_CREDENTIALS_JSON={"private_key":"SECRET"}`), `GOOGLE_CREDENTIALS_JSON: the value has no "type"`},
		{"credentials type", prod(`GOOGLE_CREDENTIALS_JSON={"type":"api_key","x":"SECRET"}`), `GOOGLE_CREDENTIALS_JSON: the value has type "api_key"; want service_account, authorized_user or external_account`},
		{"impersonate federation", prod(`GOOGLE_CREDENTIALS_JSON={"type":"external_account","audience":"//iam.googleapis.com/x"}`, "GOOGLE_IMPERSONATE=true"), "GOOGLE_IMPERSONATE: true needs a service-account key, which signs the delegation"},
		{"impersonate value", prod("GOOGLE_IMPERSONATE=yes"), `GOOGLE_IMPERSONATE="yes": must be true or false`},
		{"impersonate user", prod("GOOGLE_CREDENTIALS_JSON="+userJSON, "GOOGLE_IMPERSONATE=true"), "GOOGLE_IMPERSONATE: true needs service-account"},
		{"calendar destination", prod("CALENDARS=a@example.com=eng"), `CALENDARS="a@example.com=eng": destination "eng" has no #: for the channel, write #eng`},
		{"calendar empty destination", prod("CALENDARS=a@example.com="), `CALENDARS="a@example.com=": entry "a@example.com=" has an empty destination`},
		{"calendar empty entry", prod("CALENDARS=a@example.com,,b@example.com"), `CALENDARS="a@example.com,,b@example.com": entry 2 has no calendar ID`},
		{"calendar duplicate", prod("CALENDARS=a@example.com=#eng, a@example.com=#eng"), `CALENDARS="a@example.com=#eng, a@example.com=#eng": entry "a@example.com=#eng" appears twice`},
		{"calendar not email", prod("CALENDARS=primary"), `CALENDARS="primary": calendar "primary" is not an email`},
		{"offset syntax", prod("REMINDER_OFFSETS=10"), `REMINDER_OFFSETS="10": "10" has no unit: write 10s for seconds or 10m for minutes, e.g. REMINDER_OFFSETS=10m,1m,0`},
		{"offset negative", prod("REMINDER_OFFSETS=-5m"), `REMINDER_OFFSETS="-5m": "-5m" is negative`},
		{"offset duplicate", prod("REMINDER_OFFSETS=10m,600s"), `REMINDER_OFFSETS="10m,600s": "600s" appears twice`},
		{"offset fraction", prod("REMINDER_OFFSETS=1.5s"), `REMINDER_OFFSETS="1.5s": "1.5s" is not whole seconds`},
		{"offset huge", prod("REMINDER_OFFSETS=200h"), `REMINDER_OFFSETS="200h": "200h" is more than`},
		{"offset empty entry", prod("REMINDER_OFFSETS=10m,"), `REMINDER_OFFSETS="10m,": has an empty entry`},
		{"tick short", prod("TICK_INTERVAL=500ms"), `TICK_INTERVAL="500ms": must be at least 1s, e.g. TICK_INTERVAL=30s`},
		{"tick long", prod("TICK_INTERVAL=1h"), `TICK_INTERVAL="1h": must be at most 10m`},
		{"tick syntax", prod("TICK_INTERVAL=often"), `TICK_INTERVAL="often": not a duration: write a number with a unit, like 30s or 10m, e.g. TICK_INTERVAL=30s`},
		{"database dir", prod("DATABASE_PATH=" + dir + "/no/such/dir/bot.db"), `DATABASE_PATH="` + dir + `/no/such/dir/bot.db": directory ` + dir + `/no/such/dir does not exist`},
		{"database is dir", prod("DATABASE_PATH=" + dir), `DATABASE_PATH="` + dir + `": is a directory`},
		{"addr", prod("HTTP_ADDR=8080"), `HTTP_ADDR="8080": must be host:port`},
		{"addr port", prod("HTTP_ADDR=:http"), `HTTP_ADDR=":http": port must be a number`},
		{"metrics addr", prod("METRICS_ADDR=9091"), `METRICS_ADDR="9091": must be host:port`},
		{"metrics addr is http addr", prod("HTTP_ADDR=:8080", "METRICS_ADDR=:8080"), `HTTP_ADDR and METRICS_ADDR: both ":8080"; METRICS_ADDR is a second, private listener, e.g. METRICS_ADDR=127.0.0.1:9091`},
		{"public url http", prod("PUBLIC_URL=http://bot.example.com"), `PUBLIC_URL="http://bot.example.com": must be https: Google posts Calendar notifications to https URLs only`},
		{"public url relative", prod("PUBLIC_URL=bot.example.com"), `PUBLIC_URL="bot.example.com": must be an absolute https URL that reaches HTTP_ADDR`},
		{"public url query", prod("PUBLIC_URL=https://bot.example.com/?x=1"), `PUBLIC_URL="https://bot.example.com/?x=1": must be a base URL without query`},
		{"resync short", prod("CALENDAR_RESYNC_INTERVAL=100ms"), `CALENDAR_RESYNC_INTERVAL="100ms": must be at least 1s`},
		{"resync long", prod("CALENDAR_RESYNC_INTERVAL=2h"), `CALENDAR_RESYNC_INTERVAL="2h": must be at most 1h`},
		{"resync syntax", prod("CALENDAR_RESYNC_INTERVAL=often"), `CALENDAR_RESYNC_INTERVAL="often": not a duration: write a number with a unit, like 30s or 10m`},
		{"log level", prod("LOG_LEVEL=verbose"), `LOG_LEVEL="verbose": must be debug, info, warn or error`},
		{"log format", prod("LOG_FORMAT=xml"), `LOG_FORMAT="xml": must be json or text`},
		{"join host url", prod("JOIN_URL_HOSTS=https://meet.jit.si/"), `JOIN_URL_HOSTS="https://meet.jit.si/": "https://meet.jit.si/" is not a host name`},
		{"join host port", prod("JOIN_URL_HOSTS=meet.jit.si:443"), `JOIN_URL_HOSTS="meet.jit.si:443": "meet.jit.si:443" is not a host name`},
		{"join host wildcard", prod("JOIN_URL_HOSTS=*.acme.example"), `JOIN_URL_HOSTS="*.acme.example": "*.acme.example" is not a host name; a host covers its subdomains`},
		{"join host empty entry", prod("JOIN_URL_HOSTS=meet.jit.si,,x.example"), `JOIN_URL_HOSTS="meet.jit.si,,x.example": has an empty entry`},
		{"join host top-level", prod("JOIN_URL_HOSTS=com"), `JOIN_URL_HOSTS="com": "com" is not a host name`},
		{"posts a minute", prod("SLACK_POSTS_PER_MINUTE=several hundred"), `SLACK_POSTS_PER_MINUTE="several hundred": not a whole number of posts a minute, e.g. SLACK_POSTS_PER_MINUTE=300 (0 turns the workspace-wide pacing off)`},
		{"posts a minute negative", prod("SLACK_POSTS_PER_MINUTE=-1"), `SLACK_POSTS_PER_MINUTE="-1": must be 0 (off) or more posts a minute, e.g. SLACK_POSTS_PER_MINUTE=300`},
		{"early max long", prod("REMINDER_EARLY_MAX=2h"), `REMINDER_EARLY_MAX="2h": must be from 0 (never ahead) to 1h, e.g. REMINDER_EARLY_MAX=5m`},
		{"early max fraction", prod("REMINDER_EARLY_MAX=1.5s"), `REMINDER_EARLY_MAX="1.5s": must be whole seconds, e.g. REMINDER_EARLY_MAX=5m`},
		{"early max syntax", prod("REMINDER_EARLY_MAX=soon"), `REMINDER_EARLY_MAX="soon": not a duration: write a number with a unit, like 30s or 10m, e.g. REMINDER_EARLY_MAX=5m (0: never ahead)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := config.Parse(tt.env)
			if !config.IsConfig(err) {
				t.Fatalf("Parse(%s) = %v, want a config error", tt.name, err)
			}
			got := err.Error()
			if strings.Contains(got, "\n") || !strings.HasPrefix(got, tt.want) {
				t.Errorf("Parse(%s) = %q, want one line starting %q", tt.name, got, tt.want)
			}
			if !strings.Contains(got, "e.g. ") {
				t.Errorf("Parse(%s) = %q, want an example", tt.name, got)
			}
			if strings.Contains(withoutNames(got), "SECRET") {
				t.Errorf("Parse(%s) = %q, shows a secret", tt.name, got)
			}
		})
	}
}

func TestParseReportsEveryProblemAtOnce(t *testing.T) {
	_, err := config.Parse(prod("TICK_INTERVAL=0s", "LOG_LEVEL=loud", "HTTP_ADDR=nope", "REMINDER_OFFSETS=-1m"))
	require.Error(t, err)
	lines := strings.Split(err.Error(), "\n")
	var vars []string
	for _, l := range lines {
		vars = append(vars, l[:strings.IndexAny(l, "=:")])
	}
	assert.ElementsMatch(t, []string{"TICK_INTERVAL", "LOG_LEVEL", "HTTP_ADDR", "REMINDER_OFFSETS"}, vars)
}

// TestTickThatCanMissAReminder refuses, in one line naming both variables,
// every tick interval under which a reminder can fall between two ticks: a
// reminder for an offset above 0 may go out only in the offset before the
// start, and a "starting now" (0) one only in the StartGrace after it.
func TestTickThatCanMissAReminder(t *testing.T) {
	tests := []struct {
		tick, offsets string
		want          string // "" when the combination is fine
	}{
		{"", "", ""}, // the defaults: 30s, 10m
		{"5m", "10m", ""},
		{"10m", "10m", ""}, // a tick as long as the window still lands in it
		{"1m", "1m,0", ""}, // and as long as the grace of a 0 offset
		{"30s", "10m,1m,0", ""},
		{"3s", "3s,0", ""},
		{"1s", "1s", ""},
		{"5m", "1m,0", "a sweep every 5m can miss every 1m reminder, which can go out only in the 1m before its meeting starts; " +
			"make TICK_INTERVAL at most the smallest offset above 0 (and at most 1m when 0 is one), e.g. TICK_INTERVAL=30s REMINDER_OFFSETS=1m,0"},
		{"5m", "10m,0", "a sweep every 5m can miss every 0 (starting now) reminder, which can go out only in the first 1m after its meeting starts; " +
			"make TICK_INTERVAL at most the smallest offset above 0 (and at most 1m when 0 is one), e.g. TICK_INTERVAL=30s REMINDER_OFFSETS=10m,0"},
		{"61s", "0", "a sweep every 61s can miss every 0 (starting now) reminder"},
		{"2m", "10m,90s", "a sweep every 2m can miss every 90s reminder, which can go out only in the 90s before its meeting starts"},
		{"", "10s", "a sweep every 30s (the default) can miss every 10s reminder"},
		{"10s", "5s", "e.g. TICK_INTERVAL=5s REMINDER_OFFSETS=5s"},
	}
	for _, tt := range tests {
		_, err := config.Parse(prod("TICK_INTERVAL="+tt.tick, "REMINDER_OFFSETS="+tt.offsets))
		name := fmt.Sprintf("TICK_INTERVAL=%s REMINDER_OFFSETS=%s", tt.tick, tt.offsets)
		if tt.want == "" {
			if err != nil {
				t.Errorf("Parse(%s) = %v, want no problem", name, err)
			}
			continue
		}
		const prefix = "TICK_INTERVAL and REMINDER_OFFSETS: "
		got := ""
		if err != nil {
			got = err.Error()
		}
		if !config.IsConfig(err) || strings.Contains(got, "\n") || !strings.HasPrefix(got, prefix) || !strings.Contains(got, tt.want) {
			t.Errorf("Parse(%s) = %q, want one line %q…%q", name, got, prefix, tt.want)
		}
	}
}

// TestTickCheckWaitsForValidValues checks that a malformed tick or offset
// is reported alone, not again as a combination.
func TestTickCheckWaitsForValidValues(t *testing.T) {
	for _, kv := range [][]string{
		{"TICK_INTERVAL=1h", "REMINDER_OFFSETS=1m"},
		{"TICK_INTERVAL=5m", "REMINDER_OFFSETS=1m,-1m"},
	} {
		_, err := config.Parse(prod(kv...))
		if err == nil || strings.Contains(err.Error(), "\n") || strings.HasPrefix(err.Error(), "TICK_INTERVAL and") {
			t.Errorf("Parse(%v) = %v, want one problem naming the malformed variable", kv, err)
		}
	}
}

func TestOffsetZeroAndSeconds(t *testing.T) {
	c, err := config.Parse(prod("REMINDER_OFFSETS=3s, 0", "TICK_INTERVAL=2s"))
	require.NoError(t, err)
	assert.Equal(t, []time.Duration{0, 3 * time.Second}, c.Offsets)
}

// bot -h lists every variable with its default and meaning, in lines a
// terminal of 80 columns shows whole.
func TestUsageListsEveryVariable(t *testing.T) {
	var b strings.Builder
	config.Usage(&b)
	lines := strings.Split(b.String(), "\n")
	for i, l := range lines {
		if n := utf8.RuneCountInString(l); n > 80 {
			t.Errorf("Usage() line %d has %d characters, want at most 80: %q", i+1, n, l)
		}
	}
	for _, v := range config.Vars {
		head := "  " + v.Name + " (default: " + v.Default + ")"
		i := slices.Index(lines, head)
		if i < 0 {
			t.Errorf("Usage() has no line %q", head)
			continue
		}
		var meaning []string
		for _, l := range lines[i+1:] {
			if !strings.HasPrefix(l, "      ") {
				break
			}
			meaning = append(meaning, strings.TrimSpace(l))
		}
		if got := strings.Join(meaning, " "); got != strings.Join(strings.Fields(v.Meaning), " ") {
			t.Errorf("Usage() meaning of %s = %q, want %q", v.Name, got, v.Meaning)
		}
	}
}

// TestOAuthClientFileSaysWhereTheRightKeyIs checks that a client ID file
// given as credentials gets both ways out: the service-account key's place
// in the console and the gcloud command for the personal route.
func TestOAuthClientFileSaysWhereTheRightKeyIs(t *testing.T) {
	_, err := config.Parse(prod(`GOOGLE_CREDENTIALS_JSON={"installed":{"client_id":"x","client_secret":"SECRET"}}`))
	require.Error(t, err)
	for _, want := range []string{
		"IAM & Admin > Service accounts > the account > Keys > Add key",
		"gcloud auth application-default login --client-id-file=client.json --scopes=https://www.googleapis.com/auth/calendar.readonly,https://www.googleapis.com/auth/cloud-platform",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(desktop client) = %q, want it to contain %q", err, want)
		}
	}
}

// TestDatabasePathMustBeWritable refuses, at start-up, a database whose
// directory or file the process cannot write, and leaves nothing behind.
func TestDatabasePathMustBeWritable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root writes anywhere; cmd/bot's TestReadOnlyDatabaseDirectory runs the binary as another user")
	}
	dir := t.TempDir()
	ro := filepath.Join(dir, "ro")
	require.NoError(t, os.Mkdir(ro, 0o555))
	roFile := filepath.Join(dir, "ro.db")
	require.NoError(t, os.WriteFile(roFile, nil, 0o444))
	tests := []struct{ path, want string }{
		{filepath.Join(ro, "bot.db"), "directory " + ro + " is not writable by this process"},
		{roFile, "file " + roFile + " is not writable by this process"},
	}
	for _, tt := range tests {
		_, err := config.Parse(prod("DATABASE_PATH=" + tt.path))
		if !config.IsConfig(err) || !strings.HasPrefix(err.Error(), `DATABASE_PATH="`+tt.path+`": `+tt.want) || !strings.Contains(err.Error(), "e.g. DATABASE_PATH=") {
			t.Errorf("Parse(DATABASE_PATH=%s) = %v, want one line starting %q with an example", tt.path, err, tt.want)
		}
	}
	if left, _ := os.ReadDir(dir); len(left) != 2 {
		t.Errorf("Parse left %d entries in %s, want the 2 it was given", len(left), dir)
	}
}

func TestParseLeavesNoWriteCheckBehind(t *testing.T) {
	dir := t.TempDir()
	_, err := config.Parse(prod("DATABASE_PATH=" + filepath.Join(dir, "bot.db")))
	require.NoError(t, err)
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("Parse left %v in the database directory, want nothing", left)
	}
}

// A secret pasted into the wrong variable, a common mistake
// (GOOGLE_APPLICATION_CREDENTIALS="$(cat key.json)", a token in
// SLACK_API_URL), must never be echoed: whatever the variable, the
// problem line names it and says what belongs there, without the value.
func TestSecretInAnyVariableNotShown(t *testing.T) {
	secrets := map[string]string{
		"credentials JSON": `{"type":"service_account","private_key":"` + secretKey + `"}`,
		"PEM key":          secretKey + "\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7\n-----END PRIVATE KEY-----",
		"bot token":        "xoxb-1234-5678-SECRETtokenvalue",
		"app token":        "xapp-1-A0123-456-SECRETappvalue",
		"Google token":     "ya29.a0AfH6SECRETSMCoZ3xYz",
		"base64 blob":      "SECRETdGhpcyBpcyBhIHNlY3JldCBrZXkgdmFsdWU0MTIz",
		"hex blob":         "5ec2e70123456789abcdef0123456789abcdef01",
	}
	for _, v := range config.Vars {
		switch v.Name {
		case "SLACK_BOT_TOKEN", "GOOGLE_CREDENTIALS_JSON", "SLACK_SIGNING_SECRET", "SLACK_APP_TOKEN":
			continue // the secrets' own variables, never shown anyway
		}
		for kind, secret := range secrets {
			for _, value := range []string{secret, "https://slack.example/api/" + secret + "/", "/data/" + secret} {
				_, err := config.Parse(prod(v.Name + "=" + value))
				if err == nil {
					t.Errorf("Parse(%s=<%s>) = nil, want a problem: a secret does not belong there", v.Name, kind)
					continue
				}
				got := err.Error()
				if strings.Contains(withoutNames(got), "SECRET") || strings.Contains(got, "MIIEvQ") || strings.Contains(got, "5ec2e7") {
					t.Errorf("Parse(%s=<%s>) = %q, shows the secret", v.Name, kind, got)
				}
				if !strings.HasPrefix(got, v.Name+": ") || strings.Contains(got, "\n") || !strings.Contains(got, "e.g. ") {
					t.Errorf("Parse(%s=<%s>) = %q, want one line naming %s with an example", v.Name, kind, got, v.Name)
				}
			}
		}
	}
}

// What looks like a secret is told by strong signs only: ordinary values,
// long calendar IDs included, are taken.
func TestOrdinaryValuesAreNotSecrets(t *testing.T) {
	dir := t.TempDir()
	_, err := config.Parse(prod(
		"CALENDARS=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef@group.calendar.google.com=#eng,c_1888qvb6s2bcagqpi3hbsl8jl1u8a@resource.calendar.google.com=C0123ABCD",
		"DATABASE_PATH="+filepath.Join(dir, "reminders-2026-01-01-backup-before-migration.db"),
		"SLACK_API_URL=https://proxy.example/slack/api/",
	))
	require.NoError(t, err)
	_, err = config.Parse(prod("GOOGLE_APPLICATION_CREDENTIALS=" + `{"type":"service_account"}`))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "GOOGLE_APPLICATION_CREDENTIALS: holds what looks like the key itself, not the path of a key file")
}

// Plain http is for emulators and proxies on the same machine only.
func TestLoopbackMayUseHTTP(t *testing.T) {
	for _, u := range []string{"http://127.0.0.1:9999/api/", "http://127.8.9.10/api/", "http://localhost:8080/api/", "http://LOCALHOST/api/", "http://[::1]:9000/api/", "https://slack-proxy.example/api/"} {
		c, err := config.Parse(prod("SLACK_API_URL="+u, "GOOGLE_API_ENDPOINT="+u))
		if err != nil || c.SlackAPIURL != u || c.GoogleEndpoint != u {
			t.Errorf("Parse(SLACK_API_URL and GOOGLE_API_ENDPOINT=%s) = %q, %q, %v; want it taken", u, c.SlackAPIURL, c.GoogleEndpoint, err)
		}
	}
}

// SLACK_POSTS_PER_MINUTE=0 turns the workspace-wide pacing off and
// REMINDER_EARLY_MAX=0 posting ahead; other values are taken as given.
func TestParsePosting(t *testing.T) {
	for _, tt := range []struct {
		posts, early string
		wantPosts    int
		wantEarly    time.Duration
	}{
		{"0", "0", 0, 0},
		{"600", "2m", 600, 2 * time.Minute},
		{"1_000", "90s", 1000, 90 * time.Second},
	} {
		c, err := config.Parse(env("SLACK_POSTS_PER_MINUTE="+tt.posts, "REMINDER_EARLY_MAX="+tt.early))
		require.NoError(t, err)
		if c.SlackPostsPerMinute != tt.wantPosts || c.EarlyMax != tt.wantEarly {
			t.Errorf("Parse(SLACK_POSTS_PER_MINUTE=%s, REMINDER_EARLY_MAX=%s) = %d, %v; want %d, %v", tt.posts, tt.early, c.SlackPostsPerMinute, c.EarlyMax, tt.wantPosts, tt.wantEarly)
		}
	}
}
