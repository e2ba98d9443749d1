package calendartest

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"
	"google.golang.org/api/calendar/v3"
)

// listAs lists calendarID authorized as the service account, impersonating
// subject unless it is "", and returns the status and the body.
func listAs(t *testing.T, s *Server, subject, calendarID string) (int, []byte) {
	t.Helper()
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, s.Client())
	creds, err := google.CredentialsFromJSONWithTypeAndParams(ctx, s.ServiceAccountJSON(), google.ServiceAccount,
		google.CredentialsParams{Scopes: []string{calendar.CalendarReadonlyScope}, Subject: subject})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := oauth2.NewClient(ctx, creds.TokenSource).Get(s.Endpoint() + "calendars/" + url.PathEscape(calendarID) + "/events")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// The server's usage-limit answers are Google's, field for field: the
// shapes of testdata/calendar/errors, which quote the guide and real
// answers.
func TestUsageLimitAnswersAreGooglesShape(t *testing.T) {
	for _, tt := range []struct {
		fault   Fault
		fixture string
	}{
		{RateLimited, "429_rateLimitExceeded.json"},
		{RateLimited403, "403_rateLimitExceeded.json"},
		{UserRateLimited, "403_userRateLimitExceeded.json"},
		{UsageLimited, "403_quotaExceeded.json"},
		{DailyLimited, "403_dailyLimitExceeded.json"},
		{ProjectMinuteLimited, "403_rateLimitExceeded_per_minute.json"},
		{UserMinuteLimited, "403_rateLimitExceeded_per_minute_per_user.json"},
	} {
		t.Run(tt.fixture, func(t *testing.T) {
			s := NewServer()
			defer s.Close()
			s.AddCalendar("a@example.com")
			s.QueueFaults("a@example.com", tt.fault)
			code, body := listAs(t, s, "", "a@example.com")
			raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "calendar", "errors", tt.fixture))
			if err != nil {
				t.Fatal(err)
			}
			var got, want map[string]any
			if err := json.Unmarshal(body, &got); err != nil {
				t.Fatalf("answer %s is not JSON: %v", body, err)
			}
			if err := json.Unmarshal(raw, &want); err != nil {
				t.Fatal(err)
			}
			if wantCode := int(want["error"].(map[string]any)["code"].(float64)); code != wantCode {
				t.Errorf("status = %d, want %d", code, wantCode)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("answer = %s\nwant the shape of %s: %s", body, tt.fixture, raw)
			}
		})
	}
}

// The per-minute quotas count a sliding minute, per project and per user;
// the daily one a Pacific-time day. Each refuses with its own answer, and
// a refused request counts against nothing.
func TestQuota(t *testing.T) {
	start := time.Date(2026, 11, 30, 7, 59, 0, 0, time.UTC) // 23:59 PST
	type req struct {
		at      time.Duration // after start
		subject string        // impersonated user, "" for the service account
		want    int           // status
		reason  string
	}
	const a, b = "a@example.com", "b@example.com"
	tests := []struct {
		name  string
		quota Quota
		reqs  []req
	}{
		{"per user, sliding minute", Quota{PerUserPerMinute: 2}, []req{
			{0, a, 200, ""},
			{20 * time.Second, a, 200, ""},
			{40 * time.Second, a, 403, "rateLimitExceeded"},
			{40 * time.Second, b, 200, ""}, // another user's quota
			{59 * time.Second, a, 403, "rateLimitExceeded"},
			{60 * time.Second, a, 200, ""}, // the first is a minute old: out of the window
			{61 * time.Second, a, 403, "rateLimitExceeded"},
			{80 * time.Second, a, 200, ""},
		}},
		{"per project", Quota{PerMinute: 2}, []req{
			{0, a, 200, ""},
			{time.Second, b, 200, ""},
			{2 * time.Second, "", 403, "rateLimitExceeded"},
			{61 * time.Second, "", 200, ""},
		}},
		{"429 as the guide shows it", Quota{PerMinute: 1, Minute: RateLimited}, []req{
			{0, a, 200, ""},
			{time.Second, a, 429, "rateLimitExceeded"},
		}},
		{"daily, reset at midnight Pacific time", Quota{PerDay: 2}, []req{
			{0, a, 200, ""},
			{time.Second, b, 200, ""},
			{2 * time.Second, a, 403, "dailyLimitExceeded"},
			{59 * time.Second, b, 403, "dailyLimitExceeded"},
			{60 * time.Second, a, 200, ""}, // 00:00 PST
		}},
		{"Calendar's usage limits at a day's end", Quota{PerDay: 1, Day: UsageLimited}, []req{
			{0, a, 200, ""},
			{time.Second, a, 403, "quotaExceeded"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewServer()
			defer s.Close()
			now := start
			s.SetClock(func() time.Time { return now })
			for _, cal := range []string{a, b} {
				s.AddCalendar(cal)
			}
			s.SetQuota(tt.quota)
			for i, r := range tt.reqs {
				now = start.Add(r.at)
				cal := r.subject
				if cal == "" {
					cal = a
				}
				code, body := listAs(t, s, r.subject, cal)
				var eb errorBody
				if code != http.StatusOK {
					if err := json.Unmarshal(body, &eb); err != nil || len(eb.Error.Errors) != 1 {
						t.Fatalf("request %d: answer %s is not Google's error", i+1, body)
					}
				}
				if got := eb.Error.Errors; code != r.want || (r.reason != "" && got[0].Reason != r.reason) {
					t.Errorf("request %d at +%v as %q = %d %s, want %d %s", i+1, r.at, r.subject, code, body, r.want, r.reason)
				}
			}
		})
	}
}
