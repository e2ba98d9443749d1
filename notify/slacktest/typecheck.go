package slacktest

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Block Kit payloads checked against Slack's own TypeScript definitions.
// Slack publishes no schema of Block Kit, but its Node SDK's @slack/types
// declares every block, element and composition object
// (https://tools.slack.dev/node-slack-sdk/reference/types/), and TypeScript
// checks an object literal given a declared type for excess properties
// ("Object literals get special treatment and undergo excess property
// checking when assigning them to other variables",
// https://www.typescriptlang.org/docs/handbook/2/objects.html#excess-property-checks).
// So each payload the emulator receives is written out as
//
//	const p12: KnownBlock[] = [{"type": "section", …}];
//
// and `tsc --noEmit --strict` refuses a misspelt field, a wrong element in
// a block, or a value of the wrong kind. Compiling is slow next to a Slack
// call, so a Server only records what it receives (each distinct payload
// once); CheckTypes compiles them in one run, and Checked does so once at
// the end of a test binary for every Server it made.

// A payload kind is the @slack/types type its JSON must have.
const (
	kindBlocks   = "KnownBlock[]"
	kindHome     = "HomeView"
	kindMetadata = "MessageMetadata"
)

// payload is one Block Kit JSON the emulator received.
type payload struct {
	kind   string // the @slack/types type
	method string // the Web API method or endpoint that received it
	json   string
}

// typeLog is what a Server received and has not type-checked yet, guarded
// by Server.mu.
type typeLog struct {
	pending []payload
	seen    map[[32]byte]bool
}

// recordType keeps raw, received by method, for the next CheckTypes. s.mu
// must be held.
func (s *Server) recordType(kind, method, raw string) {
	if s.types.seen == nil {
		s.types.seen = map[[32]byte]bool{}
	}
	h := sha256.Sum256([]byte(kind + "\x00" + raw))
	if s.types.seen[h] {
		return
	}
	s.types.seen[h] = true
	s.types.pending = append(s.types.pending, payload{kind: kind, method: method, json: raw})
}

// takeTypes returns the payloads not checked yet and forgets them.
func (s *Server) takeTypes() []payload {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.types.pending
	s.types.pending = nil
	return p
}

// ErrNoTypeScript is returned by CheckTypes when the pinned TypeScript
// compiler and @slack/types are not installed (see SlackTypesDir).
var ErrNoTypeScript = errors.New("slacktest: TypeScript and @slack/types are not installed")

// CheckTypes type-checks every Block Kit payload s received since the last
// check (blocks of chat.postMessage, chat.update, chat.postEphemeral and
// response_url replies, message metadata, Home tabs of views.publish, and
// Socket Mode acknowledgements) against @slack/types with tsc --strict. It
// returns an error quoting the compiler for each payload Slack's types
// refuse, or one wrapping ErrNoTypeScript when the compiler is not
// installed.
func (s *Server) CheckTypes(ctx context.Context) error {
	return typeCheck(ctx, s.takeTypes())
}

// Runner is what a test binary's *testing.M provides.
type Runner interface{ Run() int }

type runnerFunc func() int

func (f runnerFunc) Run() int { return f() }

// checking holds the Servers made while a Checked runner runs.
var checking struct {
	sync.Mutex
	on      bool
	servers []*Server
}

// register adds s to the Servers a Checked runner checks.
func register(s *Server) {
	checking.Lock()
	defer checking.Unlock()
	if checking.on {
		checking.servers = append(checking.servers, s)
	}
}

// Checked returns a Runner that runs m, then type-checks every Block Kit
// payload the Servers made meanwhile received and not checked yet, in one
// compiler run, as CheckTypes does. A payload Slack's types refuse fails
// the run (exit status 1) and is printed with the compiler's complaint; so
// does a call of a method whose rate limit tiers.go does not give.
// Without the compiler installed it says so and lets the run pass, unless
// CI is "true", where that fails it too. A test binary whose tests use a
// Server runs through it:
//
//	func TestMain(m *testing.M) { os.Exit(slacktest.Checked(m).Run()) }
func Checked(m Runner) Runner {
	return runnerFunc(func() int {
		checking.Lock()
		checking.on = true
		checking.Unlock()
		code := m.Run()
		checking.Lock()
		servers := checking.servers
		checking.on, checking.servers = false, nil
		checking.Unlock()
		var all []payload
		for _, s := range servers {
			all = append(all, s.takeTypes()...)
		}
		if missing := untieredCalls(servers); len(missing) > 0 {
			fmt.Fprintf(os.Stderr, "FAIL: slacktest: the tests called %s, of no tier in tiers.go: add each with its reference page's rate limit\n", strings.Join(missing, ", "))
			code = 1
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		err := typeCheck(ctx, all)
		switch {
		case err == nil:
			return code
		case errors.Is(err, ErrNoTypeScript) && os.Getenv("CI") != "true":
			fmt.Fprintf(os.Stderr, "%v\n(%d Block Kit payloads not type-checked)\n", err, len(all))
			return code
		case errors.Is(err, ErrNoTypeScript):
			fmt.Fprintf(os.Stderr, "FAIL: %d Block Kit payloads not type-checked, and CI=true:\n", len(all))
		default:
			fmt.Fprintln(os.Stderr, "FAIL: Block Kit payloads that Slack's types refuse:")
		}
		fmt.Fprintln(os.Stderr, err)
		return 1
	})
}

// The versions of the compiler and of Slack's types payloads are checked
// with, as notify/slacktest/typescript/package.json pins them for npm ci
// (a test keeps the two the same).
var typescriptPins = map[string]string{
	"@slack/types": "3.2.0",
	"typescript":   "7.0.2",
}

// SlackTypesDir is where the pinned TypeScript compiler and @slack/types
// are installed: $MEETINGBOT_SLACK_TYPES, or meetingbot/slack-types in the
// user's cache directory ($XDG_CACHE_HOME or ~/.cache on Linux). Install
// them there with
//
//	cp notify/slacktest/typescript/package*.json "$dir" && npm ci --prefix "$dir"
func SlackTypesDir() string {
	if d := os.Getenv("MEETINGBOT_SLACK_TYPES"); d != "" {
		return d
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "meetingbot", "slack-types")
	}
	return filepath.Join(cache, "meetingbot", "slack-types")
}

// compiler returns the tsc script of the pinned TypeScript under dir, or
// an error wrapping ErrNoTypeScript when it or the pinned @slack/types is
// missing or of another version.
func compiler(dir string) (string, error) {
	if _, err := exec.LookPath("node"); err != nil {
		return "", fmt.Errorf("%w: node is not on PATH", ErrNoTypeScript)
	}
	for name, want := range typescriptPins {
		var got struct{ Version string }
		raw, err := os.ReadFile(filepath.Join(dir, "node_modules", name, "package.json"))
		if err == nil {
			err = json.Unmarshal(raw, &got)
		}
		if err != nil || got.Version != want {
			return "", fmt.Errorf("%w: want %s@%s in %s (have %q); install with: cp notify/slacktest/typescript/package*.json %s && npm ci --prefix %s",
				ErrNoTypeScript, name, want, dir, got.Version, dir, dir)
		}
	}
	return filepath.Join(dir, "node_modules", "typescript", "bin", "tsc"), nil
}

// typeCheck compiles payloads with the pinned tsc and returns the
// compiler's complaints, each with the payload it is about.
func typeCheck(ctx context.Context, payloads []payload) error {
	if len(payloads) == 0 {
		return nil
	}
	dir := SlackTypesDir()
	tsc, err := compiler(dir)
	if err != nil {
		return err
	}
	// The file goes under dir, so that "@slack/types" resolves to the
	// node_modules there as Node resolves a package.
	work, err := os.MkdirTemp(dir, "check-")
	if err != nil {
		return fmt.Errorf("slacktest: %w", err)
	}
	defer os.RemoveAll(work)
	file := filepath.Join(work, "payloads.ts")
	if err := os.WriteFile(file, typeScript(payloads), 0o600); err != nil {
		return fmt.Errorf("slacktest: %w", err)
	}
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, "node", tsc, "--noEmit", "--strict", "--pretty", "false", file)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err == nil {
		return nil
	} else if _, exited := err.(*exec.ExitError); !exited {
		return fmt.Errorf("slacktest: tsc: %w", err)
	}
	return complaints(&out, payloads)
}

// typeScript writes each payload as a constant of its type, one a line:
// payload i is on line i+2.
func typeScript(payloads []payload) []byte {
	var b bytes.Buffer
	b.WriteString(`import type { KnownBlock, HomeView, MessageMetadata } from "@slack/types";` + "\n")
	for i, p := range payloads {
		fmt.Fprintf(&b, "export const p%d: %s = %s;\n", i, p.kind, p.json)
	}
	return b.Bytes()
}

// tscLine is one complaint of tsc --pretty false: file(line,col): message.
var tscLine = regexp.MustCompile(`^.*\((\d+),(\d+)\): (.*)$`)

// complaints turns tsc's output into an error naming, for each complaint,
// the method that received the payload and the payload near the spot.
func complaints(out io.Reader, payloads []payload) error {
	var msgs []string
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		m := tscLine.FindStringSubmatch(sc.Text())
		if m == nil {
			if strings.TrimSpace(sc.Text()) != "" {
				msgs = append(msgs, sc.Text())
			}
			continue
		}
		line, _ := strconv.Atoi(m[1])
		col, _ := strconv.Atoi(m[2])
		i := line - 2
		if i < 0 || i >= len(payloads) {
			msgs = append(msgs, m[3])
			continue
		}
		p := payloads[i]
		at := max(col-1-len(fmt.Sprintf("export const p%d: %s = ", i, p.kind)), 0)
		msgs = append(msgs, fmt.Sprintf("%s %s: %s\n\tnear: %s", p.method, p.kind, m[3], excerpt(p.json, at)))
	}
	if len(msgs) == 0 {
		msgs = append(msgs, "tsc failed without saying why")
	}
	return errors.New(strings.Join(msgs, "\n"))
}

// excerpt is up to 160 bytes of s around byte at.
func excerpt(s string, at int) string {
	from, to := max(at-40, 0), min(at+120, len(s))
	if from > len(s) {
		from = max(len(s)-160, 0)
	}
	e := strings.ToValidUTF8(s[from:to], "")
	if from > 0 {
		e = "…" + e
	}
	if to < len(s) {
		e += "…"
	}
	return e
}
