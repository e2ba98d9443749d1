package e2e

import (
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot/calendar/calendartest"
)

// End to end with Calendar push notifications. Google posts notifications
// to PUBLIC_URL, an https URL; in production a TLS-terminating proxy (the
// platform's edge, e.g. fly.io's) forwards them to the bot's plain
// HTTP_ADDR. Here the emulator plays both: it posts each notification for
// https://bot.example.test/... to the same path on the bot's loopback
// address (calendartest's ForwardNotifications), so the bot's real
// listener, verification and sync are exercised, and only TLS is left out.

const publicURL = "https://bot.example.test"

// freeAddr returns a loopback address with a port free a moment ago: the
// emulator must know where to forward before the bot's first watch.
func freeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// metric returns the value of one series in the bot's /metrics, or -1.
func metric(t *testing.T, addr, series string) float64 {
	t.Helper()
	_, body := httpGet("http://" + addr + "/metrics")
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`).FindStringSubmatch(body)
	if m == nil {
		return -1
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	return v
}

// With push on and the safety resync at 5 minutes, a meeting created 30
// seconds before its trigger is planned from the notification and
// reminded at its trigger: no sweep would have seen it in time, since the
// sweeps read the mirror, which is synced every 5 minutes otherwise.
func TestPushedMeetingRemindedOnTime(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	addr := freeAddr(t)
	w.cal.ForwardNotifications(publicURL, "http://"+addr)
	env := w.env("PUBLIC_URL="+publicURL, "CALENDAR_RESYNC_INTERVAL=5m", "TICK_INTERVAL=30s", "REMINDER_OFFSETS=40s", "HTTP_ADDR="+addr)
	p := start(t, w.dir, env)
	p.ready()
	eventually(t, 20*time.Second, "a channel open on alice's calendar", func() bool {
		chs := w.cal.Channels()
		return len(chs) == 1 && chs[0].CalendarID == alice && strings.HasPrefix(chs[0].Address, publicURL+"/google/notify")
	})
	eventually(t, 20*time.Second, "the channel's first notification accepted", func() bool {
		return metric(t, addr, `meetingbot_push_notifications_total{outcome="accepted"}`) >= 1
	})
	time.Sleep(2 * time.Second) // past the first round's sweep and the sync notification's
	lists := w.cal.RequestsTo("events.list")

	begins := at(70 * time.Second)
	trigger := begins.Add(-40 * time.Second) // 30s from now
	w.meeting(t, "pushed", "Pushed", begins)
	m := w.waitMessage(t, "Pushed", 45*time.Second)
	if late := m.Posted.Sub(trigger); late < 0 || late > time.Second {
		t.Errorf("reminder posted %v after its trigger, want within 1s", late)
	}
	if got := w.cal.RequestsTo("events.list") - lists; got > 2 {
		t.Errorf("events.list calls from the change to the reminder = %d, want at most 2 (the pushed sync; the fire-time check reads events.get)", got)
	}
	for _, d := range w.cal.Deliveries() {
		if d.Status != http.StatusOK {
			t.Errorf("notification %d of channel %s answered %d (%s), want 200", d.MessageNumber, d.ChannelID, d.Status, d.Err)
		}
	}
}

// A notification with a forged token is refused with 403 and changes
// nothing; the channel the bot opened is stopped when its calendar leaves
// CALENDARS, at the next start.
func TestForgedNotificationAndStopOnRemoval(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	addr := freeAddr(t)
	w.cal.ForwardNotifications(publicURL, "http://"+addr)
	env := w.env("PUBLIC_URL="+publicURL, "HTTP_ADDR="+addr, "TICK_INTERVAL=30s", "REMINDER_OFFSETS=40s")
	p := start(t, w.dir, env)
	p.ready()
	eventually(t, 20*time.Second, "a channel open", func() bool { return len(w.cal.Channels()) == 1 })
	ch := w.cal.Channels()[0]
	time.Sleep(time.Second)
	lists := w.cal.RequestsTo("events.list")
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/google/notify", nil)
	req.Header = http.Header{
		"X-Goog-Channel-Id": {ch.ID}, "X-Goog-Channel-Token": {"forged"}, "X-Goog-Resource-Id": {ch.ResourceID},
		"X-Goog-Resource-State": {"exists"}, "X-Goog-Message-Number": {"9"},
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("forged notification answered %d, want 403", resp.StatusCode)
	}
	time.Sleep(time.Second)
	if got := w.cal.RequestsTo("events.list"); got != lists {
		t.Errorf("events.list calls after a forged notification = %d, want %d", got, lists)
	}

	// Restarted with the same calendars, the bot reuses the channel; with
	// alice gone from CALENDARS, it stops it.
	p.signal(syscall.SIGTERM)
	p.wait(15 * time.Second)
	watches := w.cal.RequestsTo(calendartest.MethodWatch)
	p = start(t, w.dir, env)
	p.ready()
	time.Sleep(2 * time.Second)
	if got := w.cal.RequestsTo(calendartest.MethodWatch); got != watches {
		t.Errorf("events.watch calls after a restart = %d, want %d: the live channel is reused", got, watches)
	}
	p.signal(syscall.SIGTERM)
	p.wait(15 * time.Second)
	p = start(t, w.dir, w.env("PUBLIC_URL="+publicURL, "HTTP_ADDR="+addr, "TICK_INTERVAL=30s", "REMINDER_OFFSETS=40s", "CALENDARS="+teamID))
	p.ready()
	eventually(t, 20*time.Second, "alice's channel stopped", func() bool {
		chs := w.cal.Channels()
		return len(chs) == 1 && chs[0].CalendarID == team
	})
}
