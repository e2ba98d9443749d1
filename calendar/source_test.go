package calendar_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/calendar"
	"github.com/meetingbot/meetingbot/calendar/calendartest"
	"github.com/meetingbot/meetingbot/internal/retry"
)

const alice = "alice@example.com"

// recorder keeps what a Source reports through Observe and Sleep.
type recorder struct {
	mu      sync.Mutex
	classes []string
	sleeps  []time.Duration
}

func (r *recorder) observe(call string, class retry.Class) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.classes = append(r.classes, call+":"+string(class))
}

func (r *recorder) sleep(ctx context.Context, d time.Duration) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sleeps = append(r.sleeps, d)
	return ctx.Err()
}

func (r *recorder) observed() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.classes)
}

// newServer starts an emulator, closed with the test.
func newServer(t *testing.T) *calendartest.Server {
	t.Helper()
	srv := calendartest.NewServer()
	t.Cleanup(srv.Close)
	return srv
}

// newSource returns a Source reading srv with its service-account key,
// from a file as GOOGLE_APPLICATION_CREDENTIALS names it.
func newSource(t *testing.T, srv *calendartest.Server, edit func(*calendar.Config)) (*calendar.Source, *recorder) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "key.json")
	if err := os.WriteFile(path, srv.ServiceAccountJSON(), 0o600); err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	cfg := calendar.Config{
		CredentialsFile: path,
		Endpoint:        srv.Endpoint(),
		HTTPClient:      srv.Client(),
		Observe:         rec.observe,
		Sleep:           rec.sleep,
	}
	if edit != nil {
		edit(&cfg)
	}
	src, err := calendar.New(context.Background(), cfg)
	if err != nil {
		t.Fatalf("New() error = %v", err)
	}
	return src, rec
}

func sub(calendarID string) meetingbot.Subscription {
	return meetingbot.Subscription{ID: calendarID, CalendarID: calendarID, Offsets: []time.Duration{10 * time.Minute}}
}

// mine is sub of calendarID as its owner set it up, read with their own
// connected account when fakeAccounts has one.
func mine(calendarID string) meetingbot.Subscription {
	s := sub(calendarID)
	s.Reader = owner(calendarID)
	return s
}

func put(t *testing.T, srv *calendartest.Server, calendarID, id string, start time.Time, d time.Duration) {
	t.Helper()
	if err := srv.Put(calendarID, calendartest.NewEvent(id, "Meeting "+id, start, start.Add(d))); err != nil {
		t.Fatal(err)
	}
}

func ids(ms []meetingbot.Meeting) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.ID)
	}
	return out
}

func TestMeetingsWindowBoundaries(t *testing.T) {
	srv := newServer(t)
	plus1 := time.FixedZone("", 3600)
	from := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	to := from.Add(time.Hour)
	at := func(d time.Duration) time.Time { return from.Add(d).In(plus1) }
	put(t, srv, alice, "ongoing", at(-30*time.Minute), time.Hour)
	put(t, srv, alice, "atfrom", at(0), 30*time.Minute)
	put(t, srv, alice, "zerolength", at(0), 0)
	put(t, srv, alice, "justafter", at(time.Second), 30*time.Minute)
	put(t, srv, alice, "middle", at(30*time.Minute), 0)
	put(t, srv, alice, "atto", at(time.Hour), 30*time.Minute)
	put(t, srv, alice, "justpastto", at(time.Hour+time.Second), 30*time.Minute)
	src, _ := newSource(t, srv, nil)

	tests := []struct {
		from, to time.Time
		want     []string
	}{
		{from, to, []string{"justafter", "middle", "atto"}},
		// Sub-second bounds: the API drops milliseconds, the source must not.
		{from.Add(500 * time.Millisecond), to.Add(500 * time.Millisecond), []string{"justafter", "middle", "atto"}},
		{from.Add(-time.Millisecond), to.Add(-time.Millisecond), []string{"atfrom", "zerolength", "justafter", "middle"}},
		{from, from, nil},
		{to, from, nil},
	}
	for _, tt := range tests {
		got, err := src.Meetings(context.Background(), sub(alice), tt.from, tt.to)
		if err != nil {
			t.Fatalf("Meetings(%v, %v) error = %v", tt.from, tt.to, err)
		}
		if !slices.Equal(ids(got), tt.want) {
			t.Errorf("Meetings(%v, %v) = %v, want %v", tt.from, tt.to, ids(got), tt.want)
		}
	}
}

func TestMeetingsRequest(t *testing.T) {
	srv := newServer(t)
	srv.AddCalendar(alice)
	src, _ := newSource(t, srv, nil)
	from := time.Date(2026, 11, 30, 9, 0, 0, 250e6, time.UTC)
	if _, err := src.Meetings(context.Background(), sub(alice), from, from.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	q := srv.LastQuery(alice)
	want := map[string]string{
		"singleEvents": "true",
		"orderBy":      "startTime",
		"maxResults":   "2500",
		"timeMin":      "2026-11-30T09:00:00Z",
		"timeMax":      "2026-11-30T10:00:01Z",
	}
	for k, v := range want {
		if got := q.Get(k); got != v {
			t.Errorf("query %s = %q, want %q", k, got, v)
		}
	}
	for _, want := range []string{"nextPageToken", "attendees(self,responseStatus,", "defaultReminders(method,minutes)", "reminders(useDefault,overrides(method,minutes))"} {
		if f := q.Get("fields"); !strings.Contains(f, want) {
			t.Errorf("query fields = %q, want a mask with %s", f, want)
		}
	}
}

func TestMeetingsFollowsEveryPage(t *testing.T) {
	srv := newServer(t)
	from := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	var want []string
	for i := range 7 {
		id := "ev" + string(rune('a'+i))
		put(t, srv, alice, id, from.Add(time.Duration(i+1)*time.Hour), 30*time.Minute)
		want = append(want, id)
	}
	srv.SetPageSize(2)
	srv.QueueEmptyPages(alice, 1)
	src, _ := newSource(t, srv, nil)
	got, err := src.Meetings(context.Background(), sub(alice), from, from.Add(24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids(got), want) {
		t.Errorf("Meetings() = %v, want %v", ids(got), want)
	}
	// One empty page with a nextPageToken, then four pages of at most two.
	if n := srv.Requests(alice); n != 5 {
		t.Errorf("Requests(%s) = %d, want 5", alice, n)
	}
}

func TestMeetingsSkipsUnreadableEvent(t *testing.T) {
	srv := newServer(t)
	from := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	put(t, srv, alice, "good", from.Add(time.Hour), time.Hour)
	bad := calendartest.NewEvent("bad", "Bad", from.Add(2*time.Hour), from.Add(3*time.Hour))
	bad.Start.DateTime = "2026-11-30T25:00:00Z"
	if err := srv.Put(alice, bad); err != nil {
		t.Fatal(err)
	}
	src, _ := newSource(t, srv, nil)
	got, err := src.Meetings(context.Background(), sub(alice), from, from.Add(24*time.Hour))
	if err != nil || !slices.Equal(ids(got), []string{"good"}) {
		t.Errorf("Meetings() = %v, %v; want [good], nil", ids(got), err)
	}
}

func TestMeetingsSeries(t *testing.T) {
	srv := newServer(t)
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 11, 23, 9, 0, 0, 0, berlin)
	ev := calendartest.NewEvent("standup", "Standup", start, start.Add(15*time.Minute))
	ev.Recurrence = []string{"RRULE:FREQ=WEEKLY;BYDAY=MO,WE"}
	if err := srv.Put(alice, ev); err != nil {
		t.Fatal(err)
	}
	// Move Wednesday's to 14:00, cancel next Monday's.
	moved, err := srv.Instance(alice, "standup_20261125T080000Z")
	if err != nil {
		t.Fatal(err)
	}
	moved.Start.DateTime, moved.End.DateTime = "2026-11-25T14:00:00+01:00", "2026-11-25T14:15:00+01:00"
	if err := srv.Put(alice, moved); err != nil {
		t.Fatal(err)
	}
	if err := srv.Delete(alice, "standup_20261130T080000Z"); err != nil {
		t.Fatal(err)
	}
	src, _ := newSource(t, srv, nil)
	from := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	got, err := src.Meetings(context.Background(), sub(alice), from, from.Add(14*24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"2026-11-23T08:00:00Z standup_20261123T080000Z",
		"2026-11-25T13:00:00Z standup_20261125T080000Z",
		"2026-12-02T08:00:00Z standup_20261202T080000Z",
	}
	var instants []string
	for _, m := range got {
		instants = append(instants, m.Start.UTC().Format(time.RFC3339)+" "+m.ID)
	}
	if !slices.Equal(instants, want) {
		t.Errorf("Meetings() = %v, want %v", instants, want)
	}
}

// On 2026-10-25 Berlin falls back from 03:00 CEST to 02:00 CET: 02:30
// happens twice. A weekly 02:30 meeting has one instance that day.
func TestMeetingsDSTFallBack(t *testing.T) {
	srv := newServer(t)
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 10, 4, 2, 30, 0, 0, berlin)
	ev := calendartest.NewEvent("night", "Night shift handover", start, start.Add(30*time.Minute))
	ev.Recurrence = []string{"RRULE:FREQ=WEEKLY"}
	if err := srv.Put(alice, ev); err != nil {
		t.Fatal(err)
	}
	src, _ := newSource(t, srv, nil)
	from := time.Date(2026, 10, 17, 0, 0, 0, 0, time.UTC)
	got, err := src.Meetings(context.Background(), sub(alice), from, from.Add(21*24*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	var instants []string
	for _, m := range got {
		instants = append(instants, m.Start.Format(time.RFC3339))
	}
	// The first 02:30 of the 25th (RFC 5545), then CET.
	want := []string{"2026-10-18T02:30:00+02:00", "2026-10-25T02:30:00+02:00", "2026-11-01T02:30:00+01:00"}
	if !slices.Equal(instants, want) {
		t.Errorf("Meetings() starts = %v, want %v", instants, want)
	}
	// The day itself, read as ticks would, in two halves around the
	// repeated hour: still one instance.
	day := time.Date(2026, 10, 25, 0, 0, 0, 0, time.UTC)
	var n int
	for _, w := range [][2]time.Time{{day.Add(-2 * time.Hour), day.Add(time.Hour)}, {day.Add(time.Hour), day.Add(24 * time.Hour)}} {
		ms, err := src.Meetings(context.Background(), sub(alice), w[0], w[1])
		if err != nil {
			t.Fatal(err)
		}
		n += len(ms)
	}
	if n != 1 {
		t.Errorf("meetings on 2026-10-25 = %d, want 1", n)
	}
}

// An event marked private or confidential is read as Private, so that its
// details reach only its owner.
func TestMeetingsVisibility(t *testing.T) {
	srv := newServer(t)
	from := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	want := map[string]bool{"default": false, "public": false, "private": true, "confidential": true, "": false}
	i := 0
	for vis := range want {
		i++
		ev := calendartest.NewEvent("vis"+vis, "Board: "+vis, from.Add(time.Duration(i)*time.Hour), from.Add(time.Duration(i)*time.Hour+time.Hour))
		ev.Visibility = vis
		if err := srv.Put(alice, ev); err != nil {
			t.Fatal(err)
		}
	}
	src, _ := newSource(t, srv, nil)
	got, err := src.Meetings(context.Background(), sub(alice), from, from.Add(24*time.Hour))
	if err != nil || len(got) != len(want) {
		t.Fatalf("Meetings() = %v, %v; want %d meetings", ids(got), err, len(want))
	}
	for _, m := range got {
		if vis := strings.TrimPrefix(m.ID, "vis"); m.Private != want[vis] {
			t.Errorf("Meetings() visibility %q: Private = %v, want %v", vis, m.Private, want[vis])
		}
	}
}

// A 307 from the configured endpoint would make the client send the
// access token wherever it points; the client refuses to follow a
// redirect to another host.
func TestRedirectToAnotherHostRefused(t *testing.T) {
	srv := newServer(t)
	var mu sync.Mutex
	var leaked []string
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		leaked = append(leaked, r.Header.Get("Authorization"))
		mu.Unlock()
		fmt.Fprint(w, `{"items":[]}`)
	}))
	defer other.Close()
	otherURL := strings.Replace(other.URL, "127.0.0.1", "localhost", 1)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, otherURL+r.URL.Path+"?"+r.URL.RawQuery, http.StatusTemporaryRedirect)
	}))
	defer front.Close()
	src, _ := newSource(t, srv, func(c *calendar.Config) { c.Endpoint = front.URL + "/calendar/v3/" })
	from := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	_, err := src.Meetings(context.Background(), sub(alice), from, from.Add(time.Hour))
	if err == nil || !strings.Contains(err.Error(), "redirect") || !meetingbot.IsPermanent(err) {
		t.Errorf("Meetings() = %v, want a permanent error about the redirect", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(leaked) != 0 {
		t.Errorf("the other host got %d requests (Authorization %q), want none", len(leaked), leaked)
	}
}

// An events page larger than the bot ever needs is cut off with a clear
// error rather than read whole into memory.
func TestOversizedPageRefused(t *testing.T) {
	srv := newServer(t)
	huge := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"items":[],"summary":"`)
		pad := strings.Repeat("x", 1<<20)
		for range 17 {
			if _, err := io.WriteString(w, pad); err != nil {
				return
			}
		}
		fmt.Fprint(w, `"}`)
	}))
	defer huge.Close()
	src, _ := newSource(t, srv, func(c *calendar.Config) { c.Endpoint = huge.URL + "/calendar/v3/"; c.Retry.MaxAttempts = 1 })
	from := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	_, err := src.Meetings(context.Background(), sub(alice), from, from.Add(time.Hour))
	if err == nil || !strings.Contains(err.Error(), "larger than 16 MiB") {
		t.Errorf("Meetings() against a 17 MiB page = %v, want an error saying it is larger than 16 MiB", err)
	}
}
