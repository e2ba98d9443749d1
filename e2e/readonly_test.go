//go:build unix

package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReadOnlyDatabaseDirectory runs the bot with DATABASE_PATH in a
// directory it cannot write, as an unprivileged user (root writes
// anywhere): it exits 2 at once, naming DATABASE_PATH, the directory and
// a valid example, instead of failing later with a raw permission error.
func TestReadOnlyDatabaseDirectory(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	base, err := os.MkdirTemp("", "meetingbot-ro-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	ro := filepath.Join(base, "data")
	if err := os.Mkdir(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	env := w.env("DATABASE_PATH=" + filepath.Join(ro, "reminders.db"))
	cmd := exec.Command(botBinary(t))
	cmd.Dir = base
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	if os.Geteuid() == 0 {
		for _, dir := range []string{base, filepath.Dir(botBinary(t))} {
			if err := os.Chmod(dir, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	done := make(chan struct{})
	var out []byte
	go func() { out, _ = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("bot still running after 30s")
	}
	want := `DATABASE_PATH="` + filepath.Join(ro, "reminders.db") + `": directory ` + ro + " is not writable by this process"
	if code := cmd.ProcessState.ExitCode(); code != 2 || !strings.HasPrefix(string(out), want) || !strings.Contains(string(out), "e.g. DATABASE_PATH=/data/reminders.db") {
		t.Errorf("bot with a read-only DATABASE_PATH: exit %d, output %q; want 2 and a line starting %q with an example", code, out, want)
	}
	if left, _ := os.ReadDir(ro); len(left) > 0 {
		t.Errorf("bot left %v in the read-only directory", left)
	}
}
