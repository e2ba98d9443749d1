package slacktest

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"
)

// The versions the checks expect are the ones .ci/run installs.
func TestTypeScriptPinsAreThePackages(t *testing.T) {
	raw, err := os.ReadFile("typescript/package.json")
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct {
		Dev map[string]string `json:"devDependencies"`
	}
	if err := json.Unmarshal(raw, &pkg); err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(pkg.Dev), fmt.Sprint(typescriptPins); got != want {
		t.Errorf("typescript/package.json pins %s, want %s as the checks expect", got, want)
	}
}
