package meetingbot_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// emulators are the vendors' stand-ins whose Checked runner holds what
// they receive to the vendor's own spec: Google's discovery document,
// Slack's @slack/types.
var emulators = map[string]string{
	module + "/calendar/calendartest": "calendartest",
	module + "/notify/slacktest":      "slacktest",
}

// TestDependenciesRunEmulatorsChecked fails when a test binary can reach
// an emulator but does not run through its Checked runner: a request or a
// payload the vendor refuses would then pass unseen.
func TestDependenciesRunEmulatorsChecked(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-test", "-f", "{{.ImportPath}}\t{{.Dir}}\t{{join .Deps \" \"}}", "./...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -test: %v\n%s", err, out)
	}
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		f := strings.SplitN(line, "\t", 3)
		if len(f) < 3 || !strings.HasSuffix(f[0], ".test") {
			continue
		}
		pkg, dir := strings.TrimSuffix(f[0], ".test"), f[1]
		tests, _ := filepath.Glob(filepath.Join(dir, "*_test.go"))
		var src strings.Builder
		for _, name := range tests {
			b, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			src.Write(b)
		}
		for _, dep := range strings.Fields(f[2]) {
			name, ok := emulators[dep]
			if !ok {
				continue
			}
			call := name + ".Checked("
			if pkg == dep {
				call = "Checked("
			}
			if !strings.Contains(src.String(), call) {
				t.Errorf("the tests of %s reach %s but their TestMain does not run through %s", pkg, name, call)
			}
		}
	}
}
