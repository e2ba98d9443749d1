package outbound_test

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/internal/outbound"
)

// TestAnswerSize reads answers at, and one byte past, MaxResponse, with
// and without a Content-Length: the first is read whole, the second ends
// in ErrTooLarge, which is not permanent (a later answer may be smaller).
func TestAnswerSize(t *testing.T) {
	for _, tt := range []struct {
		name     string
		size     int
		announce bool
		tooLarge bool
	}{
		{"small", 1 << 10, true, false},
		{"at the limit, announced", outbound.MaxResponse, true, false},
		{"at the limit, chunked", outbound.MaxResponse, false, false},
		{"one past, announced", outbound.MaxResponse + 1, true, true},
		{"one past, chunked", outbound.MaxResponse + 1, false, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tt.announce {
					w.Header().Set("Content-Length", strconv.Itoa(tt.size))
				}
				chunk := strings.Repeat("x", 1<<16)
				for left := tt.size; left > 0; left -= len(chunk) {
					io.WriteString(w, chunk[:min(left, len(chunk))])
					if !tt.announce {
						w.(http.Flusher).Flush() // chunked: no length known ahead
					}
				}
			}))
			defer srv.Close()

			n, err := read(outbound.Client(srv.Client()), srv.URL)
			if !tt.tooLarge {
				if err != nil || n != tt.size {
					t.Fatalf("GET %d bytes = %d, %v; want all of them", tt.size, n, err)
				}
				return
			}
			if !errors.Is(err, outbound.ErrTooLarge) {
				t.Fatalf("GET %d bytes = %d, %v; want ErrTooLarge", tt.size, n, err)
			}
			if meetingbot.IsPermanent(err) {
				t.Errorf("ErrTooLarge is permanent, want it retried: %v", err)
			}
		})
	}
}

// TestRedirects follows a redirect on the same host and refuses, as a
// permanent error, one to another host or port: the request (and its
// token) never reaches it.
func TestRedirects(t *testing.T) {
	var reached atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached.Add(1) }))
	defer other.Close()
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/same":
			http.Redirect(w, r, "/ok", http.StatusTemporaryRedirect)
		case "/other":
			http.Redirect(w, r, other.URL+"/steal", http.StatusTemporaryRedirect)
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		case "/ok":
			io.WriteString(w, "ok")
		}
	}))
	defer api.Close()
	c := outbound.Client(api.Client())

	if _, err := read(c, api.URL+"/same"); err != nil {
		t.Errorf("GET /same (redirect to /ok on the same host) = %v, want it followed", err)
	}
	_, err := read(c, api.URL+"/other")
	if !errors.Is(err, outbound.ErrRedirect) || !meetingbot.IsPermanent(err) {
		t.Errorf("GET /other (redirect to another port) = %v, want a permanent ErrRedirect", err)
	}
	if n := reached.Load(); n != 0 {
		t.Errorf("the other server was reached %d times, want 0", n)
	}
	if _, err := read(c, api.URL+"/loop"); err == nil || !strings.Contains(err.Error(), "10 redirects") {
		t.Errorf("GET /loop = %v, want a stop after 10 redirects", err)
	}
}

// TestRedirectFromHTTPS refuses a redirect that drops TLS on the same
// host, checked on the request as CheckRedirect sees it.
func TestRedirectFromHTTPS(t *testing.T) {
	from, _ := http.NewRequest(http.MethodGet, "https://slack.com/api/chat.postMessage", nil)
	to, _ := http.NewRequest(http.MethodGet, "http://slack.com/api/chat.postMessage", nil)
	if err := outbound.CheckRedirect(to, []*http.Request{from}); !errors.Is(err, outbound.ErrRedirect) {
		t.Errorf("CheckRedirect(https to http) = %v, want ErrRedirect", err)
	}
	up, _ := http.NewRequest(http.MethodGet, "https://slack.com/api/other", nil)
	if err := outbound.CheckRedirect(up, []*http.Request{from}); err != nil {
		t.Errorf("CheckRedirect(same https host) = %v, want nil", err)
	}
}

func TestLoopback(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost": true, "LOCALHOST": true, "127.0.0.1": true, "127.8.9.10": true, "::1": true, "[::1]": true,
		"slack.com": false, "10.0.0.1": false, "localhost.evil.example": false, "": false,
	} {
		if got := outbound.Loopback(host); got != want {
			t.Errorf("Loopback(%q) = %v, want %v", host, got, want)
		}
	}
}

// read GETs url with c and reads the whole answer.
func read(c *http.Client, url string) (int, error) {
	resp, err := c.Get(url)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return len(b), err
}

// TestConnectionsAreReused makes rounds of 16 calls at once to one host:
// the connections of a round are kept for the next ones, where the
// standard library's default transport keeps 2 and opens 14 more each
// round.
func TestConnectionsAreReused(t *testing.T) {
	var opened atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok")
	}))
	srv.Config.ConnState = func(_ net.Conn, state http.ConnState) {
		if state == http.StateNew {
			opened.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()

	const rounds, calls = 10, 16
	c := outbound.Client(nil)
	for range rounds {
		var wg sync.WaitGroup
		for range calls {
			wg.Go(func() {
				resp, err := c.Get(srv.URL)
				if err != nil {
					t.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			})
		}
		wg.Wait()
	}
	// The first round opens 16; a later call may open one more when it
	// asks before a finished call's connection is back in the pool.
	if n := opened.Load(); n > 3*calls {
		t.Errorf("%d connections opened for %d rounds of %d calls at once; want them reused (at most %d)", n, rounds, calls, 3*calls)
	}
}
