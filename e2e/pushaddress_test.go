package e2e

import (
	"strings"
	"testing"
	"time"
)

// With PUBLIC_URL on a domain Google will not post to (not verified for
// the project), the bot says so once at start-up with the fix, opens no
// channel, and still reminds from its safety resync.
func TestUnverifiedPushAddressIsSaidAtStartUp(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.cal.RequireVerifiedDomains("elsewhere.example")
	p := start(t, w.dir, w.env("PUBLIC_URL="+publicURL, "CALENDAR_RESYNC_INTERVAL=2s", "TICK_INTERVAL=1s", "REMINDER_OFFSETS=5s"))
	p.ready()
	eventually(t, 20*time.Second, "the refusal and its fix in the log", func() bool {
		return strings.Contains(p.out.String(), "Search Console") && strings.Contains(p.out.String(), "Domain verification")
	})
	begins := at(12 * time.Second)
	w.meeting(t, "resynced", "Resynced", begins)
	m := w.waitMessage(t, "Resynced", 30*time.Second)
	if !m.Posted.Before(begins) {
		t.Errorf("reminder at %v, want before %v", m.Posted, begins)
	}
	if n := len(w.cal.Channels()); n != 0 {
		t.Errorf("channels open = %d, want 0", n)
	}
	if n := strings.Count(p.out.String(), "Google refuses push notifications to PUBLIC_URL's address"); n != 1 {
		t.Errorf("log lines saying the address is refused = %d, want 1", n)
	}
}
