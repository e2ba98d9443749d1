package meetingbot_test

import (
	"net"
	"os"
	"path"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"

	"github.com/meetingbot/meetingbot/config"
)

// flyConfig is the part of fly.toml the bot's defaults must agree with.
type flyConfig struct {
	KillSignal string `toml:"kill_signal"`
	// KillTimeout is whole seconds, as Fly's reference writes it.
	KillTimeout int               `toml:"kill_timeout"`
	Env         map[string]string `toml:"env"`
	Mounts      []struct {
		Source      string `toml:"source"`
		Destination string `toml:"destination"`
	} `toml:"mounts"`
	HTTPService struct {
		InternalPort     int    `toml:"internal_port"`
		AutoStopMachines string `toml:"auto_stop_machines"`
		// MinMachinesRunning does nothing with auto_stop_machines "off";
		// fly.toml leaves it out rather than suggest it keeps the bot up.
		MinMachinesRunning *int `toml:"min_machines_running"`
		Checks             []struct {
			Method string `toml:"method"`
			Path   string `toml:"path"`
		} `toml:"checks"`
	} `toml:"http_service"`
	Metrics struct {
		Port int    `toml:"port"`
		Path string `toml:"path"`
	} `toml:"metrics"`
}

func TestFlyConfigAgreesWithDefaults(t *testing.T) {
	var fly flyConfig
	_, err := toml.DecodeFile("fly.toml", &fly)
	if err != nil {
		t.Fatalf("parse fly.toml: %v", err)
	}

	_, port, err := net.SplitHostPort(config.DefaultHTTPAddr)
	if err != nil {
		t.Fatal(err)
	}
	dbPath := fly.Env["DATABASE_PATH"]
	mount := ""
	if len(fly.Mounts) == 1 {
		mount = fly.Mounts[0].Destination
	}
	health := ""
	if len(fly.HTTPService.Checks) == 1 {
		health = fly.HTTPService.Checks[0].Path
	}
	if _, err := config.Parse(func(k string) string { return fly.Env[k] }); err != nil && !strings.Contains(err.Error(), "DATABASE_PATH") {
		t.Errorf("config.Parse(fly.toml [env]) = %v, want no problem but the absent /data", err)
	}
	// Metrics name calendars and channels: Fly scrapes them on a port of
	// their own that http_service does not expose.
	_, metricsPort, err := net.SplitHostPort(fly.Env["METRICS_ADDR"])
	if err != nil {
		t.Fatalf("fly.toml [env] METRICS_ADDR: %v", err)
	}
	tests := []struct {
		what      string
		got, want any
	}{
		{"one mount", len(fly.Mounts), 1},
		{"mount destination", mount, "/data"},
		{"DATABASE_PATH directory", path.Dir(dbPath), mount},
		{"DATABASE_PATH", dbPath, "/data/reminders.db"},
		{"internal_port", fly.HTTPService.InternalPort, atoi(t, port)},
		{"metrics port is METRICS_ADDR's", fly.Metrics.Port, atoi(t, metricsPort)},
		{"metrics port private", fly.Metrics.Port != fly.HTTPService.InternalPort, true},
		{"metrics path", fly.Metrics.Path, "/metrics"},
		{"health check path", health, "/healthz"},
		{"auto_stop_machines", fly.HTTPService.AutoStopMachines, "off"},
		{"min_machines_running set", fly.HTTPService.MinMachinesRunning != nil, false},
		{"kill_signal", fly.KillSignal, "SIGTERM"},
		{"kill_timeout", fly.KillTimeout, 15},
		{"HTTP_ADDR not overridden", fly.Env["HTTP_ADDR"], ""},
		{"no secrets in [env]", fly.Env["SLACK_BOT_TOKEN"] + fly.Env["GOOGLE_CREDENTIALS_JSON"], ""},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("fly.toml %s = %v, want %v", tt.what, tt.got, tt.want)
		}
	}
}

func TestDockerfileBuildsStaticNonRoot(t *testing.T) {
	b, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	entry, err := os.ReadFile("deploy/entrypoint.sh")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"CGO_ENABLED=0 go build", "./cmd/bot", "ca-certificates", "chown bot:bot /data",
		"ENV DATABASE_PATH=/data/reminders.db", "EXPOSE 8080",
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("Dockerfile lacks %q", want)
		}
	}
	if !strings.Contains(string(entry), "exec su-exec bot:bot /usr/local/bin/bot") {
		t.Errorf("deploy/entrypoint.sh does not drop to the bot user")
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n := 0
	for _, r := range s {
		if r < '0' || r > '9' {
			t.Fatalf("port %q is not a number", s)
		}
		n = n*10 + int(r-'0')
	}
	return n
}

// TestDockerignoreKeepsSecretsOut checks that keys and environment files
// lying in the checkout never enter the image's build context (COPY . .),
// while the sources do.
func TestDockerignoreKeepsSecretsOut(t *testing.T) {
	b, err := os.ReadFile(".dockerignore")
	if err != nil {
		t.Fatal(err)
	}
	var patterns []string
	for line := range strings.SplitSeq(string(b), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			patterns = append(patterns, line)
		}
	}
	// ignored follows .dockerignore's rules for the patterns used here: a
	// path pattern from the context's root, "**/" matching any depth.
	ignored := func(file string) bool {
		for _, p := range patterns {
			if ok, _ := path.Match(p, file); ok {
				return true
			}
			if rest, ok := strings.CutPrefix(p, "**/"); ok {
				for dir := file; ; {
					if ok, _ := path.Match(rest, dir); ok {
						return true
					}
					_, after, found := strings.Cut(dir, "/")
					if !found {
						break
					}
					dir = after
				}
			}
		}
		return false
	}
	for _, secret := range []string{"key.json", "secrets/key.json", "deploy/sa-key.json", ".env", ".env.production", "deploy/.env", "tls.pem", "secrets/bot.key"} {
		if !ignored(secret) {
			t.Errorf(".dockerignore lets %s into the build context", secret)
		}
	}
	for _, source := range []string{"go.mod", "go.sum", "cmd/bot/main.go", "storage/sqlite/migrations/001_init.sql", "deploy/entrypoint.sh"} {
		if ignored(source) {
			t.Errorf(".dockerignore keeps %s, which the build needs, out of the build context", source)
		}
	}
}
