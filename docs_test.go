package meetingbot_test

import (
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// TestDocsLinks checks every relative link in README.md, CHANGELOG.md and
// docs/*.md: the file it names exists, and its #anchor, if any, is a
// heading there (as GitHub renders it). It also checks that every page of
// docs/ is linked from another, so that no page is written that nobody can
// find.
func TestDocsLinks(t *testing.T) {
	pages, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	pages = append([]string{"README.md", "CHANGELOG.md"}, pages...)
	anchors := map[string][]string{} // page -> its headings' anchors
	links := map[string][]string{}   // page -> its relative link targets
	for _, p := range pages {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		anchors[p], links[p] = scanMarkdown(string(b))
	}
	linked := map[string]bool{}
	for _, p := range pages {
		for _, l := range links[p] {
			file, frag, _ := strings.Cut(l, "#")
			target := p
			if file != "" {
				target = path.Clean(path.Join(path.Dir(p), file))
			}
			linked[target] = true
			if _, err := os.Stat(filepath.FromSlash(target)); err != nil {
				t.Errorf("%s links to %s: %v", p, l, err)
				continue
			}
			if frag == "" {
				continue
			}
			if !strings.HasSuffix(target, ".md") {
				t.Errorf("%s links to %s: an anchor in a file that is not Markdown", p, l)
				continue
			}
			if _, ok := anchors[target]; !ok {
				b, err := os.ReadFile(filepath.FromSlash(target))
				if err != nil {
					t.Fatal(err)
				}
				anchors[target], _ = scanMarkdown(string(b))
			}
			if !slices.Contains(anchors[target], frag) {
				t.Errorf("%s links to %s: %s has no heading with the anchor #%s (it has %s)", p, l, target, frag, strings.Join(anchors[target], ", "))
			}
		}
	}
	for _, p := range pages[2:] {
		if !linked[p] {
			t.Errorf("%s is linked from no other page", p)
		}
	}
}

var (
	linkRE       = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	codeSpanRE   = regexp.MustCompile("`[^`]*`")
	headingRE    = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
	schemeLinkRE = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*:`)
)

// scanMarkdown returns the anchors of md's headings and the targets of its
// relative links, skipping fenced code blocks and code spans.
func scanMarkdown(md string) (anchors, links []string) {
	seen := map[string]int{}
	fenced := false
	for _, line := range strings.Split(md, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		if m := headingRE.FindStringSubmatch(line); m != nil {
			a := slug(m[1])
			if n := seen[a]; n > 0 {
				anchors = append(anchors, fmt.Sprintf("%s-%d", a, n))
			} else {
				anchors = append(anchors, a)
			}
			seen[a]++
		}
		for _, m := range linkRE.FindAllStringSubmatch(codeSpanRE.ReplaceAllString(line, ""), -1) {
			if !schemeLinkRE.MatchString(m[1]) {
				links = append(links, m[1])
			}
		}
	}
	return anchors, links
}

// slug is the anchor GitHub gives a heading: lower case, code spans and
// links reduced to their text, punctuation dropped, spaces made hyphens.
func slug(heading string) string {
	heading = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`).ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

func TestSlug(t *testing.T) {
	for _, c := range []struct{ heading, want string }{
		{"Deploy to Fly.io", "deploy-to-flyio"},
		{"Auditing reminders: `bot audit`", "auditing-reminders-bot-audit"},
		{"Push: Calendar calls that grow with changes", "push-calendar-calls-that-grow-with-changes"},
		{"What follows, and is tested", "what-follows-and-is-tested"},
		{"One tick, in process", "one-tick-in-process"},
		{"`bot doctor`", "bot-doctor"},
	} {
		if got := slug(c.heading); got != c.want {
			t.Errorf("slug(%q) = %q, want %q", c.heading, got, c.want)
		}
	}
}

// TestDocsAreTheProjects: the design a reader is pointed at is the one in
// docs/, so nothing the repository holds cites a DESIGN.md it lacks; and
// the README stays a first page (at most 250 lines), with the rest in
// docs/.
func TestDocsAreTheProjects(t *testing.T) {
	out, err := exec.Command("git", "ls-files").Output()
	if err != nil {
		t.Skipf("git ls-files: %v (not a checkout)", err)
	}
	for _, f := range strings.Fields(string(out)) {
		if f == "docs_test.go" || !(strings.HasSuffix(f, ".go") || strings.HasSuffix(f, ".md") || strings.HasSuffix(f, ".yaml") || strings.HasSuffix(f, ".yml") || strings.HasSuffix(f, ".toml")) {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			continue // deleted in the work tree
		}
		for i, line := range strings.Split(string(b), "\n") {
			if strings.Contains(line, "DESIGN.md") {
				t.Errorf("%s:%d cites DESIGN.md, which the repository lacks: cite docs/design.md", f, i+1)
			}
		}
	}
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n > 250 {
		t.Errorf("README.md has %d lines, want at most 250: move what is not the first page to docs/", n)
	}
}

// TestReadmeCostTableSaysItsUnits keeps the README's table of a simulated
// day honest about its columns: each says whether it counts per person or
// in all, and a column of "N of M" (a day's reminders) is a total.
func TestReadmeCostTableSaysItsUnits(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	var header []string
	found := false
	for line := range strings.SplitSeq(string(b), "\n") {
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		switch {
		case strings.HasPrefix(line, "| |") && strings.Contains(line, "Calendar calls"):
			header, found = cells, true
			for _, h := range header[1:] {
				if !strings.Contains(h, "per person") && !strings.Contains(h, "in all") {
					t.Errorf("README cost table: column %q says neither per person nor in all", h)
				}
			}
		case header != nil && strings.HasPrefix(line, "| ") && !strings.HasPrefix(line, "| ---"):
			for i, c := range cells {
				if i < len(header) && strings.Contains(c, " of ") && !strings.Contains(header[i], "in all") {
					t.Errorf("README cost table: %q is a total, in column %q", c, header[i])
				}
			}
		case header != nil && !strings.HasPrefix(line, "|"):
			header = nil
		}
	}
	if !found {
		t.Fatal("README.md has no table of Calendar calls")
	}
}
