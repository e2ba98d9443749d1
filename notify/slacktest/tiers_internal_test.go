package slacktest

import (
	"context"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot/internal/clock"
)

// Every method of a tier takes its tier's requests in a minute, whoever's
// token they come with and whatever they ask; the next is answered 429
// with Retry-After until the first of them is a minute old.
func TestEveryTieredMethodIsHeldToItsTier(t *testing.T) {
	methods := slices.Sorted(func(yield func(string) bool) {
		for m := range tierLimits {
			if !yield(m) {
				return
			}
		}
	})
	for _, method := range methods {
		limit := tierLimits[method]
		t.Run(method, func(t *testing.T) {
			s := NewServer()
			t.Cleanup(s.Close)
			s.AddUser(User{ID: "U0ALICE001", Name: "alice", Email: "alice@example.com"})
			token := Token
			if method == "auth.revoke" || strings.HasPrefix(method, "users.profile.") {
				var err error
				if token, err = s.UserToken(context.Background(), "U0ALICE001"); err != nil {
					t.Fatal(err)
				}
			}
			c := clock.NewFake(time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC))
			s.SetClock(c.Now)
			call := func() (int, string) {
				form := url.Values{"token": {token}, "client_id": {ClientID}, "client_secret": {ClientSecret}}
				resp, err := http.PostForm(s.URL()+method, form)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				return resp.StatusCode, resp.Header.Get("Retry-After")
			}
			for i := range limit {
				if code, _ := call(); code == http.StatusTooManyRequests {
					t.Fatalf("%s #%d in a minute = 429, want it answered: Tier of %d a minute", method, i+1, limit)
				}
				c.Advance(time.Second / 4)
			}
			want := int(math.Ceil((time.Minute - time.Duration(limit)*time.Second/4).Seconds()))
			if code, after := call(); code != http.StatusTooManyRequests || after != strconv.Itoa(want) {
				t.Errorf("%s #%d in a minute = %d Retry-After %q, want 429 Retry-After %d", method, limit+1, code, after, want)
			}
			c.Advance(time.Minute)
			if code, _ := call(); code == http.StatusTooManyRequests {
				t.Errorf("%s a minute later = 429, want it answered", method)
			}
		})
	}
}
