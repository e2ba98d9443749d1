package calendartest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot/internal/clock"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"
	"google.golang.org/api/calendar/v3"
)

// post sends body as JSON to path under the API, authorized as the
// server's service account, and returns the status and the answer.
func post(t *testing.T, s *Server, path string, body any) (int, []byte) {
	t.Helper()
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, s.Client())
	creds, err := google.CredentialsFromJSONWithTypeAndParams(ctx, s.ServiceAccountJSON(), google.ServiceAccount,
		google.CredentialsParams{Scopes: []string{calendar.CalendarReadonlyScope}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(body)
	resp, err := oauth2.NewClient(ctx, creds.TokenSource).Post(s.Endpoint()+path, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

func watch(t *testing.T, s *Server, calendarID string, ch calendar.Channel) (int, calendar.Channel, errorBody) {
	t.Helper()
	code, b := post(t, s, "calendars/"+url.PathEscape(calendarID)+"/events/watch", ch)
	var got calendar.Channel
	var eb errorBody
	if code == http.StatusOK {
		json.Unmarshal(b, &got)
	} else {
		json.Unmarshal(b, &eb)
	}
	return code, got, eb
}

// receiver is an HTTPS endpoint that keeps the notifications it gets.
type receiver struct {
	srv *httptest.Server
	got chan http.Header
}

func newReceiver(t *testing.T, s *Server) *receiver {
	t.Helper()
	r := &receiver{got: make(chan http.Header, 100)}
	r.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		if req.Method != http.MethodPost || req.URL.Path != "/google/notify" || len(body) != 0 {
			t.Errorf("notification = %s %s with %d bytes, want POST /google/notify with no body", req.Method, req.URL.Path, len(body))
		}
		r.got <- req.Header.Clone()
	}))
	t.Cleanup(r.srv.Close)
	s.SetNotifyClient(r.srv.Client())
	return r
}

func (r *receiver) address() string { return r.srv.URL + "/google/notify" }

// next returns the next notification, failing after 5s.
func (r *receiver) next(t *testing.T) http.Header {
	t.Helper()
	select {
	case h := <-r.got:
		return h
	case <-time.After(5 * time.Second):
		t.Fatal("no notification within 5s")
		return nil
	}
}

// none checks that no notification arrived once the server sent all it
// queued.
func (r *receiver) none(t *testing.T, s *Server) {
	t.Helper()
	s.FlushNotifications()
	select {
	case h := <-r.got:
		t.Errorf("unexpected notification %v", h)
	default:
	}
}

func TestWatchNotifiesEveryChange(t *testing.T) {
	s := NewServer()
	defer s.Close()
	const cal = "a@example.com"
	s.AddCalendar(cal)
	rcv := newReceiver(t, s)
	before := time.Now()
	code, ch, eb := watch(t, s, cal, calendar.Channel{
		Id: "chan-1", Type: "web_hook", Address: rcv.address(), Token: "secret-1", Params: map[string]string{"ttl": "3600"},
	})
	if code != http.StatusOK {
		t.Fatalf("watch = %d %+v, want 200", code, eb)
	}
	exp := time.UnixMilli(ch.Expiration)
	if ch.Kind != "api#channel" || ch.Id != "chan-1" || ch.ResourceId == "" || ch.ResourceUri == "" ||
		exp.Before(before.Add(time.Hour-time.Second)) || exp.After(time.Now().Add(time.Hour)) {
		t.Errorf("watch = %+v, want chan-1 with a resource ID and URI, expiring in 1h", ch)
	}

	want := func(h http.Header, state string, number int) {
		t.Helper()
		for k, v := range map[string]string{
			"X-Goog-Channel-ID":         "chan-1",
			"X-Goog-Channel-Token":      "secret-1",
			"X-Goog-Channel-Expiration": exp.UTC().Format(http.TimeFormat),
			"X-Goog-Resource-ID":        ch.ResourceId,
			"X-Goog-Resource-URI":       ch.ResourceUri,
			"X-Goog-Resource-State":     state,
			"X-Goog-Message-Number":     strconv.Itoa(number),
		} {
			if got := h.Get(k); got != v {
				t.Errorf("%s notification %s = %q, want %q", state, k, got, v)
			}
		}
	}
	want(rcv.next(t), "sync", 1)
	if err := s.Put(cal, NewEvent("a", "a", syncDay, syncDay.Add(time.Hour))); err != nil {
		t.Fatal(err)
	}
	want(rcv.next(t), "exists", 2)
	if err := s.Delete(cal, "a"); err != nil {
		t.Fatal(err)
	}
	want(rcv.next(t), "exists", 3)
	// Another calendar's change is not this channel's.
	if err := s.Put("b@example.com", NewEvent("b", "b", syncDay, syncDay.Add(time.Hour))); err != nil {
		t.Fatal(err)
	}
	rcv.none(t, s)

	if got := s.Channels(); len(got) != 1 || got[0].ID != "chan-1" || got[0].CalendarID != cal {
		t.Errorf("Channels() = %+v, want chan-1 on %s", got, cal)
	}
	if code, b := post(t, s, "channels/stop", calendar.Channel{Id: "chan-1", ResourceId: "someone else's"}); code != http.StatusNotFound {
		t.Errorf("stop(wrong resourceId) = %d %s, want 404", code, b)
	}
	if code, b := post(t, s, "channels/stop", calendar.Channel{Id: "chan-1", ResourceId: ch.ResourceId}); code != http.StatusNoContent {
		t.Fatalf("stop = %d %s, want 204", code, b)
	}
	if err := s.Put(cal, NewEvent("a", "a", syncDay, syncDay.Add(time.Hour))); err != nil {
		t.Fatal(err)
	}
	rcv.none(t, s)
	if got := s.Channels(); len(got) != 0 {
		t.Errorf("Channels() after stop = %+v, want none", got)
	}
	if code, _ := post(t, s, "channels/stop", calendar.Channel{Id: "chan-1", ResourceId: ch.ResourceId}); code != http.StatusNotFound {
		t.Errorf("second stop = %d, want 404", code)
	}
	if n := s.RequestsTo(MethodWatch); n != 1 {
		t.Errorf("RequestsTo(%s) = %d, want 1", MethodWatch, n)
	}
	if n := s.RequestsTo(MethodStop); n != 3 {
		t.Errorf("RequestsTo(%s) = %d, want 3", MethodStop, n)
	}
}

func TestWatchRefuses(t *testing.T) {
	s := NewServer()
	defer s.Close()
	const cal = "a@example.com"
	s.AddCalendar(cal)
	s.Share("private@example.com", "someone@example.com")
	ok := calendar.Channel{Id: "taken", Type: "web_hook", Address: "https://bot.example/google/notify", Token: "t"}
	if code, _, eb := watch(t, s, cal, ok); code != http.StatusOK {
		t.Fatalf("watch = %d %+v", code, eb)
	}
	tests := []struct {
		name     string
		calendar string
		edit     func(*calendar.Channel)
		code     int
		reason   string
	}{
		{"http address", cal, func(c *calendar.Channel) { c.Address = "http://bot.example/google/notify" }, 400, "push.webhookUrlNotHttps"},
		{"id taken", cal, func(c *calendar.Channel) { c.Id = "taken" }, 400, "channelIdNotUnique"},
		{"no id", cal, func(c *calendar.Channel) { c.Id = "" }, 400, "required"},
		{"long id", cal, func(c *calendar.Channel) { c.Id = string(bytes.Repeat([]byte("x"), 65)) }, 400, "invalid"},
		{"long token", cal, func(c *calendar.Channel) { c.Token = string(bytes.Repeat([]byte("x"), 257)) }, 400, "invalid"},
		{"other type", cal, func(c *calendar.Channel) { c.Type = "email" }, 400, "push.channelTypeNotSupported"},
		{"bad ttl", cal, func(c *calendar.Channel) { c.Params = map[string]string{"ttl": "soon"} }, 400, "invalid"},
		{"calendar not shared", "private@example.com", nil, 404, "notFound"},
		{"unknown calendar", "nobody@example.com", nil, 404, "notFound"},
	}
	for _, tt := range tests {
		ch := ok
		ch.Id = "new"
		if tt.edit != nil {
			tt.edit(&ch)
		}
		code, _, eb := watch(t, s, tt.calendar, ch)
		if code != tt.code || len(eb.Error.Errors) == 0 || eb.Error.Errors[0].Reason != tt.reason {
			t.Errorf("watch(%s) = %d %+v, want %d %s", tt.name, code, eb, tt.code, tt.reason)
		}
	}
	if got := s.Channels(); len(got) != 1 {
		t.Errorf("Channels() = %+v, want only the first", got)
	}
}

func TestChannelExpires(t *testing.T) {
	tests := []struct {
		name string
		ch   calendar.Channel
	}{
		{"ttl", calendar.Channel{Params: map[string]string{"ttl": "60"}}},
		{"expiration", calendar.Channel{Expiration: syncDay.Add(time.Minute).UnixMilli()}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewServer()
			defer s.Close()
			const cal = "a@example.com"
			s.AddCalendar(cal)
			fake := clock.NewFake(syncDay)
			s.SetClock(fake.Now)
			rcv := newReceiver(t, s)
			ch := tt.ch
			ch.Id, ch.Type, ch.Address = "short", "web_hook", rcv.address()
			code, got, eb := watch(t, s, cal, ch)
			if code != http.StatusOK || got.Expiration != syncDay.Add(time.Minute).UnixMilli() {
				t.Fatalf("watch = %d %+v %+v, want 200 expiring at %v", code, got, eb, syncDay.Add(time.Minute))
			}
			rcv.next(t) // sync
			fake.Advance(59 * time.Second)
			if err := s.Put(cal, NewEvent("a", "a", syncDay, syncDay.Add(time.Hour))); err != nil {
				t.Fatal(err)
			}
			if h := rcv.next(t); h.Get("X-Goog-Resource-State") != "exists" {
				t.Errorf("notification before expiry = %v, want exists", h)
			}
			fake.Advance(time.Second)
			if err := s.Put(cal, NewEvent("a", "a", syncDay, syncDay.Add(2*time.Hour))); err != nil {
				t.Fatal(err)
			}
			rcv.none(t, s)
			if got := s.Channels(); len(got) != 0 {
				t.Errorf("Channels() after expiry = %+v, want none", got)
			}
		})
	}
}

func TestDropAndForwardNotifications(t *testing.T) {
	s := NewServer()
	defer s.Close()
	const cal = "a@example.com"
	s.AddCalendar(cal)
	got := make(chan string, 10)
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.URL.Path + " " + r.Header.Get("X-Goog-Resource-State") + " " + r.Header.Get("X-Goog-Message-Number")
	}))
	defer plain.Close()
	s.ForwardNotifications("https://bot.example", plain.URL)
	s.DropNotifications(cal, 1)
	if code, _, eb := watch(t, s, cal, calendar.Channel{Id: "c", Type: "web_hook", Address: "https://bot.example/google/notify"}); code != http.StatusOK {
		t.Fatalf("watch = %d %+v", code, eb)
	}
	if err := s.Put(cal, NewEvent("a", "a", syncDay, syncDay.Add(time.Hour))); err != nil {
		t.Fatal(err)
	}
	s.FlushNotifications()
	close(got)
	var all []string
	for g := range got {
		all = append(all, g)
	}
	if len(all) != 1 || all[0] != "/google/notify exists 2" {
		t.Errorf("notifications received = %q, want only [/google/notify exists 2] (sync dropped)", all)
	}
	d := s.Deliveries()
	if len(d) != 2 || d[0].Err != "dropped" || d[0].State != "sync" || d[1].Status != http.StatusOK || d[1].Address != plain.URL+"/google/notify" {
		t.Errorf("Deliveries() = %+v, want the sync dropped and the exists delivered to %s", d, plain.URL)
	}
}

// With verified domains required, a watch naming any other host is
// refused as Google refuses an unverified one; a verified host and its
// subdomains are not.
func TestWatchRefusesAnUnverifiedDomain(t *testing.T) {
	s := NewServer()
	defer s.Close()
	const cal = "a@example.com"
	s.AddCalendar(cal)
	s.RequireVerifiedDomains("bot.example")
	for i, tt := range []struct {
		address string
		code    int
	}{
		{"https://bot.example/google/notify", 200},
		{"https://eu.bot.example/google/notify", 200},
		{"https://notbot.example/google/notify", 401},
		{"https://bot.example.evil/google/notify", 401},
	} {
		code, _, eb := watch(t, s, cal, calendar.Channel{Id: fmt.Sprintf("c%d", i), Type: "web_hook", Address: tt.address, Token: "t"})
		if code != tt.code {
			t.Errorf("watch(%s) = %d %+v, want %d", tt.address, code, eb, tt.code)
		}
		if tt.code == 401 && (len(eb.Error.Errors) == 0 || eb.Error.Errors[0].Reason != "push.webhookUrlUnauthorized" ||
			eb.Error.Message != "Unauthorized WebHook callback channel: "+tt.address) {
			t.Errorf("watch(%s) error = %+v, want push.webhookUrlUnauthorized, Unauthorized WebHook callback channel", tt.address, eb)
		}
	}
}
