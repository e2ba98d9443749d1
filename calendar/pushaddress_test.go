package calendar_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/calendar"
	"github.com/meetingbot/meetingbot/calendar/calendartest"
)

// A watch Google refuses because the address's domain is not verified
// ("Unauthorized WebHook callback channel", push.webhookUrlUnauthorized)
// says how to verify it, matches meetingbot.ErrPushAddressUnverified, and
// costs one call: it is no credential's fault, so no token is renewed for
// it, and a person's connection it was made with goes on.
func TestWatchOfAnUnverifiedDomain(t *testing.T) {
	srv := newServer(t)
	srv.AddCalendar(alice)
	srv.AddCalendar("carol@example.com")
	srv.RequireVerifiedDomains("verified.example.com")
	acc := &fakeAccounts{sources: map[string]oauth2.TokenSource{"carol@example.com": grant(t, srv, "carol@example.com")}}
	src, _ := newSource(t, srv, func(c *calendar.Config) { c.Accounts = acc })
	const address = "https://bot.example.com/google/notify"

	for _, cal := range []string{alice, "carol@example.com"} {
		before := srv.RequestsTo(calendartest.MethodWatch)
		_, err := src.Watch(t.Context(), cal, "c1", "t", address, time.Hour)
		if !errors.Is(err, meetingbot.ErrPushAddressUnverified) || !meetingbot.IsPermanent(err) {
			t.Errorf("Watch(%s) error = %v, want a permanent ErrPushAddressUnverified", cal, err)
		}
		for _, want := range []string{"bot.example.com", "Search Console", "Domain verification", "a domain you own", "CALENDAR_RESYNC_INTERVAL"} {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("Watch(%s) error = %v, want it to say %q", cal, err, want)
			}
		}
		if n := srv.RequestsTo(calendartest.MethodWatch) - before; n != 1 {
			t.Errorf("events.watch calls of Watch(%s) refused for its address = %d, want 1", cal, n)
		}
	}
	if len(acc.refused) != 0 {
		t.Errorf("connections stopped by a refused address = %v, want none", acc.refused)
	}
}
