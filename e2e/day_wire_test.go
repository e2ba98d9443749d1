package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// The simulated day's plumbing: everything in memory, so that inside a
// synctest bubble every goroutine waits on something of the bubble and
// the fake clock moves (a goroutine blocked on a socket stops it).

// memListener is a net.Listener whose connections are net.Pipe ends that
// dial hands it: the bot's HTTP server serves them as it serves TCP.
type memListener struct {
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

func newMemListener() *memListener {
	return &memListener{conns: make(chan net.Conn), closed: make(chan struct{})}
}

// listen is hooks.listen: every address is the listener.
func (l *memListener) listen(network, addr string) (net.Listener, error) { return l, nil }

func (l *memListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *memListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

func (l *memListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8080} }

// dial connects to the listener, as http.Transport.DialContext.
func (l *memListener) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.closed:
	case <-ctx.Done():
	}
	client.Close()
	server.Close()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return nil, net.ErrClosed
}

// callCounter counts the requests through it by path's last element (the
// Slack method), after the prefix.
type callCounter struct {
	next   http.RoundTripper
	prefix string

	mu    sync.Mutex
	calls map[string]int
}

func (c *callCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	method := strings.TrimPrefix(req.URL.Path, c.prefix)
	c.mu.Lock()
	c.calls[method]++
	c.mu.Unlock()
	return c.next.RoundTrip(req)
}

func (c *callCounter) counts() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.calls))
	for k, v := range c.calls {
		out[k] = v
	}
	return out
}

// seenTracker notes when the bot first read each change of the day from
// the Calendar: the answer of the events.list (or events.get) that held
// it. A created or moved event is recognised by its Updated, a stamp of
// the change alone; a cancelled one by its entry of status "cancelled", or
// by its absence from a full sync made after it. A change superseded by
// a later one of the same event, read first, is read with it.
type seenTracker struct {
	next http.RoundTripper

	mu      sync.Mutex
	pending map[string][]*trackedChange // by calendar, not read yet
}

// trackedChange is a change and when the bot read it.
type trackedChange struct {
	dayChange
	seen time.Time
}

func (s *seenTracker) add(c *trackedChange) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending[c.calendar] = append(s.pending[c.calendar], c)
}

// eventsPage is what the tracker reads of an answer: a page of events.list,
// or an event of events.get.
type eventsPage struct {
	Items         []eventSeen `json:"items"`
	NextPageToken string      `json:"nextPageToken"`
	eventSeen
}

type eventSeen struct {
	ID      string `json:"id"`
	Status  string `json:"status"`
	Updated string `json:"updated"`
}

func (s *seenTracker) RoundTrip(req *http.Request) (*http.Response, error) {
	sent := time.Now()
	resp, err := s.next.RoundTrip(req)
	if err != nil || resp.StatusCode != http.StatusOK || req.Method != http.MethodGet {
		return resp, err
	}
	rest, ok := strings.CutPrefix(req.URL.Path, "/calendar/v3/calendars/")
	if !ok {
		return resp, err
	}
	calendarID, what, _ := strings.Cut(rest, "/")
	s.mu.Lock()
	waiting := len(s.pending[calendarID]) > 0
	s.mu.Unlock()
	if !waiting {
		return resp, err
	}
	body, rerr := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if rerr != nil {
		return resp, err
	}
	var page eventsPage
	if json.Unmarshal(body, &page) != nil {
		return resp, err
	}
	if page.ID != "" {
		page.Items = append(page.Items, page.eventSeen)
	}
	q := req.URL.Query()
	// A full sync's only page lists every event there is: one cancelled
	// before it was sent is not among them.
	complete := what == "events" && q.Get("syncToken") == "" && q.Get("pageToken") == "" && page.NextPageToken == ""
	s.saw(calendarID, page.Items, complete, sent, time.Now())
	return resp, err
}

// saw notes the changes of calendarID that items, answered at answered to
// a request sent at sent, hold.
func (s *seenTracker) saw(calendarID string, items []eventSeen, complete bool, sent, answered time.Time) {
	byID := make(map[string]eventSeen, len(items))
	for _, it := range items {
		byID[it.ID] = it
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	list := s.pending[calendarID]
	read := func(c *trackedChange) bool {
		it, listed := byID[c.id]
		switch c.kind {
		case changeCancel:
			return listed && it.Status == "cancelled" || complete && !listed && sent.After(c.at)
		default:
			return listed && it.Updated == c.ev.Updated
		}
	}
	for _, c := range list {
		if !read(c) {
			continue
		}
		for _, o := range list {
			if o.id == c.id && !o.at.After(c.at) && o.seen.IsZero() {
				o.seen = answered
			}
		}
	}
	kept := list[:0]
	for _, c := range list {
		if c.seen.IsZero() {
			kept = append(kept, c)
		}
	}
	clear(list[len(kept):])
	s.pending[calendarID] = kept
}
