package calendartest

import (
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/api/calendar/v3"

	"github.com/meetingbot/meetingbot/internal/inprocess"
)

// A server from NewInProcess answers its Client, token endpoint included,
// without a socket, at URLs under InProcessURL.
func TestInProcessAnswersItsClient(t *testing.T) {
	s := NewInProcess()
	defer s.Close()
	if !strings.HasPrefix(s.Endpoint(), InProcessURL+"/") || !strings.HasPrefix(s.TokenURL(), InProcessURL+"/") {
		t.Errorf("Endpoint() = %s, TokenURL() = %s, want both under %s", s.Endpoint(), s.TokenURL(), InProcessURL)
	}
	const cal = "a@example.com"
	if err := s.Put(cal, NewEvent("a", "Standup", syncDay, syncDay.Add(time.Hour))); err != nil {
		t.Fatal(err)
	}
	code, page, eb := get(t, s, cal, url.Values{})
	if code != http.StatusOK || len(page.Items) != 1 || page.Items[0].Summary != "Standup" {
		t.Errorf("events.list = %d %+v %+v, want 200 with Standup", code, page.Items, eb)
	}
	if n := s.TokenRequests(); n != 1 {
		t.Errorf("TokenRequests() = %d, want 1", n)
	}
}

// During an outage every Calendar API request is answered 503
// backendError, and counted; the token endpoint keeps answering; before
// and after it the API answers.
func TestOutageAnswers503(t *testing.T) {
	s := NewServer()
	defer s.Close()
	const cal = "a@example.com"
	s.AddCalendar(cal)
	var mu sync.Mutex
	now := syncDay.Add(9 * time.Hour)
	s.SetClock(func() time.Time { mu.Lock(); defer mu.Unlock(); return now })
	at := func(d time.Duration) { mu.Lock(); now = syncDay.Add(9*time.Hour + d); mu.Unlock() }
	s.SetOutage(syncDay.Add(9*time.Hour+time.Minute), syncDay.Add(9*time.Hour+11*time.Minute))
	for _, tt := range []struct {
		at   time.Duration
		code int
	}{
		{0, http.StatusOK},
		{time.Minute, http.StatusServiceUnavailable},
		{10*time.Minute + 59*time.Second, http.StatusServiceUnavailable},
		{11 * time.Minute, http.StatusOK},
	} {
		at(tt.at)
		code, _, eb := get(t, s, cal, url.Values{})
		if code != tt.code {
			t.Errorf("events.list at 9:00 + %v = %d, want %d", tt.at, code, tt.code)
		}
		if code == http.StatusServiceUnavailable && (eb.Error.Code != 503 || len(eb.Error.Errors) != 1 || eb.Error.Errors[0].Reason != "backendError") {
			t.Errorf("events.list at 9:00 + %v error = %+v, want 503 backendError", tt.at, eb)
		}
	}
	if n := s.RequestsTo(MethodList); n != 4 {
		t.Errorf("RequestsTo(events.list) = %d, want 4, those of the outage too", n)
	}
}

// LoseNotifications loses about its share of the notifications, the same
// ones for the same seed, calendar and changes; Deliveries says when each
// was made and answered.
func TestLoseNotifications(t *testing.T) {
	const cal, changes = "a@example.com", 400
	lostNumbers := func(seed uint64) ([]int64, []Delivery) {
		s := NewServer()
		defer s.Close()
		s.AddCalendar(cal)
		newReceiverCounting(t, s)
		s.LoseNotifications(0.25, seed)
		if code, _, eb := watch(t, s, cal, calendar.Channel{Id: "c", Type: "web_hook", Address: "https://bot.example/google/notify"}); code != http.StatusOK {
			t.Fatalf("watch = %d %+v", code, eb)
		}
		for i := range changes {
			if err := s.Put(cal, NewEvent(fmt.Sprint("e", i), "e", syncDay, syncDay.Add(time.Hour))); err != nil {
				t.Fatal(err)
			}
		}
		s.FlushNotifications()
		var lost []int64
		ds := s.Deliveries()
		for _, d := range ds {
			if d.Err == "dropped" {
				lost = append(lost, d.MessageNumber)
			}
		}
		return lost, ds
	}
	a, ds := lostNumbers(7)
	b, _ := lostNumbers(7)
	c, _ := lostNumbers(8)
	if share := float64(len(a)) / (changes + 1); math.Abs(share-0.25) > 0.07 {
		t.Errorf("lost %d of %d notifications (%.2f), want about 0.25", len(a), changes+1, share)
	}
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Errorf("seed 7 lost %v, then %v: want the same", a, b)
	}
	if fmt.Sprint(a) == fmt.Sprint(c) {
		t.Errorf("seeds 7 and 8 both lost %v, want others", a)
	}
	for _, d := range ds {
		if d.Queued.IsZero() || d.At.Before(d.Queued) || (d.Err == "" && d.Status != http.StatusOK) {
			t.Fatalf("delivery %+v: want it made, then answered 200 or dropped", d)
		}
	}
}

// newReceiverCounting answers every notification 200, wherever the watch
// said to send it.
func newReceiverCounting(t *testing.T, s *Server) {
	t.Helper()
	s.SetNotifyClient(&http.Client{Transport: inprocess.Transport{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})}})
}
