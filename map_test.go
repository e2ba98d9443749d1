package meetingbot_test

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// goDirs returns the folders of the module holding Go files, relative to
// the root ("" for the root), testdata and hidden folders left out.
func goDirs(t *testing.T) []string {
	t.Helper()
	seen := map[string]bool{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, ".go") {
			dir := filepath.ToSlash(filepath.Dir(path))
			if dir == "." {
				dir = ""
			}
			seen[dir] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for d := range seen {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	return dirs
}

// TestMapNamesEveryPackage keeps docs/development.md's map of the code
// true: every folder with Go code has its row, and the map names no folder
// that is gone.
func TestMapNamesEveryPackage(t *testing.T) {
	b, err := os.ReadFile("docs/development.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	have := map[string]bool{}
	for _, dir := range goDirs(t) {
		have[dir] = true
		row := "| `" + dir + "/` |"
		if dir == "" {
			row = "| `meetingbot` (the root) |"
		}
		if !strings.Contains(doc, row) {
			t.Errorf("docs/development.md's map has no row %s for the package in %q", row, "./"+dir)
		}
	}
	for _, line := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(line, "| `") || !strings.Contains(line, "/` |") {
			continue
		}
		dir := strings.TrimSuffix(strings.TrimPrefix(strings.SplitN(line, " |", 2)[0], "| `"), "/`")
		if !have[dir] {
			t.Errorf("docs/development.md's map has a row for %s/, which holds no Go code", dir)
		}
	}
}

// TestEveryPackageHasADocComment: each package says what it is, in a doc
// comment that starts "Package <name>" ("Command <name>" for a binary).
func TestEveryPackageHasADocComment(t *testing.T) {
	for _, dir := range goDirs(t) {
		path := "./" + dir
		pkgs, err := parser.ParseDir(token.NewFileSet(), path, nil, parser.ParseComments|parser.PackageClauseOnly)
		if err != nil {
			t.Fatal(err)
		}
		for name, pkg := range pkgs {
			if strings.HasSuffix(name, "_test") && len(pkgs) > 1 {
				continue // the external tests of a package that has its own
			}
			want := "Package " + name + " "
			if name == "main" {
				want = "Command " + filepath.Base(dir) + " "
			}
			documented := false
			for _, f := range pkg.Files {
				if f.Doc != nil && strings.HasPrefix(f.Doc.Text(), want) {
					documented = true
				}
			}
			if !documented {
				t.Errorf("package %s (%s) has no doc comment starting %q", name, path, want)
			}
		}
	}
}
