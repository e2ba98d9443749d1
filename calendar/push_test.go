package calendar_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/oauth2"
	gcal "google.golang.org/api/calendar/v3"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/calendar"
	"github.com/meetingbot/meetingbot/calendar/calendartest"
)

// notifyReceiver is the bot's side of push, as a test needs it: an HTTPS
// endpoint that looks up the channel a notification names among those
// watched, verifies it, and passes on the calendars to sync. Refused
// notifications are answered 403 and counted.
type notifyReceiver struct {
	srv *httptest.Server

	mu       sync.Mutex
	channels map[string]calendar.Channel
	refused  []calendar.Refusal
	headers  []http.Header
	sync     chan calendar.Notification
}

func newNotifyReceiver(t *testing.T, cal *calendartest.Server) *notifyReceiver {
	t.Helper()
	r := &notifyReceiver{channels: map[string]calendar.Channel{}, sync: make(chan calendar.Notification, 100)}
	r.srv = httptest.NewTLSServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	cal.SetNotifyClient(r.srv.Client())
	return r
}

func (r *notifyReceiver) serve(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	r.headers = append(r.headers, req.Header.Clone())
	ch := r.channels[calendar.NotificationChannelID(req.Header)]
	r.mu.Unlock()
	n, err := calendar.VerifyNotification(req.Header, ch)
	var nerr *calendar.NotificationError
	if errors.As(err, &nerr) {
		r.mu.Lock()
		r.refused = append(r.refused, nerr.Reason)
		r.mu.Unlock()
		w.WriteHeader(http.StatusForbidden)
		return
	}
	r.sync <- n
}

func (r *notifyReceiver) add(ch calendar.Channel) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.channels[ch.ID] = ch
}

func (r *notifyReceiver) address() string { return r.srv.URL + "/google/notify" }

// next returns the next verified notification, failing after 5s.
func (r *notifyReceiver) next(t *testing.T) calendar.Notification {
	t.Helper()
	select {
	case n := <-r.sync:
		return n
	case <-time.After(5 * time.Second):
		t.Fatal("no verified notification within 5s")
		return calendar.Notification{}
	}
}

// none checks that nothing was verified once the emulator sent all it
// queued.
func (r *notifyReceiver) none(t *testing.T, cal *calendartest.Server) {
	t.Helper()
	cal.FlushNotifications()
	select {
	case n := <-r.sync:
		t.Errorf("unexpected notification %+v", n)
	default:
	}
}

// TestWatchNotifiesAChange opens a channel, receives the sync
// notification and, after a meeting is created, one that leads to the
// incremental sync reporting it.
func TestWatchNotifiesAChange(t *testing.T) {
	srv := newServer(t)
	srv.AddCalendar(alice)
	src, rec := newSource(t, srv, nil)
	rcv := newNotifyReceiver(t, srv)
	m := &fakeMirror{t: t, src: src, cal: alice, w: syncWindow(8)}
	m.sync()

	before := time.Now()
	// The channel is known before the watch: its first notification may
	// come before Watch returns, as Google's may.
	rcv.add(calendar.Channel{ID: "chan-1", CalendarID: alice, Token: "s3cret-token"})
	ch, err := src.Watch(context.Background(), alice, "chan-1", "s3cret-token", rcv.address(), time.Hour)
	if err != nil {
		t.Fatalf("Watch() error = %v", err)
	}
	rcv.add(ch)
	if ch.ID != "chan-1" || ch.CalendarID != alice || ch.Token != "s3cret-token" || ch.ResourceID == "" || ch.ResourceURI == "" ||
		ch.Expiration.Before(before.Add(time.Hour-time.Second)) || ch.Expiration.After(time.Now().Add(time.Hour)) {
		t.Errorf("Watch() = %+v, want chan-1 on %s with a resource ID, expiring in 1h", ch, alice)
	}
	if live := srv.Channels(); len(live) != 1 || live[0].ID != "chan-1" || live[0].Address != rcv.address() {
		t.Errorf("emulator channels = %+v, want chan-1 to %s", live, rcv.address())
	}
	if got := rcv.next(t); got.State != calendar.StateSync || got.MessageNumber != 1 || got.CalendarID != alice {
		t.Errorf("first notification = %+v, want sync, number 1, for %s", got, alice)
	}

	put(t, srv, alice, "standup", syncStart.Add(time.Hour), 15*time.Minute)
	n := rcv.next(t)
	if n.State != calendar.StateExists || n.CalendarID != alice || n.ChannelID != "chan-1" || n.MessageNumber <= 1 {
		t.Fatalf("notification after a change = %+v, want exists for %s on chan-1, number > 1", n, alice)
	}
	res := m.sync()
	if got := changes(res); !slices.Equal(got, []string{"standup Meeting standup 09:00"}) {
		t.Errorf("sync after the notification = %q, want the new meeting", got)
	}
	if got := rec.observed(); !slices.Contains(got, "events.watch:ok") {
		t.Errorf("Observe = %q, want events.watch:ok", got)
	}
	if len(rcv.refused) != 0 {
		t.Errorf("refused genuine notifications: %v", rcv.refused)
	}
}

// TestVerifyNotificationRefusesForgeries replays a genuine notification
// with one header changed: each is refused, and says why.
func TestVerifyNotificationRefusesForgeries(t *testing.T) {
	srv := newServer(t)
	srv.AddCalendar(alice)
	src, _ := newSource(t, srv, nil)
	rcv := newNotifyReceiver(t, srv)
	// The channel is known before the watch: its first notification may
	// come before Watch returns, as Google's may.
	rcv.add(calendar.Channel{ID: "chan-1", CalendarID: alice, Token: "s3cret-token"})
	ch, err := src.Watch(context.Background(), alice, "chan-1", "s3cret-token", rcv.address(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	rcv.add(ch)
	rcv.next(t)
	genuine := rcv.headers[0]
	if n, err := calendar.VerifyNotification(genuine, ch); err != nil || n.CalendarID != alice {
		t.Fatalf("VerifyNotification(genuine) = %+v, %v; want %s", n, err, alice)
	}

	tests := []struct {
		name    string
		edit    func(h http.Header)
		channel func(c *calendar.Channel)
		want    calendar.Refusal
	}{
		{"forged channel ID", func(h http.Header) { h.Set("X-Goog-Channel-ID", "chan-2") }, nil, calendar.RefusedChannel},
		{"no channel ID", func(h http.Header) { h.Del("X-Goog-Channel-ID") }, nil, calendar.RefusedChannel},
		{"unknown channel", nil, func(c *calendar.Channel) { *c = calendar.Channel{} }, calendar.RefusedChannel},
		{"forged token", func(h http.Header) { h.Set("X-Goog-Channel-Token", "s3cret-tokem") }, nil, calendar.RefusedToken},
		{"token prefix", func(h http.Header) { h.Set("X-Goog-Channel-Token", "s3cret") }, nil, calendar.RefusedToken},
		{"no token", func(h http.Header) { h.Del("X-Goog-Channel-Token") }, nil, calendar.RefusedToken},
		{"two tokens", func(h http.Header) { h.Add("X-Goog-Channel-Token", "other") }, nil, calendar.RefusedToken},
		{"channel without token", nil, func(c *calendar.Channel) { c.Token = "" }, calendar.RefusedToken},
		{"other resource", func(h http.Header) { h.Set("X-Goog-Resource-ID", "elsewhere") }, nil, calendar.RefusedResource},
		{"unknown state", func(h http.Header) { h.Set("X-Goog-Resource-State", "deleted") }, nil, calendar.RefusedState},
		{"state in capitals", func(h http.Header) { h.Set("X-Goog-Resource-State", "EXISTS") }, nil, calendar.RefusedState},
		{"no state", func(h http.Header) { h.Del("X-Goog-Resource-State") }, nil, calendar.RefusedState},
		{"no message number", func(h http.Header) { h.Del("X-Goog-Message-Number") }, nil, calendar.RefusedMessageNumber},
		{"message number 0", func(h http.Header) { h.Set("X-Goog-Message-Number", "0") }, nil, calendar.RefusedMessageNumber},
	}
	for _, tt := range tests {
		h, c := genuine.Clone(), ch
		if tt.edit != nil {
			tt.edit(h)
		}
		if tt.channel != nil {
			tt.channel(&c)
		}
		n, err := calendar.VerifyNotification(h, c)
		var nerr *calendar.NotificationError
		if !errors.As(err, &nerr) || nerr.Reason != tt.want || n != (calendar.Notification{}) {
			t.Errorf("VerifyNotification(%s) = %+v, %v; want refused: %s", tt.name, n, err, tt.want)
		}
		if err != nil && strings.Contains(err.Error(), "s3cret") {
			t.Errorf("VerifyNotification(%s) error %q quotes the token", tt.name, err)
		}
	}
	for _, state := range []string{"sync", "exists", "not_exists"} {
		h := genuine.Clone()
		h.Set("X-Goog-Resource-State", state)
		if n, err := calendar.VerifyNotification(h, ch); err != nil || string(n.State) != state {
			t.Errorf("VerifyNotification(state %s) = %+v, %v; want accepted", state, n, err)
		}
	}
}

// TestStopChannelEndsNotifications stops a channel, with and without
// impersonation (where only the user who watched may stop): no
// notification follows a change, and stopping again is not an error.
func TestStopChannelEndsNotifications(t *testing.T) {
	for _, impersonate := range []bool{false, true} {
		t.Run(map[bool]string{false: "shared", true: "impersonated"}[impersonate], func(t *testing.T) {
			srv := newServer(t)
			srv.AddCalendar(alice)
			src, rec := newSource(t, srv, func(c *calendar.Config) { c.Impersonate = impersonate })
			rcv := newNotifyReceiver(t, srv)
			// The channel is known before the watch: its first notification may
			// come before Watch returns, as Google's may.
			rcv.add(calendar.Channel{ID: "chan-1", CalendarID: alice, Token: "s3cret-token"})
			ch, err := src.Watch(context.Background(), alice, "chan-1", "s3cret-token", rcv.address(), 0)
			if err != nil {
				t.Fatal(err)
			}
			rcv.add(ch)
			rcv.next(t)
			if want := time.Now().Add(calendartest.DefaultChannelTTL); ch.Expiration.After(want) || ch.Expiration.Before(want.Add(-time.Minute)) {
				t.Errorf("Watch(ttl 0) expiration = %v, want Google's default, a week ahead", ch.Expiration)
			}

			if err := src.StopChannel(context.Background(), ch); err != nil {
				t.Fatalf("StopChannel() error = %v", err)
			}
			put(t, srv, alice, "standup", syncStart.Add(time.Hour), 15*time.Minute)
			rcv.none(t, srv)
			if live := srv.Channels(); len(live) != 0 {
				t.Errorf("emulator channels after StopChannel = %+v, want none", live)
			}
			if err := src.StopChannel(context.Background(), ch); err != nil {
				t.Errorf("second StopChannel() error = %v, want nil", err)
			}
			if n := srv.RequestsTo(calendartest.MethodStop); n != 2 {
				t.Errorf("channels.stop requests = %d, want 2", n)
			}
			if got := rec.observed(); !slices.Contains(got, "channels.stop:ok") {
				t.Errorf("Observe = %q, want channels.stop:ok", got)
			}
		})
	}
}

func TestWatchRefuses(t *testing.T) {
	srv := newServer(t)
	srv.AddCalendar(alice)
	srv.Share("bob@example.com", "someone@example.com")
	src, _ := newSource(t, srv, nil)
	ctx := context.Background()
	const address = "https://bot.example.com/google/notify"
	tests := []struct {
		name                      string
		calendar, id, token, addr string
		ttl                       time.Duration
		request                   bool // whether it reaches Google
	}{
		{"http address", alice, "c1", "t", "http://bot.example.com/google/notify", 0, false},
		{"no address", alice, "c1", "t", "", 0, false},
		{"no channel ID", alice, "", "t", address, 0, false},
		{"long channel ID", alice, strings.Repeat("c", 65), "t", address, 0, false},
		{"no token", alice, "c1", "", address, 0, false},
		{"long token", alice, "c1", strings.Repeat("t", 257), address, 0, false},
		{"negative ttl", alice, "c1", "t", address, -time.Second, false},
		{"calendar not shared", "bob@example.com", "c1", "t", address, 0, true},
	}
	for _, tt := range tests {
		before := srv.RequestsTo(calendartest.MethodWatch)
		_, err := src.Watch(ctx, tt.calendar, tt.id, tt.token, tt.addr, tt.ttl)
		if !meetingbot.IsPermanent(err) {
			t.Errorf("Watch(%s) error = %v, want a permanent error", tt.name, err)
		}
		if sent := srv.RequestsTo(calendartest.MethodWatch) > before; sent != tt.request {
			t.Errorf("Watch(%s) sent a request: %v, want %v", tt.name, sent, tt.request)
		}
	}

	if _, err := src.Watch(ctx, alice, "taken", "t", address, time.Hour); err != nil {
		t.Fatal(err)
	}
	_, err := src.Watch(ctx, alice, "taken", "t", address, time.Hour)
	if !errors.Is(err, meetingbot.ErrChannelIDTaken) || meetingbot.IsPermanent(err) {
		t.Errorf("Watch(ID taken) error = %v, want ErrChannelIDTaken", err)
	}
}

func TestWatchAddressRefusedByGoogle(t *testing.T) {
	// Reported for an address Google would not post to, as a 401 and,
	// once, as a 403: either is about the address, so the client renews
	// no token for it.
	for _, status := range []int{http.StatusUnauthorized, http.StatusForbidden} {
		srv := newServer(t)
		srv.AddCalendar(alice)
		srv.QueueWatchFaults(alice, calendartest.Fault{
			Status: status, Domain: "global", Reason: "push.webhookUrlUnauthorized", Message: "Unauthorized WebHook callback channel: https://bot.example.com/google/notify",
		})
		src, _ := newSource(t, srv, nil)
		_, err := src.Watch(context.Background(), alice, "c1", "t", "https://bot.example.com/google/notify", time.Hour)
		if !meetingbot.IsPermanent(err) || !errors.Is(err, meetingbot.ErrPushAddressUnverified) || !strings.Contains(err.Error(), "PUBLIC_URL") {
			t.Errorf("Watch(address refused with %d) error = %v, want a permanent ErrPushAddressUnverified naming PUBLIC_URL", status, err)
		}
		if n := srv.RequestsTo(calendartest.MethodWatch); n != 1 {
			t.Errorf("events.watch calls refused with %d = %d, want 1", status, n)
		}
	}
}

func TestChannelLogValueHidesToken(t *testing.T) {
	ch := calendar.Channel{ID: "chan-1", CalendarID: alice, Token: "s3cret-token", ResourceID: "r1"}
	if got := ch.LogValue().String(); strings.Contains(got, "s3cret") || !strings.Contains(got, "chan-1") {
		t.Errorf("Channel.LogValue() = %s, want the channel ID and no token", got)
	}
}

// A channel is stopped by the identity that opened it. The service
// account watches Alice's calendar; then she connects her own account.
// Stopping the channel as her would be answered 404 "Channel … not found
// for project" (googleapis/google-api-nodejs-client#627), taken for a
// channel gone already, and the channel would post on until it expires.
// Her own reading's channel is hers to stop.
func TestChannelIsStoppedByWhoOpenedIt(t *testing.T) {
	srv := newServer(t)
	srv.AddCalendar(alice)
	srv.Share(alice, srv.ServiceAccountEmail())
	acc := &fakeAccounts{sources: map[string]oauth2.TokenSource{}}
	src, _ := newSource(t, srv, func(c *calendar.Config) { c.Accounts = acc })
	rcv := newNotifyReceiver(t, srv)
	ctx := t.Context()

	bots, err := src.Watch(ctx, alice, "chan-bot", "s3cret-token", rcv.address(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if bots.Opener != "" {
		t.Errorf("Opener of the service account's channel = %q, want \"\"", bots.Opener)
	}
	acc.mu.Lock()
	acc.sources[alice] = oauth2.StaticTokenSource(srv.Grant(alice, gcal.CalendarEventsReadonlyScope))
	acc.mu.Unlock()
	hers, err := src.Watch(ctx, asOwner(alice), "chan-hers", "s3cret-token", rcv.address(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if hers.Opener != asOwner(alice) || hers.CalendarID != asOwner(alice) {
		t.Errorf("her channel = %+v, want it opened and read as her", hers)
	}

	for _, ch := range []calendar.Channel{bots, hers} {
		if err := src.StopChannel(ctx, ch); err != nil {
			t.Fatalf("StopChannel(%s) = %v", ch.ID, err)
		}
	}
	if live := srv.Channels(); len(live) != 0 {
		t.Errorf("channels live after stopping both = %+v, want none", live)
	}
}
