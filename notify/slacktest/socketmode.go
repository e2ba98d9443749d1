package slacktest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gorilla/websocket"
)

// Socket Mode, as Slack speaks it (https://api.slack.com/apis/connections/socket-implement):
// apps.connections.open, called with an app-level token, answers a one-time
// WebSocket URL; on that socket Slack sends "hello", then envelopes
//
//	{"envelope_id": "…", "type": "slash_commands" | "interactive" | "events_api",
//	 "payload": {…}, "accepts_response_payload": true|false, "retry_attempt": 0, "retry_reason": ""}
//
// each of which the app acknowledges with {"envelope_id": "…", "payload": {…}},
// and Slack pings the socket every few seconds and may ask the app to
// reconnect with {"type": "disconnect", "reason": "refresh_requested"}.

// AppToken is the app-level token apps.connections.open accepts.
const AppToken = "xapp-1-A0APP00001-slacktest"

// AppID is the app every token belongs to.
const AppID = "A0APP00001"

// Envelope is one Socket Mode message from Slack to the app.
type Envelope struct {
	// Type is "slash_commands", "interactive" or "events_api".
	Type string
	// Payload is what an HTTP request would have carried: the slash
	// command's fields, the interaction payload, or the Events API body.
	Payload any
	// AcceptsResponsePayload is true for slash commands: the ack may carry
	// the reply.
	AcceptsResponsePayload bool
	RetryAttempt           int
	RetryReason            string
}

// Ack is the app's acknowledgement of one envelope.
type Ack struct {
	EnvelopeID string
	Payload    json.RawMessage // nil when the ack carried none
	At         time.Time
}

// ErrNoSocket is returned when no app is connected over Socket Mode.
var ErrNoSocket = errors.New("slacktest: no Socket Mode connection")

type socketHub struct {
	tickets   map[string]bool // unused one-time URLs
	opened    int             // connections accepted so far
	conn      *socketConn     // the newest live connection
	acks      []Ack
	envelopes int
	ping      time.Duration
	changed   chan struct{} // closed and replaced on every connect and ack
}

type socketConn struct {
	out    chan []byte
	closed chan struct{}
}

// notify wakes the waiters; s.mu is held.
func (h *socketHub) notify() {
	if h.changed != nil {
		close(h.changed)
	}
	h.changed = make(chan struct{})
}

// SetPingInterval sets how often the server pings each socket; 10s by
// default. slack-go reconnects when no ping came for 30s.
func (s *Server) SetPingInterval(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ext.socket.ping = d
}

func (s *Server) openConnection(w http.ResponseWriter, r *http.Request) {
	// The method takes no arguments, and the app-level token must come in
	// the Authorization header: Slack refuses it as a POST parameter.
	form := url.Values{}
	token := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, Call{Method: "apps.connections.open", Form: cloneValues(form), Authorized: token == AppToken, At: s.now()})
	switch {
	case token == "":
		writeJSON(w, slackErr("not_authed"))
		return
	case !strings.HasPrefix(token, "xapp-"):
		writeJSON(w, slackErr("not_allowed_token_type"))
		return
	case token != AppToken:
		writeJSON(w, slackErr("invalid_auth"))
		return
	}
	if s.ext.socket.tickets == nil {
		s.ext.socket.tickets = map[string]bool{}
	}
	ticket := randomHex(16)
	s.ext.socket.tickets[ticket] = true
	link := "ws" + strings.TrimPrefix(s.base, "http") + "/link/?ticket=" + ticket + "&app_id=" + AppID
	writeJSON(w, ok(map[string]any{"url": link}))
}

var upgrader = websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}

func (s *Server) serveSocket(w http.ResponseWriter, r *http.Request) {
	ticket := r.URL.Query().Get("ticket")
	s.mu.Lock()
	valid := s.ext.socket.tickets[ticket]
	delete(s.ext.socket.tickets, ticket) // a URL is good for one connection
	ping := s.ext.socket.ping
	s.mu.Unlock()
	if !valid {
		http.Error(w, "invalid or used ticket", http.StatusUnauthorized)
		return
	}
	if ping <= 0 {
		ping = 10 * time.Second
	}
	ws, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return // Upgrade has answered
	}
	c := &socketConn{out: make(chan []byte, 16), closed: make(chan struct{})}
	hello, _ := json.Marshal(map[string]any{
		"type": "hello", "num_connections": 1,
		"debug_info":      map[string]any{"host": "applink-slacktest", "build_number": 1, "approximate_connection_time": 18060},
		"connection_info": map[string]any{"app_id": AppID},
	})
	c.out <- hello // before any envelope
	s.mu.Lock()
	s.ext.socket.opened++
	s.ext.socket.conn = c
	s.ext.socket.notify()
	s.mu.Unlock()
	go s.readAcks(ws, c)
	s.writeSocket(ws, c, ping)
	ws.Close()

	s.mu.Lock()
	if s.ext.socket.conn == c {
		s.ext.socket.conn = nil
	}
	s.ext.socket.notify()
	s.mu.Unlock()
}

// writeSocket is the only writer of ws: it sends queued messages and pings
// until the app closes the socket, the server closes, or a disconnect was
// sent.
func (s *Server) writeSocket(ws *websocket.Conn, c *socketConn, ping time.Duration) {
	t := time.NewTicker(ping)
	defer t.Stop()
	for {
		select {
		case msg := <-c.out:
			if msg == nil { // disconnect sent: close after it
				_ = ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, "refresh"), time.Now().Add(time.Second))
				return
			}
			if ws.WriteMessage(websocket.TextMessage, msg) != nil {
				return
			}
		case <-t.C:
			if ws.WriteControl(websocket.PingMessage, []byte("ping"), time.Now().Add(5*time.Second)) != nil {
				return
			}
		case <-c.closed:
			return
		case <-s.done:
			return
		}
	}
}

func (s *Server) readAcks(ws *websocket.Conn, c *socketConn) {
	defer close(c.closed)
	for {
		_, data, err := ws.ReadMessage()
		if err != nil {
			return
		}
		var ack struct {
			EnvelopeID string          `json:"envelope_id"`
			Payload    json.RawMessage `json:"payload"`
		}
		if json.Unmarshal(data, &ack) != nil || ack.EnvelopeID == "" {
			continue // Slack ignores what is not an ack
		}
		var reply struct {
			Blocks json.RawMessage `json:"blocks"`
		}
		_ = json.Unmarshal(ack.Payload, &reply)
		s.mu.Lock()
		if len(reply.Blocks) > 0 {
			s.recordType(kindBlocks, "Socket Mode acknowledgement", string(reply.Blocks))
		}
		s.ext.socket.acks = append(s.ext.socket.acks, Ack{EnvelopeID: ack.EnvelopeID, Payload: ack.Payload, At: s.now()})
		s.ext.socket.notify()
		s.mu.Unlock()
	}
}

// SendEnvelope delivers env to the app connected over Socket Mode (the
// newest connection) and returns its envelope_id, or ErrNoSocket.
func (s *Server) SendEnvelope(env Envelope) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.ext.socket.conn
	if c == nil {
		return "", ErrNoSocket
	}
	s.ext.socket.envelopes++
	id := fmt.Sprintf("%08x-%04x-slacktest", s.ext.socket.envelopes, s.ext.socket.envelopes)
	payload, err := json.Marshal(env.Payload)
	if err != nil {
		return "", fmt.Errorf("slacktest: envelope payload: %w", err)
	}
	msg, _ := json.Marshal(map[string]any{
		"envelope_id": id, "type": env.Type, "payload": json.RawMessage(payload),
		"accepts_response_payload": env.AcceptsResponsePayload,
		"retry_attempt":            env.RetryAttempt, "retry_reason": env.RetryReason,
	})
	select {
	case c.out <- msg:
		return id, nil
	case <-c.closed:
		return "", ErrNoSocket
	}
}

// Disconnect asks the connected app to reconnect, as Slack does before it
// refreshes a connection, and then closes the socket.
func (s *Server) Disconnect(reason string) error {
	s.mu.Lock()
	c := s.ext.socket.conn
	s.mu.Unlock()
	if c == nil {
		return ErrNoSocket
	}
	msg, _ := json.Marshal(map[string]any{"type": "disconnect", "reason": reason, "debug_info": map[string]any{"host": "applink-slacktest"}})
	for _, m := range [][]byte{msg, nil} {
		select {
		case c.out <- m:
		case <-c.closed:
			return nil
		}
	}
	return nil
}

// SocketConnections returns how many Socket Mode connections the server
// has accepted so far.
func (s *Server) SocketConnections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ext.socket.opened
}

// WaitSocket waits until an app is connected over Socket Mode and has had
// at least n connections accepted, or ctx ends.
func (s *Server) WaitSocket(ctx context.Context, n int) error {
	return s.waitSocket(ctx, func(h *socketHub) bool { return h.conn != nil && h.opened >= n })
}

// WaitAck waits for the app's acknowledgement of envelopeID, or ctx's end.
func (s *Server) WaitAck(ctx context.Context, envelopeID string) (Ack, error) {
	var found Ack
	err := s.waitSocket(ctx, func(h *socketHub) bool {
		for _, a := range h.acks {
			if a.EnvelopeID == envelopeID {
				found = a
				return true
			}
		}
		return false
	})
	return found, err
}

func (s *Server) waitSocket(ctx context.Context, done func(*socketHub) bool) error {
	for {
		s.mu.Lock()
		if done(&s.ext.socket) {
			s.mu.Unlock()
			return nil
		}
		if s.ext.socket.changed == nil {
			s.ext.socket.changed = make(chan struct{})
		}
		changed := s.ext.socket.changed
		s.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("slacktest: socket: %w", ctx.Err())
		case <-s.done:
			return ErrNoSocket
		}
	}
}
