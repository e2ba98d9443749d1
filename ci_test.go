package meetingbot_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCIRunsEveryStep runs .ci/run with stand-ins for go and the other
// tools, go vet and the race tests failing: the steps after them still
// run, and the end names both failures, counts them, and exits 1.
func TestCIRunsEveryStep(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed: .ci/run is not tested")
	}
	root := t.TempDir()
	script, err := os.ReadFile(".ci/run")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(root, "bin")
	stub := func(path, body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	stub(filepath.Join(root, ".ci", "run"), string(script))
	for _, f := range []string{"package.json", "package-lock.json"} {
		stub(filepath.Join(root, "notify", "slacktest", "typescript", f), "")
	}
	stub(filepath.Join(root, ".ci", "release"), `echo "release ran $*" >>"$CI_TEST_LOG"`)
	// go: vet fails, and so does the race run; everything else passes.
	stub(filepath.Join(bin, "go"), `echo "go $*" >>"$CI_TEST_LOG"
case "$1 $2" in
"vet ./...") echo "vet: broken" >&2; exit 1 ;;
"test -race") exit 1 ;;
"test -count=1") echo "--- PASS: random"; echo "ok  	pkg	1s" ;;
esac
exit 0`)
	for _, tool := range []string{"gofmt", "pg_isready", "promtool", "chromium", "npm"} {
		stub(filepath.Join(bin, tool), `echo "`+tool+` $*" >>"$CI_TEST_LOG"`)
	}
	stub(filepath.Join(bin, "git"), "exit 0")
	log := filepath.Join(root, "log")
	cmd := exec.Command("bash", filepath.Join(root, ".ci", "run"))
	cmd.Env = append(os.Environ(), "PATH="+bin+":/usr/bin:/bin", "CI_TEST_LOG="+log, "MEETINGBOT_SLACK_TYPES="+filepath.Join(root, "types"))
	out, err := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != 1 {
		t.Errorf(".ci/run with failing steps = exit %d (%v), want 1:\n%s", code, err, out)
	}
	ran, _ := os.ReadFile(log)
	for _, want := range []string{"go vet ./...", "go test -race", "TestRandomCalendarsTicksAndCrashes", "TestRandomSnoozesCrashesAndProcesses", "release ran --dry-run", "npm ci"} {
		if !strings.Contains(string(ran), want) {
			t.Errorf(".ci/run did not run %q after a step failed; it ran:\n%s", want, ran)
		}
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if n := len(lines); n < 2 || lines[n-2] != "failed steps: go vet, go test -race" || lines[n-1] != "ci: 10 passed, 2 failed" {
		t.Errorf(".ci/run ends %q, want the failed steps named, then \"ci: 10 passed, 2 failed\"", lines[max(0, len(lines)-2):])
	}
}
