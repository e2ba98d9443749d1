package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
)

// version says which bot this is: the module version and the commit it was
// built from, as the Go toolchain stamped them into the binary. A release
// built from a tag says the tag (v1.2.0); a build elsewhere in the
// repository a pseudo-version naming its commit, +dirty when the tree had
// changes; go run and builds outside a checkout say (devel).
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "meetingbot (no build information) " + runtime.Version() + " " + runtime.GOOS + "/" + runtime.GOARCH
	}
	return describeBuild(info)
}

// describeBuild is version's line for info.
func describeBuild(info *debug.BuildInfo) string {
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	v := info.Main.Version
	if v == "" {
		v = "(devel)"
	}
	commit := "commit unknown (built without version control information)"
	if rev := settings["vcs.revision"]; rev != "" {
		commit = "commit " + rev
		if t := settings["vcs.time"]; t != "" {
			commit += " (" + t + ")"
		}
		if settings["vcs.modified"] == "true" {
			commit += " with uncommitted changes"
		}
	}
	platform := settings["GOOS"] + "/" + settings["GOARCH"]
	if platform == "/" {
		platform = runtime.GOOS + "/" + runtime.GOARCH
	}
	goVersion := info.GoVersion
	if goVersion == "" {
		goVersion = runtime.Version()
	}
	return strings.Join([]string{"meetingbot " + v, commit, goVersion + " " + platform}, ", ")
}

// printVersion writes version's line to w: `bot version`, `bot --version`.
func printVersion(w io.Writer) error {
	_, err := fmt.Fprintln(w, version())
	return err
}
