package daemon

import (
	"bufio"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/config"
	"github.com/meetingbot/meetingbot/monitor"
)

// serveAll serves each of servers until the test ends.
func serveAll(t *testing.T, servers []*httpServer) {
	t.Helper()
	for _, s := range servers {
		go s.srv.Serve(s.ln)
		t.Cleanup(func() { s.srv.Close() })
	}
}

// TestListeners checks both layouts: HTTP_ADDR alone serves the detailed
// /healthz and /metrics, as before; with METRICS_ADDR, those move there and
// HTTP_ADDR's /healthz names nothing. Every server bounds its connections.
func TestListeners(t *testing.T) {
	subs := []meetingbot.Subscription{
		{ID: "ceo@example.com=#board-layoffs-2026", CalendarID: "ceo@example.com", Destination: "#board-layoffs-2026", Offsets: []time.Duration{time.Minute}},
		{ID: "alice@example.com", CalendarID: "alice@example.com", Offsets: []time.Duration{time.Minute}},
	}
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	log := slog.New(slog.DiscardHandler)
	get := func(addr, path string) (int, string) { return httpGet("http://" + addr + path) }

	t.Run("one listener", func(t *testing.T) {
		mon := monitor.New(monitor.Options{Subscriptions: subs, Interval: 10 * time.Second, Now: clock})
		servers, err := listeners(config.Config{HTTPAddr: "127.0.0.1:0"}, mon.Handler(), mon.PublicHandler(), log, net.Listen)
		if err != nil || len(servers) != 1 {
			t.Fatalf("listen(HTTP_ADDR) = %d servers, %v; want 1", len(servers), err)
		}
		serveAll(t, servers)
		addr := servers[0].ln.Addr().String()
		if status, body := get(addr, "/healthz"); status != 200 || !strings.HasPrefix(body, "ok: 2 subscriptions swept") {
			t.Errorf("GET /healthz = %d %q, want the detailed page", status, body)
		}
		if status, body := get(addr, "/metrics"); status != 200 || !strings.Contains(body, "meetingbot_subscriptions 2") {
			t.Errorf("GET /metrics = %d, want the metrics", status)
		}
	})

	t.Run("private metrics listener", func(t *testing.T) {
		mon := monitor.New(monitor.Options{Subscriptions: subs, Interval: 10 * time.Second, Now: clock})
		servers, err := listeners(config.Config{HTTPAddr: "127.0.0.1:0", MetricsAddr: "127.0.0.1:0"}, mon.Handler(), mon.PublicHandler(), log, net.Listen)
		if err != nil || len(servers) != 2 {
			t.Fatalf("listen(HTTP_ADDR, METRICS_ADDR) = %d servers, %v; want 2", len(servers), err)
		}
		serveAll(t, servers)
		public, private := servers[0].ln.Addr().String(), servers[1].ln.Addr().String()
		mon.Swept(subs[0], now, time.Second, errors.New("calendar ceo@example.com: 403"))
		now = now.Add(time.Minute)
		if status, body := get(public, "/healthz"); status != 503 || body != "unhealthy: 2 of 2 subscriptions failing\n" {
			t.Errorf("public GET /healthz = %d %q, want 503 with a count and no names", status, body)
		}
		if status, _ := get(public, "/metrics"); status != 404 {
			t.Errorf("public GET /metrics = %d, want 404", status)
		}
		if status, body := get(private, "/healthz"); status != 503 || !strings.Contains(body, "ceo@example.com=#board-layoffs-2026") {
			t.Errorf("private GET /healthz = %d %q, want the detailed page", status, body)
		}
		if status, body := get(private, "/metrics"); status != 200 || !strings.Contains(body, "meetingbot_subscriptions 2") {
			t.Errorf("private GET /metrics = %d, want the metrics", status)
		}
		for _, s := range servers {
			if s.srv.ReadHeaderTimeout <= 0 || s.srv.ReadTimeout <= 0 || s.srv.WriteTimeout <= 0 || s.srv.IdleTimeout <= 0 {
				t.Errorf("%s server timeouts = %v %v %v %v, want all set", s.name, s.srv.ReadHeaderTimeout, s.srv.ReadTimeout, s.srv.WriteTimeout, s.srv.IdleTimeout)
			}
		}
	})
}

// An idle keep-alive connection and a request whose body never comes are
// both closed by the server, not held open by whoever opened them.
func TestServerClosesIdleAndSlowConnections(t *testing.T) {
	limits := timeouts{readHeader: 200 * time.Millisecond, read: 300 * time.Millisecond, write: time.Second, idle: 300 * time.Millisecond}
	mon := monitor.New(monitor.Options{Interval: 10 * time.Second})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := newServer(mon.PublicHandler(), limits, slog.New(slog.DiscardHandler))
	go srv.Serve(ln)
	defer srv.Close()

	closedWithin := func(t *testing.T, c net.Conn, r *bufio.Reader, within time.Duration) {
		t.Helper()
		began := time.Now()
		c.SetReadDeadline(began.Add(5 * time.Second))
		_, err := io.Copy(io.Discard, r)
		if took := time.Since(began); err != nil || took > within {
			t.Errorf("connection still open after %v (err %v), want it closed by the server within %v", took, err, within)
		}
	}
	t.Run("idle keep-alive", func(t *testing.T) {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: bot\r\n\r\n")
		r := bufio.NewReader(c)
		resp, err := http.ReadResponse(r, nil)
		if err != nil || resp.StatusCode != 200 || resp.Close {
			t.Fatalf("GET /healthz = %v, %v; want 200 on a kept-alive connection", resp, err)
		}
		io.Copy(io.Discard, resp.Body)
		closedWithin(t, c, r, 2*time.Second)
	})
	t.Run("slow body", func(t *testing.T) {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		io.WriteString(c, "POST /healthz HTTP/1.1\r\nHost: bot\r\nContent-Length: 1000\r\n\r\nthe rest never comes")
		closedWithin(t, c, bufio.NewReader(c), 2*time.Second)
	})
}

// httpGet GETs url and returns the status and the body; 0 and the error
// when it gets no answer.
func httpGet(url string) (int, string) {
	c := &http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}
