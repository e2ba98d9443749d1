package main

import (
	"bytes"
	"context"
	"runtime/debug"
	"strings"
	"testing"
)

func TestDescribeBuild(t *testing.T) {
	build := func(version string, settings ...string) *debug.BuildInfo {
		info := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "github.com/meetingbot/meetingbot", Version: version}}
		for _, s := range settings {
			k, v, _ := strings.Cut(s, "=")
			info.Settings = append(info.Settings, debug.BuildSetting{Key: k, Value: v})
		}
		return info
	}
	const rev = "1d60f3762faf0b42c9d3bd29d13028dfbc4eb28f"
	tests := []struct {
		name string
		info *debug.BuildInfo
		want string
	}{
		{"a release", build("v1.2.0", "GOOS=linux", "GOARCH=arm64", "vcs.revision="+rev, "vcs.time=2026-12-01T20:53:27Z", "vcs.modified=false"),
			"meetingbot v1.2.0, commit " + rev + " (2026-12-01T20:53:27Z), go1.26.8 linux/arm64"},
		{"between tags, changed", build("v0.0.0-20261201205327-1d60f3762faf+dirty", "GOOS=linux", "GOARCH=amd64", "vcs.revision="+rev, "vcs.time=2026-12-01T20:53:27Z", "vcs.modified=true"),
			"meetingbot v0.0.0-20261201205327-1d60f3762faf+dirty, commit " + rev + " (2026-12-01T20:53:27Z) with uncommitted changes, go1.26.8 linux/amd64"},
		{"go run, no VCS", build("(devel)", "GOOS=linux", "GOARCH=amd64"),
			"meetingbot (devel), commit unknown (built without version control information), go1.26.8 linux/amd64"},
	}
	for _, tt := range tests {
		if got := describeBuild(tt.info); got != tt.want {
			t.Errorf("describeBuild(%s) = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestVersionCommand runs `bot version` and its spellings: one line, the
// same for each, exit 0; an argument after it is a usage error.
func TestVersionCommand(t *testing.T) {
	var first string
	for _, arg := range []string{"version", "--version", "-version"} {
		var stdout, stderr bytes.Buffer
		err := run(context.Background(), []string{arg}, environ(), &stdout, &stderr)
		if code := exitCode(err, &stderr); code != 0 {
			t.Fatalf("run(%s) exit = %d, stderr %q; want 0", arg, code, stderr.String())
		}
		out := stdout.String()
		if !strings.HasPrefix(out, "meetingbot ") || strings.Count(out, "\n") != 1 {
			t.Errorf("run(%s) printed %q, want one line starting \"meetingbot \"", arg, out)
		}
		if first == "" {
			first = out
		} else if out != first {
			t.Errorf("run(%s) printed %q, want the same as bot version: %q", arg, out, first)
		}
	}
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"version", "--long"}, environ(), &stdout, &stderr)
	if code := exitCode(err, &stderr); code != 2 || !strings.Contains(stderr.String(), `unexpected argument "--long"`) {
		t.Errorf("run(version --long) exit = %d, stderr %q; want 2 and the argument named", code, stderr.String())
	}
}
