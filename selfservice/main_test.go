package selfservice_test

import (
	"os"
	"testing"

	"github.com/meetingbot/meetingbot/notify/slacktest"
)

// TestMain type-checks every Block Kit payload the tests' Slack emulators
// received against Slack's own types once the tests ran.
func TestMain(m *testing.M) { os.Exit(slacktest.Checked(m).Run()) }
