// Package e2e runs the built bot as its users and operators do: the binary
// started with the environment the docs give, against Calendar- and
// Slack-shaped servers (calendartest, slacktest) on loopback and the local
// PostgreSQL, killed, restarted, replicated and cut off; and the
// benchmarks of the whole bot (the simulated day, the load). It holds only
// tests.
package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"io"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot/calendar/calendartest"
	"github.com/meetingbot/meetingbot/notify/slacktest"
)

// Helpers that build the bot once and run it as a real process against the
// Calendar and Slack emulators in the test process.

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// botBinary builds ./cmd/bot once per test run, as a user would.
func botBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "meetingbot-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "bot")
		cmd := exec.Command("go", "build", "-o", binPath, "../cmd/bot")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = errors.New("go build: " + err.Error() + "\n" + string(out))
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// parallelRuns is how many of the package's tests run at once unless
// -test.parallel says otherwise: they spend their time waiting for
// second-scale instants, with a bot process and two emulators each, not
// computing, so far more of them than the cores (go test's default) fit
// on a 2-core machine.
const parallelRuns = 8

func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		flag.Set("test.parallel", strconv.Itoa(parallelRuns))
	}
	code := slacktest.Checked(calendartest.Checked(m)).Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

// world is a Google Calendar and a Slack workspace on loopback, with Alice
// in both.
type world struct {
	cal   *calendartest.Server
	slack *slacktest.Server
	dir   string
}

const (
	alice  = "alice@example.com"
	team   = "team@example.com"
	engID  = "C0ENG00001"
	teamID = team + "=#eng"
)

func newWorld(t *testing.T) *world {
	t.Helper()
	// The binary is built before a test picks its instants (at(25s) and
	// the like): a cold build takes minutes, and a bot started after its
	// meeting would fail a test that tests nothing.
	botBinary(t)
	w := &world{cal: calendartest.NewServer(), slack: slacktest.NewServer(), dir: t.TempDir()}
	t.Cleanup(w.cal.Close)
	t.Cleanup(w.slack.Close)
	w.slack.AddUser(slacktest.User{ID: "U0ALICE001", Name: "alice", Email: alice})
	w.slack.AddChannel(slacktest.Channel{ID: engID, Name: "eng", Member: true})
	w.cal.AddCalendar(alice)
	w.cal.AddCalendar(team)
	return w
}

// env is a production environment pointed at the world, with overrides.
func (w *world) env(overrides ...string) map[string]string {
	env := map[string]string{
		"SLACK_BOT_TOKEN":         slacktest.Token,
		"SLACK_API_URL":           w.slack.URL(),
		"GOOGLE_CREDENTIALS_JSON": string(w.cal.ServiceAccountJSON()),
		"GOOGLE_API_ENDPOINT":     w.cal.Endpoint(),
		"CALENDARS":               alice,
		"REMINDER_OFFSETS":        "5s",
		"TICK_INTERVAL":           "1s",
		"DATABASE_PATH":           filepath.Join(w.dir, "reminders.db"),
		"HTTP_ADDR":               "127.0.0.1:0",
		"LOG_LEVEL":               "debug",
	}
	for _, o := range overrides {
		k, v, _ := strings.Cut(o, "=")
		env[k] = v
	}
	return env
}

// meeting puts a meeting starting at start into Alice's calendar.
func (w *world) meeting(t *testing.T, id, title string, start time.Time) {
	t.Helper()
	w.meetingIn(t, alice, id, title, start)
}

// meetingIn puts a meeting starting at start into calendarID.
func (w *world) meetingIn(t *testing.T, calendarID, id, title string, start time.Time) {
	t.Helper()
	ev := calendartest.NewEvent(id, title, start, start.Add(30*time.Minute))
	ev.HangoutLink = "https://meet.google.com/" + id
	if err := w.cal.Put(calendarID, ev); err != nil {
		t.Fatalf("Put(%s) = %v", id, err)
	}
}

// messages returns the messages whose text mentions title.
func (w *world) messages(title string) []slacktest.Message {
	var out []slacktest.Message
	for _, m := range w.slack.Messages() {
		if strings.Contains(m.Text, title) {
			out = append(out, m)
		}
	}
	return out
}

// waitMessage waits until a message mentions title and returns the first.
func (w *world) waitMessage(t *testing.T, title string, within time.Duration) slacktest.Message {
	t.Helper()
	var got []slacktest.Message
	eventually(t, within, "a reminder of "+title, func() bool {
		got = w.messages(title)
		return len(got) > 0
	})
	return got[0]
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up after %v waiting for %s", within, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// proc is a running bot.
type proc struct {
	t    testing.TB
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{}
	err  error
}

// syncBuffer collects a process's stdout and stderr.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// botOutput prints each bot's output when its test ends, passed or not.
var botOutput = flag.Bool("bot.output", false, "print the output of every bot a test started, also when the test passes")

// start runs the bot with exactly env (plus PATH and HOME), in dir.
func start(t testing.TB, dir string, env map[string]string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(botBinary(t), args...)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	for _, k := range slices.Sorted(maps.Keys(env)) {
		cmd.Env = append(cmd.Env, k+"="+env[k])
	}
	p := &proc{t: t, cmd: cmd, out: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.out, p.out
	if err := cmd.Start(); err != nil {
		t.Fatalf("start bot: %v", err)
	}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		p.cmd.Process.Kill()
		<-p.done
		if t.Failed() || *botOutput {
			t.Logf("bot output:\n%s", p.out.String())
		}
	})
	return p
}

// exited reports whether the process has ended.
func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// wait waits for the process to end and returns its exit status.
func (p *proc) wait(within time.Duration) (int, time.Duration) {
	p.t.Helper()
	began := time.Now()
	select {
	case <-p.done:
	case <-time.After(within):
		p.t.Fatalf("bot still running after %v", within)
	}
	return p.cmd.ProcessState.ExitCode(), time.Since(began)
}

// signal sends sig and returns at once.
func (p *proc) signal(sig syscall.Signal) {
	p.t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		p.t.Fatalf("signal %v: %v", sig, err)
	}
}

// addr waits for the bot to log its HTTP address and returns it.
func (p *proc) addr() string {
	p.t.Helper()
	var addr string
	eventually(p.t, 30*time.Second, "the HTTP address in the log", func() bool {
		for line := range strings.SplitSeq(p.out.String(), "\n") {
			var rec struct {
				Msg  string `json:"msg"`
				Addr string `json:"addr"`
			}
			if json.Unmarshal([]byte(line), &rec) == nil && rec.Addr != "" && strings.HasPrefix(rec.Msg, "serving /healthz") {
				addr = rec.Addr
				return true
			}
		}
		if p.exited() {
			p.t.Fatalf("bot exited early: %v", p.err)
		}
		return false
	})
	return addr
}

// ready waits until /healthz answers 200.
func (p *proc) ready() string {
	p.t.Helper()
	addr := p.addr()
	eventually(p.t, 30*time.Second, "GET /healthz = 200", func() bool {
		status, _ := httpGet("http://" + addr + "/healthz")
		return status == http.StatusOK
	})
	return addr
}

func httpGet(url string) (int, string) {
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// auditReport runs bot audit --since 1h --json with env in dir, beside a
// running bot, wants exit 0 of it, and decodes its report (on stdout,
// among the log lines on stderr) into report.
func auditReport(t *testing.T, dir string, env map[string]string, report any) {
	t.Helper()
	a := start(t, dir, env, "audit", "--since", "1h", "--json")
	if code, _ := a.wait(30 * time.Second); code != 0 {
		t.Errorf("bot audit: exit %d, want 0: %s", code, a.out.String())
	}
	out := a.out.String()
	i := strings.Index(out, "{\n  \"from\"")
	if i < 0 {
		t.Fatalf("bot audit --json printed no report: %s", out)
	}
	if err := json.NewDecoder(strings.NewReader(out[i:])).Decode(report); err != nil {
		t.Fatalf("bot audit --json = %v: %s", err, out)
	}
}
