package meetingbot_test

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// module is this module's import path.
const module = "github.com/meetingbot/meetingbot"

// pgx is the PostgreSQL driver, linked only where several replicas share
// one database: storage/postgres and the binary.
const pgx = "github.com/jackc/pgx/v5"

// forbidden lists, per package of the module, the packages it must not
// depend on (directly or not), and why. Modelled on tailscale's deptest.
var forbidden = map[string]map[string]string{
	"": {
		"modernc.org/sqlite":       "the words of the contract link no driver",
		pgx:                        "the words of the contract link no driver",
		module + "/scheduler":      "the root imports nothing of the module",
		module + "/storage/sqlite": "the root imports nothing of the module",
	},
	"calendar": {
		"modernc.org/sqlite":       "reading Calendar needs no database driver",
		pgx:                        "reading Calendar needs no database driver",
		module + "/scheduler":      "an adapter never imports the engine",
		module + "/notify":         "adapters never import each other",
		module + "/storage/sqlite": "adapters never import each other",
		module + "/agenda":         "an adapter never imports the engine",
		module + "/mirror":         "an adapter never imports the engine: the words it shares with the mirror live at the root",
	},
	"notify": {
		"modernc.org/sqlite":       "posting to Slack needs no database driver",
		pgx:                        "posting to Slack needs no database driver",
		module + "/scheduler":      "an adapter never imports the engine",
		module + "/calendar":       "adapters never import each other",
		module + "/storage/sqlite": "adapters never import each other",
		module + "/feed":           "an adapter never imports the engine: the notices' words live at the root",
	},
	"storage/sqlite": {
		pgx:                          "the SQLite store links no PostgreSQL driver",
		module + "/storage/postgres": "adapters never import each other",
		module + "/scheduler":        "an adapter never imports the engine",
		module + "/calendar":         "adapters never import each other",
		module + "/notify":           "adapters never import each other",
	},
	"config": {
		"modernc.org/sqlite":       "parsing the environment needs no database driver",
		pgx:                        "parsing the environment needs no database driver",
		module + "/scheduler":      "configuration speaks the root's words, not the engine's",
		module + "/storage/sqlite": "configuration opens nothing",
	},
	"notify/action": {
		module + "/notify":          "what a button carries is read by the notifier and self-service alike; it imports neither",
		module + "/selfservice":     "what a button carries is read by the notifier and self-service alike; it imports neither",
		"github.com/slack-go/slack": "a button's value is bytes Slack hands back, not an API call",
	},
	"storage/migration": {
		"modernc.org/sqlite": "reading SQL files needs no driver",
		pgx:                  "reading SQL files needs no driver",
	},
	"internal/outbound": {
		"modernc.org/sqlite": "an HTTP client needs no database driver",
		pgx:                  "an HTTP client needs no database driver",
		module:               "the clients' HTTP guard speaks no words of the contract",
	},
	"scheduler": {
		"modernc.org/sqlite":       "the engine consumes a Ledger interface, not a driver",
		pgx:                        "the engine consumes a Ledger interface, not a driver",
		module + "/storage/sqlite": "the engine declares what it consumes; adapters provide it",
		module + "/calendar":       "the engine declares what it consumes; adapters provide it",
		module + "/notify":         "the engine declares what it consumes; adapters provide it",
	},
	"selfservice": {
		"modernc.org/sqlite":       "Slack's requests are served through a Store interface of the package's own",
		pgx:                        "Slack's requests are served through a Store interface of the package's own",
		module + "/storage/sqlite": "Slack's requests are served through a Store interface of the package's own",
		module + "/scheduler":      "an adapter never imports the engine",
		module + "/notify":         "adapters never import each other",
		module + "/calendar":       "adapters never import each other",
	},
	"storage/postgres": {
		"modernc.org/sqlite":       "the PostgreSQL store links no SQLite driver",
		module + "/storage/sqlite": "adapters never import each other",
		module + "/scheduler":      "an adapter never imports the engine",
		module + "/calendar":       "adapters never import each other",
		module + "/notify":         "adapters never import each other",
	},
	"agenda": {
		"modernc.org/sqlite":       "the agenda consumes a Ledger interface, not a driver",
		pgx:                        "the agenda consumes a Ledger interface, not a driver",
		module + "/storage/sqlite": "the agenda declares what it consumes; adapters provide it",
		module + "/calendar":       "the agenda declares what it consumes; adapters provide it",
		module + "/notify":         "the agenda declares what it consumes; adapters provide it",
		module + "/scheduler":      "the agenda is an engine beside the scheduler, not inside it",
	},
	"timer": {
		"modernc.org/sqlite":       "the timers are kept through a Store interface of the package's own",
		pgx:                        "the timers are kept through a Store interface of the package's own",
		module + "/storage/sqlite": "the timer engine declares what it consumes; adapters provide it",
		module + "/scheduler":      "the timer engine is beside the scheduler, not inside it",
		module + "/snooze":         "the engine knows no kind of timer; handlers are given to it",
	},
	"snooze": {
		"modernc.org/sqlite":       "the snoozes consume a Ledger and a Store interface, not a driver",
		pgx:                        "the snoozes consume a Ledger and a Store interface, not a driver",
		module + "/storage/sqlite": "the snoozes declare what they consume; adapters provide it",
		module + "/calendar":       "the snoozes declare what they consume; adapters provide it",
		module + "/notify":         "the snoozes declare what they consume; adapters provide it",
		module + "/scheduler":      "the snoozes are beside the scheduler, not inside it",
	},
	"rsvp": {
		"modernc.org/sqlite":       "answers and notices consume a Ledger and a Settings interface, not a driver",
		pgx:                        "answers and notices consume a Ledger and a Settings interface, not a driver",
		module + "/storage/sqlite": "answers and notices declare what they consume; adapters provide it",
		module + "/calendar":       "answers and notices declare what they consume; adapters provide it",
		module + "/notify":         "answers and notices declare what they consume; adapters provide it",
		module + "/connect":        "answers and notices declare what they consume; adapters provide it",
		module + "/selfservice":    "self-service consumes the answers, not the other way",
		module + "/scheduler":      "answers and notices are beside the scheduler, not inside it",
	},
	"feed": {
		"modernc.org/sqlite":       "the change notices consume a Ledger and a Seen interface, not a driver",
		pgx:                        "the change notices consume a Ledger and a Seen interface, not a driver",
		module + "/storage/sqlite": "the change notices declare what they consume; adapters provide it",
		module + "/calendar":       "the change notices declare what they consume; adapters provide it",
		module + "/notify":         "the change notices declare what they consume; adapters provide it",
		module + "/mirror":         "the change notices read the mirror through a Source interface of their own",
		module + "/scheduler":      "the change notices are beside the scheduler, not inside it",
	},
	"status": {
		"modernc.org/sqlite":       "the statuses read connections and settings through interfaces of their own",
		pgx:                        "the statuses read connections and settings through interfaces of their own",
		module + "/storage/sqlite": "the statuses declare what they consume; adapters provide it",
		module + "/notify":         "the statuses declare what they consume (a Keeper); the notifier provides it",
		module + "/calendar":       "the statuses declare what they consume; adapters provide it",
		module + "/scheduler":      "the statuses are swept by the scheduler, not inside it",
	},
	"monitor": {
		"modernc.org/sqlite": "health and metrics are told, not read from a database",
		pgx:                  "health and metrics are told, not read from a database",
	},
	"mirror": {
		"modernc.org/sqlite":       "the mirror keeps its state through a Store interface of its own",
		pgx:                        "the mirror keeps its state through a Store interface of its own",
		module + "/storage/sqlite": "the mirror declares what it consumes; adapters provide it",
		module + "/calendar":       "the mirror declares what it consumes; adapters provide it",
		module + "/notify":         "the mirror declares what it consumes; adapters provide it",
		module + "/scheduler":      "the mirror provides the engine's Source; it does not import the engine",
	},
	"audit": {
		"modernc.org/sqlite":       "the audit reads through interfaces of its own",
		pgx:                        "the audit reads through interfaces of its own",
		module + "/storage/sqlite": "the audit reads through interfaces of its own",
		module + "/notify":         "the audit reads through interfaces of its own",
		module + "/calendar":       "the audit reads through interfaces of its own",
	},
	"internal/keyring": {
		module:                "the keyring seals bytes and knows no words of the contract",
		"golang.org/x/oauth2": "the keyring seals bytes, whatever they hold",
	},
	"connect": {
		"modernc.org/sqlite":       "connections are kept through a Store interface of the package's own",
		pgx:                        "connections are kept through a Store interface of the package's own",
		module + "/storage/sqlite": "connections are kept through a Store interface of the package's own",
		module + "/calendar":       "adapters never import each other: the calendar reads through an interface of its own",
		module + "/selfservice":    "adapters never import each other: Slack is told through the Config's callbacks",
		module + "/scheduler":      "an adapter never imports the engine",
	},
}

// TestDependencies fails when a package depends on one it must not: a
// driver linked where no database is used, an adapter importing another
// adapter or the engine.
func TestDependencies(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	for pkg, bad := range forbidden {
		path := module
		if pkg != "" {
			path += "/" + pkg
		}
		out, err := exec.Command("go", "list", "-deps", path).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", path, err, out)
		}
		deps := map[string]bool{}
		for _, d := range strings.Fields(string(out)) {
			deps[d] = true
		}
		for dep, why := range bad {
			if deps[dep] {
				t.Errorf("%s depends on %s: %s", path, dep, why)
			}
		}
	}
}

// builders are the packages that build the whole bot or run it as a
// subcommand, and those that may import them: cmd/ only parses flags and
// starts what one builder package builds.
var builders = map[string][]string{
	module + "/daemon": {module + "/cmd/bot", module + "/demo"},
	module + "/demo":   {module + "/cmd/bot"},
	module + "/doctor": {module + "/cmd/bot"},
}

// TestOnlyTheBinaryBuildsTheBot fails when a part of the bot depends on
// the package that builds it all (or on a subcommand's): the builder
// depends on the parts, never the other way.
func TestOnlyTheBinaryBuildsTheBot(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Deps \" \"}}", "./...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg, deps := fields[0], fields[1:]
		for _, dep := range deps {
			allowed, ok := builders[dep]
			if ok && !slices.Contains(allowed, pkg) {
				t.Errorf("%s depends on %s, which only %v may import", pkg, dep, allowed)
			}
		}
	}
}
