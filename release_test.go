package meetingbot_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
)

// TestRelease runs .ci/release on a scratch repository holding this
// working tree, for the machine's own platform, as CI runs it (--dry-run:
// the newest CHANGELOG.md version, tagged on HEAD in a clone of its own):
// the binary says the tag and its commit, its SBOM lists the modules linked
// into it, and SHA256SUMS holds the checksums of both. It also checks what
// the script refuses.
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
	if out, err := release(t, repo, dist, "--dry-run", target); err != nil {
		t.Fatalf(".ci/release --dry-run %s: %v\n%s", target, err, out)
	}
	name := "meetingbot-v0.9.9-" + runtime.GOOS + "-" + runtime.GOARCH
	bin := filepath.Join(dist, name)
	sums, err := os.ReadFile(filepath.Join(dist, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	for _, f := range []string{name, name + ".cdx.json"} {
		data, err := os.ReadFile(filepath.Join(dist, f))
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(data)
		want.WriteString(hex.EncodeToString(sum[:]) + "  " + f + "\n")
	}
	if string(sums) != want.String() {
		t.Errorf("SHA256SUMS = %q, want %q", sums, want.String())
	}
	checkSBOM(t, filepath.Join(dist, name+".cdx.json"), "v0.9.9")
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

// checkSBOM checks that the SBOM at path is CycloneDX JSON for the bot at
// version, listing the modules linked into it, the Slack and Calendar
// clients among them, each with a version.
func checkSBOM(t *testing.T, path, version string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var sbom struct {
		BOMFormat string `json:"bomFormat"`
		Metadata  struct {
			Component struct{ Name, Version string } `json:"component"`
		} `json:"metadata"`
		Components []struct{ Name, Version string } `json:"components"`
	}
	if err := json.Unmarshal(b, &sbom); err != nil {
		t.Fatalf("SBOM %s: %v", path, err)
	}
	if c := sbom.Metadata.Component; sbom.BOMFormat != "CycloneDX" || c.Name != module || c.Version != version {
		t.Errorf("SBOM = %s of %s %s, want CycloneDX of %s %s", sbom.BOMFormat, c.Name, c.Version, module, version)
	}
	found := 0
	for _, c := range sbom.Components {
		if c.Version == "" {
			t.Errorf("SBOM component %s has no version", c.Name)
		}
		if c.Name == "github.com/slack-go/slack" || c.Name == "google.golang.org/api" {
			found++
		}
	}
	if found != 2 {
		t.Errorf("SBOM lists %d components, without the Slack and Calendar clients", len(sbom.Components))
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

// TestReleaseArtifactsNamed keeps the recipes naming what .ci/release
// writes, at the newest version of CHANGELOG.md: the Dockerfile's release
// target copies the binary from dist/, the systemd unit and setup page
// install it, and the Kubernetes manifests run the image built from it.
func TestReleaseArtifactsNamed(t *testing.T) {
	read := func(name string) string {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	script := read(".ci/release")
	for _, want := range []string{`out=${RELEASE_DIR:-$repo/dist/$tag}`, `name="meetingbot-$tag-$os-$arch"`, `"$name.cdx.json"`, ">SHA256SUMS"} {
		if !strings.Contains(script, want) {
			t.Fatalf(".ci/release lacks %q: this test's idea of its files is out of date", want)
		}
	}
	m := regexp.MustCompile(`(?m)^## \[(\d+\.\d+\.\d+)\] - \d{4}-\d{2}-\d{2}$`).FindStringSubmatch(read("CHANGELOG.md"))
	if m == nil {
		t.Fatal("CHANGELOG.md has no released version")
	}
	tag := "v" + m[1]
	binary := "meetingbot-" + tag + "-linux-amd64"
	for _, c := range []struct{ file, want string }{
		{"Dockerfile", "COPY dist/${VERSION}/meetingbot-${VERSION}-linux-${TARGETARCH} /usr/local/bin/bot"},
		{"Dockerfile", "docker build --target release --build-arg VERSION=" + tag},
		{"deploy/systemd/meetingbot.service", "install -m 0755 " + binary + " /usr/local/bin/meetingbot"},
		{"deploy/systemd/meetingbot.service", "sha256sum -c --ignore-missing SHA256SUMS"},
		{"docs/setup.md", "install -m 0755 " + binary + " /usr/local/bin/meetingbot"},
		{"docs/setup.md", "docker build --target release --build-arg VERSION=" + tag + " -t registry.example.com/meetingbot:" + tag + " ."},
		{"deploy/kubernetes/deployment.yaml", "docker build --target release --build-arg VERSION=" + tag},
		{"deploy/kubernetes/deployment.yaml", "image: registry.example.com/meetingbot:" + tag},
		{"deploy/kubernetes/replicas/deployment.yaml", "image: registry.example.com/meetingbot:" + tag},
	} {
		if !strings.Contains(read(c.file), c.want) {
			t.Errorf("%s lacks %q: name the files .ci/release %s writes", c.file, c.want, tag)
		}
	}
}
