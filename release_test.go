package meetingbot_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestRelease runs .ci/release as a maintainer would, on a scratch
// repository holding this working tree with a tag, for the machine's own
// platform: the binary says the tag and its commit, and SHA256SUMS holds
// its checksum. It also checks what the script refuses.
func TestRelease(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed: .ci/release is not tested")
	}
	repo := scratchRepo(t)
	git(t, repo, "tag", "-a", "v0.9.8", "-m", "v0.9.8") // CHANGELOG.md has no section for it
	changelog := filepath.Join(repo, "CHANGELOG.md")
	b, err := os.ReadFile(changelog)
	if err != nil {
		t.Fatal(err)
	}
	b = bytes.Replace(b, []byte("## [Unreleased]\n"), []byte("## [Unreleased]\n\n## [0.9.9] - 2026-12-01\n"), 1)
	if err := os.WriteFile(changelog, b, 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, repo, "commit", "-q", "-am", "Release 0.9.9")
	git(t, repo, "tag", "-a", "v0.9.9", "-m", "v0.9.9")
	commit := strings.TrimSpace(git(t, repo, "rev-parse", "HEAD"))

	for _, c := range []struct {
		tag, want string
	}{
		{"v1.2", "want a tag like v1.2.3"},
		{"v0.9.7", "no tag v0.9.7"},
		{"v0.9.8", `CHANGELOG.md at v0.9.8 has no section "## [0.9.8] - YYYY-MM-DD"`},
	} {
		out, err := release(t, repo, t.TempDir(), c.tag)
		if err == nil || !strings.Contains(out, c.want) {
			t.Errorf(".ci/release %s = %v, %q; want a failure saying %q", c.tag, err, out, c.want)
		}
	}

	dist := t.TempDir()
	target := runtime.GOOS + "/" + runtime.GOARCH
	if out, err := release(t, repo, dist, "v0.9.9", target); err != nil {
		t.Fatalf(".ci/release v0.9.9 %s: %v\n%s", target, err, out)
	}
	name := "meetingbot-v0.9.9-" + runtime.GOOS + "-" + runtime.GOARCH
	bin := filepath.Join(dist, name)
	sums, err := os.ReadFile(filepath.Join(dist, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	if want := hex.EncodeToString(sum[:]) + "  " + name + "\n"; string(sums) != want {
		t.Errorf("SHA256SUMS = %q, want %q", sums, want)
	}
	for _, arg := range []string{"version", "--version"} {
		out, err := exec.Command(bin, arg).CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, arg, err, out)
		}
		if want := "meetingbot v0.9.9, commit " + commit + " ("; !strings.HasPrefix(string(out), want) {
			t.Errorf("%s %s = %q, want it to start %q", name, arg, out, want)
		}
	}
}

// scratchRepo copies the working tree's files (tracked, and untracked but
// not ignored) into a new git repository with one commit, and returns it.
func scratchRepo(t *testing.T) string {
	t.Helper()
	list, err := exec.Command("git", "ls-files", "-co", "--exclude-standard").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	repo := t.TempDir()
	sc := bufio.NewScanner(bytes.NewReader(list))
	for sc.Scan() {
		name := sc.Text()
		fi, err := os.Stat(name)
		if err != nil {
			continue // deleted in the working tree
		}
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(repo, name)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, data, fi.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	git(t, repo, "init", "-q")
	git(t, repo, "add", "-A")
	git(t, repo, "commit", "-q", "-m", "scratch")
	return repo
}

// git runs git in dir, with an identity of its own, and returns its output.
func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=release test", "-c", "user.email=release@example.com", "-c", "init.defaultBranch=main", "-c", "tag.gpgSign=false", "-c", "commit.gpgSign=false"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// release runs repo's .ci/release with args, writing to dist.
func release(t *testing.T, repo, dist string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(filepath.Join(repo, ".ci", "release"), args...)
	cmd.Env = append(os.Environ(), "RELEASE_DIR="+dist)
	out, err := cmd.CombinedOutput()
	return string(out), err
}
