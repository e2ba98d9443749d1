package meetingbot_test

import (
	"bufio"
	"net"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot/calendar/calendartest"
	"github.com/meetingbot/meetingbot/config"
)

// unitFile is a systemd unit: its sections' keys, each with its values in
// order (a key may be given several times, as Environment= is).
type unitFile map[string]map[string][]string

// parseUnit reads a unit file as systemd.syntax(7) writes it: [Section]
// headers, Key=Value lines, # and ; comments. No line in ours continues.
func parseUnit(t *testing.T, name string) unitFile {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	u := unitFile{}
	section := ""
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			section = line[1 : len(line)-1]
			u[section] = map[string][]string{}
		case section != "" && strings.Contains(line, "="):
			if strings.HasSuffix(line, `\`) {
				t.Fatalf("%s:%d: a continued line; the test reads none", name, n)
			}
			k, v, _ := strings.Cut(line, "=")
			u[section][strings.TrimSpace(k)] = append(u[section][strings.TrimSpace(k)], strings.TrimSpace(v))
		default:
			t.Fatalf("%s:%d: %q is neither a section, a key nor a comment", name, n, line)
		}
	}
	return u
}

// last is the value that counts for a key given once or more.
func (u unitFile) last(section, key string) string {
	v := u[section][key]
	if len(v) == 0 {
		return ""
	}
	return v[len(v)-1]
}

// TestSystemdUnit checks deploy/systemd/meetingbot.service against what the
// bot needs: a user of its own owning the state directory that holds
// DATABASE_PATH, the environment file, the Google key as a credential,
// the hardening it promises, a stop timeout above the bot's own, and no
// restart for a configuration that does not parse; and that the example
// environment file, with the unit's variables, is a configuration the bot
// accepts.
func TestSystemdUnit(t *testing.T) {
	const unitPath = "deploy/systemd/meetingbot.service"
	u := parseUnit(t, unitPath)
	svc := u["Service"]
	env := map[string]string{}
	for _, e := range svc["Environment"] {
		k, v, ok := strings.Cut(e, "=")
		if !ok {
			t.Fatalf("Environment=%s: want KEY=value", e)
		}
		env[k] = v
	}
	known := func(name string) bool {
		return slices.ContainsFunc(config.Vars, func(v config.Var) bool { return v.Name == name })
	}
	for k := range env {
		if !known(k) {
			t.Errorf("Environment= sets %s, which is none of the bot's variables (config.Vars)", k)
		}
	}
	state := u.last("Service", "StateDirectory")
	tests := []struct {
		what      string
		got, want any
	}{
		{"ExecStart", u.last("Service", "ExecStart"), "/usr/local/bin/meetingbot"},
		{"a user of its own (DynamicUser)", u.last("Service", "DynamicUser"), "yes"},
		{"User", u.last("Service", "User"), "meetingbot"},
		{"StateDirectory", state, "meetingbot"},
		{"DATABASE_PATH in the state directory", path.Dir(env["DATABASE_PATH"]), "%S/" + state},
		{"WorkingDirectory", u.last("Service", "WorkingDirectory"), "%S/" + state},
		{"EnvironmentFile", u.last("Service", "EnvironmentFile"), "/etc/meetingbot/meetingbot.env"},
		{"LoadCredential", u.last("Service", "LoadCredential"), "google-key.json:/etc/meetingbot/key.json"},
		{"GOOGLE_APPLICATION_CREDENTIALS the credential", env["GOOGLE_APPLICATION_CREDENTIALS"], "%d/google-key.json"},
		{"KillSignal", u.last("Service", "KillSignal"), "SIGTERM"},
		{"Restart", u.last("Service", "Restart"), "on-failure"},
		{"no restart on exit 2 (configuration)", slices.Contains(strings.Fields(u.last("Service", "RestartPreventExitStatus")), "2"), true},
		{"WantedBy", u.last("Install", "WantedBy"), "multi-user.target"},
		{"After network-online", slices.Contains(strings.Fields(u.last("Unit", "After")), "network-online.target"), true},
	}
	for _, h := range []struct{ key, want string }{
		{"NoNewPrivileges", "yes"}, {"ProtectSystem", "strict"}, {"ProtectHome", "yes"},
		{"PrivateTmp", "yes"}, {"PrivateDevices", "yes"}, {"ProtectKernelTunables", "yes"},
		{"ProtectKernelModules", "yes"}, {"ProtectControlGroups", "yes"}, {"RestrictSUIDSGID", "yes"},
		{"MemoryDenyWriteExecute", "yes"}, {"LockPersonality", "yes"}, {"CapabilityBoundingSet", ""},
		{"SystemCallArchitectures", "native"}, {"UMask", "0077"},
	} {
		_, set := svc[h.key]
		tests = append(tests, struct {
			what      string
			got, want any
		}{"hardening " + h.key, u.last("Service", h.key) + map[bool]string{false: " (unset)"}[set], h.want})
	}
	stop, err := time.ParseDuration(u.last("Service", "TimeoutStopSec") + "s")
	if err != nil {
		t.Fatalf("TimeoutStopSec=%s: %v", u.last("Service", "TimeoutStopSec"), err)
	}
	tests = append(tests, struct {
		what      string
		got, want any
	}{"TimeoutStopSec above the bot's 10 s stop", stop > 10*time.Second, true})
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("meetingbot.service %s = %v, want %v", tt.what, tt.got, tt.want)
		}
	}

	// The example environment file, with the unit's variables and its
	// specifiers filled in as systemd would (%S the state directories'
	// root, %d the credentials directory), is a configuration the bot
	// accepts as it stands.
	example := readEnvFile(t, "deploy/systemd/meetingbot.env.example")
	root, creds := t.TempDir(), t.TempDir()
	if err := os.Mkdir(filepath.Join(root, state), 0o700); err != nil {
		t.Fatal(err)
	}
	cal := calendartest.NewServer()
	defer cal.Close()
	if err := os.WriteFile(filepath.Join(creds, "google-key.json"), cal.ServiceAccountJSON(), 0o600); err != nil {
		t.Fatal(err)
	}
	for k, v := range env {
		if _, ok := example[k]; ok {
			t.Errorf("meetingbot.env.example sets %s, which the unit sets", k)
		}
		example[k] = strings.NewReplacer("%S", root, "%d", creds).Replace(v)
	}
	for k := range example {
		if !known(k) {
			t.Errorf("meetingbot.env.example sets %s, which is none of the bot's variables (config.Vars)", k)
		}
	}
	if _, err := config.Parse(func(k string) string { return example[k] }); err != nil {
		t.Errorf("config.Parse(meetingbot.env.example and the unit's Environment=) = %v, want no problem", err)
	}
	if _, port, _ := net.SplitHostPort(example["METRICS_ADDR"]); port == "" || !strings.HasPrefix(example["METRICS_ADDR"], "127.0.0.1:") {
		t.Errorf("meetingbot.env.example METRICS_ADDR = %q, want a loopback address: /metrics names calendars and channels", example["METRICS_ADDR"])
	}

	// Where systemd-analyze is installed, systemd itself reads the unit:
	// no unknown key or bad value, and the exposure it scores stays low.
	if _, err := exec.LookPath("systemd-analyze"); err != nil {
		t.Log("systemd-analyze is not installed: the unit is checked by the parse above only")
		return
	}
	b, err := os.ReadFile(unitPath)
	if err != nil {
		t.Fatal(err)
	}
	copyPath := filepath.Join(t.TempDir(), "meetingbot.service")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// verify checks that ExecStart exists: point it at any executable.
	if err := os.WriteFile(copyPath, []byte(strings.Replace(string(b), "ExecStart=/usr/local/bin/meetingbot", "ExecStart="+self, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("systemd-analyze", "verify", copyPath).CombinedOutput(); err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Errorf("systemd-analyze verify meetingbot.service: %v\n%s", err, out)
	}
	out, err := exec.Command("systemd-analyze", "security", "--offline=true", copyPath).CombinedOutput()
	if err != nil {
		t.Fatalf("systemd-analyze security --offline=true: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`Overall exposure level for meetingbot.service: ([0-9.]+)`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("systemd-analyze security printed no exposure level:\n%s", out)
	}
	if level, _ := strconv.ParseFloat(string(m[1]), 64); level > 2 {
		t.Errorf("systemd-analyze security: exposure %s, want at most 2 (OK)\n%s", m[1], out)
	}
}

// readEnvFile reads KEY=value lines as systemd's EnvironmentFile= does for
// the simple lines ours has: # comments, no quotes, no continuations.
func readEnvFile(t *testing.T, name string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for line := range strings.SplitSeq(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || strings.ContainsAny(v, `"'\`) {
			t.Fatalf("%s: %q is not a plain KEY=value line", name, line)
		}
		env[k] = v
	}
	return env
}
