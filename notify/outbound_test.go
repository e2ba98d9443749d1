package notify_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/internal/retry"
	"github.com/meetingbot/meetingbot/notify"
	"github.com/meetingbot/meetingbot/notify/slacktest"
)

// elsewhere is a server on another host (localhost, where the configured
// one is 127.0.0.1) that records what reaches it.
type elsewhere struct {
	srv  *httptest.Server
	mu   sync.Mutex
	seen []string // request bodies and Authorization headers
}

func newElsewhere(t *testing.T) *elsewhere {
	e := &elsewhere{}
	e.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		e.mu.Lock()
		e.seen = append(e.seen, r.Header.Get("Authorization")+" "+string(b))
		e.mu.Unlock()
		fmt.Fprint(w, `{"ok":true,"channel":"C0STANDUP1","ts":"1.000001","user_id":"U1","bot_id":"B1"}`)
	}))
	t.Cleanup(e.srv.Close)
	return e
}

func (e *elsewhere) url() string { return strings.Replace(e.srv.URL, "127.0.0.1", "localhost", 1) }

func (e *elsewhere) requests() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.seen...)
}

// A 307 from the configured host would make the client post the same
// form, token included, to wherever it points. Slack never redirects API
// calls; the client refuses to follow one to another host.
func TestRedirectToAnotherHostRefused(t *testing.T) {
	other := newElsewhere(t)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.url()+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer front.Close()
	s := notify.New(notify.Config{Token: slacktest.Token, APIURL: front.URL + "/api/", Retry: retry.Policy{MaxAttempts: 2},
		Sleep: func(ctx context.Context, _ time.Duration) error { return ctx.Err() }, Interval: -1})
	err := s.Check(context.Background())
	if err == nil || !strings.Contains(err.Error(), "redirect") || !meetingbot.IsPermanent(err) {
		t.Errorf("Check() = %v, want a permanent error about the redirect", err)
	}
	_, err = s.Notify(context.Background(), reminder(sub("C0STANDUP1"), meeting(), 10*time.Minute))
	if err == nil || !meetingbot.IsPermanent(err) {
		t.Errorf("Notify() = %v, want a permanent error about the redirect", err)
	}
	if got := other.requests(); len(got) != 0 {
		t.Errorf("the other host got %d requests (%q), want none", len(got), got)
	}
}

// An answer larger than the bot ever needs is cut off with a clear error
// rather than read whole into memory.
func TestOversizedAnswerRefused(t *testing.T) {
	for _, chunked := range []bool{false, true} {
		huge := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			pad := strings.Repeat(" ", 1<<20)
			if !chunked {
				w.Header().Set("Content-Length", fmt.Sprint(17<<20+len(`{"ok":true}`)))
			}
			fmt.Fprint(w, `{"ok":true`)
			for range 17 {
				if _, err := io.WriteString(w, pad); err != nil {
					return
				}
			}
			fmt.Fprint(w, `}`)
		}))
		s := notify.New(notify.Config{Token: slacktest.Token, APIURL: huge.URL + "/api/", Retry: retry.Policy{MaxAttempts: 1}})
		err := s.Check(context.Background())
		if err == nil || !strings.Contains(err.Error(), "larger than 16 MiB") {
			t.Errorf("Check() against a 17 MiB answer (chunked %v) = %v, want an error saying it is larger than 16 MiB", chunked, err)
		}
		huge.Close()
	}
}
