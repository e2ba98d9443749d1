package calendar_test

import (
	"context"
	"strings"
	"testing"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/calendar"
	"github.com/meetingbot/meetingbot/calendar/calendartest"
)

// TestAccess reads a calendar shared with details, one shared free/busy
// only, one not shared and one that fails for now, as bot doctor does.
func TestAccess(t *testing.T) {
	srv := newServer(t)
	const email = "bot@meetingbot-test.iam.gserviceaccount.com"
	srv.Share("shared@example.com", email)
	srv.ShareFreeBusy("busy@example.com", email)
	srv.Share("private@example.com", "someone@example.com")
	srv.AddCalendar("flaky@example.com")
	for range 10 {
		srv.QueueFaults("flaky@example.com", calendartest.ServerError)
	}
	src, _ := newSource(t, srv, nil)
	ctx := context.Background()

	if role, fix, err := src.Access(ctx, "shared@example.com"); err != nil || role != calendar.Reader || fix != "" {
		t.Errorf("Access(shared) = %q, %q, %v; want reader", role, fix, err)
	}
	if role, _, err := src.Access(ctx, "busy@example.com"); err != nil || role != calendar.FreeBusyReader {
		t.Errorf("Access(busy) = %q, %v; want freeBusyReader", role, err)
	}
	if fix := src.BusyOnlyFix("busy@example.com"); !strings.Contains(fix, "See all event details") {
		t.Errorf("BusyOnlyFix(busy) = %q, want it to say how to share details", fix)
	}
	role, fix, err := src.Access(ctx, "private@example.com")
	if err == nil || !meetingbot.IsPermanent(err) || role != "" || !strings.Contains(fix, "share private@example.com's calendar with "+email) {
		t.Errorf("Access(private) = %q, %q, %v; want a permanent error and the fix", role, fix, err)
	}
	if _, fix, err := src.Access(ctx, "flaky@example.com"); err == nil || meetingbot.IsPermanent(err) || fix != "" {
		t.Errorf("Access(flaky) = %q, %v; want a transient error and no fix", fix, err)
	}
}
