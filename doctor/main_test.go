package doctor_test

import (
	"os"
	"testing"

	"github.com/meetingbot/meetingbot/calendar/calendartest"
	"github.com/meetingbot/meetingbot/notify/slacktest"
)

// TestMain holds the tests' emulators to the vendors' specs: each Calendar
// request to Google's discovery document, and every Block Kit payload
// Slack received to Slack's own types once the tests ran.
func TestMain(m *testing.M) { os.Exit(slacktest.Checked(calendartest.Checked(m)).Run()) }
