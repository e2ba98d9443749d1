// Package slacktest is a local stand-in for the Slack Web API, in the spirit of
// net/http/httptest: NewServer listens on a loopback port and answers the
// methods the bot uses (auth.test, chat.postMessage, chat.update,
// conversations.open, conversations.list, conversations.info,
// conversations.history, users.lookupByEmail, users.info) in Slack's wire
// format, so the real slack-go client can be pointed at it with
// slack.OptionAPIURL(server.URL()).
//
// chat.postMessage checks blocks against Block Kit's limits as Slack does
// (section text 3,000 characters, header 150, button text 75, button URL
// 3,000 and https), refusing a message that breaks one with invalid_blocks
// and the JSON pointer of each offending field, and cuts a text over 40,000
// characters with a message_truncated warning. chat.update checks the same
// limits, refuses a text over 4,000 characters (msg_too_long), and edits
// only a message of the bot's own that is still there (cant_update_message,
// message_not_found), in a channel it can use.
//
// Every method the bot calls is held to its documented rate-limit tier,
// answering 429 with Retry-After past it (tiers.go). Every Block Kit
// payload it receives is also held to Slack's own
// TypeScript definitions, @slack/types: CheckTypes compiles them with tsc,
// and a test binary run through Checked does so at its end (typecheck.go).
//
// It is ordinary code, not test-only code: tests, the binary's demo mode and
// the audit command's tests all use it. A Server keeps every posted message,
// records every call, and can be told to fail the next calls of a method (a
// 429 with Retry-After, a 5xx, a Slack error string, a slow response, a
// dropped connection, an answer that lacks what the client needs), before or
// after the call took effect, or answer every call after a latency
// (SetLatency), and keep Slack's workspace-wide posting budget
// (SetPostingBudget). AddUsers seeds thousands of members cheaply.
package slacktest

import (
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Identity of the bot every valid token belongs to, as auth.test reports it.
const (
	Token     = "xoxb-slacktest-token"
	TeamID    = "T0TEAM0001"
	BotUserID = "U0BOT00001"
	BotID     = "B0BOT00001"
	BotName   = "meetingbot"
)

// User is a seeded workspace member. A Deactivated one is not found by
// email (users.lookupByEmail answers users_not_found, as Slack documents
// for deactivated accounts) and users.info says "deleted": true.
type User struct {
	ID          string
	Name        string
	Email       string
	Deactivated bool
}

// Channel is a seeded public or private channel. Member says whether the bot
// is in it: chat.postMessage and conversations.history answer not_in_channel
// otherwise, as Slack does.
type Channel struct {
	ID       string
	Name     string
	Private  bool
	Archived bool
	Member   bool
}

// Message is one message posted through chat.postMessage.
type Message struct {
	Channel  string
	TS       string
	Text     string
	Blocks   json.RawMessage // as posted, nil when the call had none
	Metadata *Metadata       // nil when the call had none
	User     string          // the bot user that posted it
	BotID    string
	Posted   time.Time // the server clock when it was stored
	Edited   time.Time // the server clock at its last chat.update; zero if none
}

// Metadata is Slack message metadata as posted with a message.
type Metadata struct {
	EventType    string         `json:"event_type"`
	EventPayload map[string]any `json:"event_payload"`
}

// Call is one request the server received, in arrival order. Form holds the
// request parameters (form-encoded or JSON) without the token.
type Call struct {
	Method     string
	Form       url.Values
	Authorized bool // a valid token came with the call
	At         time.Time
}

// Server is a running emulator. Its methods are safe for concurrent use.
type Server struct {
	// srv is the listening server, nil for one from NewInProcess; base is
	// the URL the server's URLs start with, and mux serves them.
	srv  *httptest.Server
	base string
	mux  *http.ServeMux
	done chan struct{}

	mu        sync.Mutex
	now       func() time.Time
	tokens    map[string]bool
	users     []User
	userIndex map[string]int // "id:U…" and "email:<lowercase>" -> index in users, first wins
	channels  []Channel
	dms       map[string]string // DM channel ID -> user ID
	messages  []Message
	byChannel map[string][]int // indexes in messages, per channel, oldest first
	calls     []Call
	faults    []queuedFault
	onMessage []func(Message)
	lastTS    int64        // microseconds of the last ts handed out
	latency   atomic.Int64 // time.Duration, see SetLatency
	// tierCalls are the recent requests of each method with a tier
	// limit, see tiers.go.
	tierCalls map[string][]time.Time
	// posting is the workspace-wide posting budget, nil when off; see
	// budget.go.
	posting   *bucket
	scopes    []string // see SetScopes
	scopesSet bool

	ext extension // self-service methods and Socket Mode
	// types are the Block Kit payloads received and not type-checked
	// yet, see typecheck.go.
	types typeLog
}

// NewServer starts an emulator that accepts Token and has no users or
// channels yet; seed them with AddUser and AddChannel. Close it when done.
func NewServer() *Server {
	s := newServer()
	s.srv = httptest.NewServer(s.mux)
	s.base = s.srv.URL
	return s
}

// newServer returns an emulator that does not listen yet.
func newServer() *Server {
	s := &Server{
		done:      make(chan struct{}),
		now:       time.Now,
		tokens:    map[string]bool{Token: true},
		dms:       map[string]string{},
		userIndex: map[string]int{},
		byChannel: map[string][]int{},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/api/", s.serve)
	s.registerExtension(mux)
	s.mux = mux
	register(s)
	return s
}

// URL returns the Web API base URL, ending in "/api/", for SLACK_API_URL.
func (s *Server) URL() string { return s.base + "/api/" }

// Close releases delayed responses and shuts the server down.
func (s *Server) Close() {
	select {
	case <-s.done:
	default:
		close(s.done)
	}
	if s.srv != nil {
		s.srv.Close()
	}
}

// SetClock replaces the clock used for message timestamps and call times.
func (s *Server) SetClock(now func() time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.now = now
}

// AddToken makes another token valid; any other token gets invalid_auth.
func (s *Server) AddToken(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokens[token] = true
}

// AddUser seeds a workspace member.
func (s *Server) AddUser(u User) { s.AddUsers(u) }

// AddUsers seeds many workspace members at once; lookups by ID and email
// stay constant-time however many there are.
func (s *Server) AddUsers(users ...User) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, u := range users {
		s.users = append(s.users, u)
		for _, k := range []string{"id:" + u.ID, "email:" + strings.ToLower(u.Email)} {
			if _, ok := s.userIndex[k]; !ok {
				s.userIndex[k] = len(s.users) - 1
			}
		}
	}
}

// AddChannel seeds a channel.
func (s *Server) AddChannel(c Channel) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.channels = append(s.channels, c)
}

// UpdateChannel replaces the seeded channel with c's ID by c: the bot
// invited or removed (Member), the channel archived or renamed.
func (s *Server) UpdateChannel(c Channel) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.channels {
		if s.channels[i].ID == c.ID {
			s.channels[i] = c
			return
		}
	}
	s.channels = append(s.channels, c)
}

// OnMessage registers f to be called with every new message, after it is
// stored and outside the server's lock. The demo prints messages this way.
func (s *Server) OnMessage(f func(Message)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.onMessage = append(s.onMessage, f)
}

// AddMessage stores m as if it had been posted, without calling the
// OnMessage hooks: seed history with it, e.g. another app's message. Empty
// TS, Posted, User and BotID are filled in as for a post by the bot.
func (s *Server) AddMessage(m Message) Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	if m.Posted.IsZero() {
		m.Posted = s.now()
	}
	if m.TS == "" {
		m.TS = s.nextTS(m.Posted.UnixMicro())
	}
	if m.User == "" && m.BotID == "" {
		m.User, m.BotID = BotUserID, BotID
	}
	s.store(m)
	return m
}

// store appends m to the messages. s.mu must be held.
func (s *Server) store(m Message) {
	s.byChannel[m.Channel] = append(s.byChannel[m.Channel], len(s.messages))
	s.messages = append(s.messages, m)
}

// Messages returns a copy of every message posted so far, oldest first.
func (s *Server) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Message(nil), s.messages...)
}

// Calls returns a copy of every call received so far, oldest first.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Call, len(s.calls))
	for i, c := range s.calls {
		c.Form = cloneValues(c.Form)
		out[i] = c
	}
	return out
}

// CallsTo returns the calls of one method, oldest first.
func (s *Server) CallsTo(method string) []Call {
	var out []Call
	for _, c := range s.Calls() {
		if c.Method == method {
			out = append(out, c)
		}
	}
	return out
}

// response is what a method handler answers: an HTTP status and a JSON body.
type response struct {
	status int
	body   map[string]any
	posted *Message
}

func ok(body map[string]any) response {
	if body == nil {
		body = map[string]any{}
	}
	body["ok"] = true
	return response{status: http.StatusOK, body: body}
}

func slackErr(code string) response {
	return response{status: http.StatusOK, body: map[string]any{"ok": false, "error": code}}
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	method := strings.TrimPrefix(r.URL.Path, "/api/")
	form, err := readForm(r)
	if err != nil {
		writeJSON(w, slackErr("invalid_form_data"))
		return
	}
	token := form.Get("token")
	if token == "" {
		token = strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
	}
	form.Del("token")

	s.mu.Lock()
	authorized := s.tokens[token]
	s.calls = append(s.calls, Call{Method: method, Form: cloneValues(form), Authorized: authorized, At: s.now()})
	fault, faulted := s.takeFault(method, form.Get("channel"))
	retryAfter, limited := 0, false
	if authorized && !faulted {
		retryAfter, limited = s.overTier(method, s.now())
		if !limited {
			retryAfter, limited = s.overBudget(method, s.now())
		}
	}
	s.mu.Unlock()
	if limited {
		writeRateLimited(w, retryAfter)
		return
	}

	if !s.wait(r, time.Duration(s.latency.Load())) {
		return
	}

	if faulted && !fault.effective() {
		if !s.wait(r, fault.Delay) {
			return
		}
		writeFault(w, fault)
		return
	}

	var resp response
	switch {
	case token == "":
		resp = slackErr("not_authed")
	case !authorized:
		resp = slackErr("invalid_auth")
	default:
		resp = s.dispatch(method, form)
	}
	if resp.posted != nil {
		s.mu.Lock()
		hooks := append([](func(Message)){}, s.onMessage...)
		s.mu.Unlock()
		for _, f := range hooks {
			f(*resp.posted)
		}
	}
	if faulted && !s.wait(r, fault.Delay) {
		return
	}
	if faulted && (fault.Drop || fault.Body != "" || fault.Status != 0 || fault.Error != "") {
		writeFault(w, fault)
		return
	}
	if authorized {
		w.Header().Set("X-OAuth-Scopes", s.scopeHeader())
	}
	writeJSON(w, resp)
}

func (s *Server) dispatch(method string, form url.Values) response {
	switch method {
	case "auth.test":
		return ok(map[string]any{
			"url": "https://slacktest.slack.com/", "team": "Slack Test", "user": BotName,
			"team_id": TeamID, "user_id": BotUserID, "bot_id": BotID, "is_enterprise_install": false,
		})
	case "chat.postMessage":
		return s.postMessage(form)
	case "chat.update":
		return s.update(form)
	case "conversations.open":
		return s.open(form)
	case "conversations.list":
		return s.list(form)
	case "conversations.info":
		return s.info(form)
	case "conversations.history":
		return s.history(form)
	case "users.lookupByEmail":
		return s.lookupByEmail(form)
	default:
		if resp, ok := s.dispatchExtension(method, form); ok {
			return resp
		}
		return response{status: http.StatusNotFound, body: map[string]any{"ok": false, "error": "unknown_method"}}
	}
}

func writeJSON(w http.ResponseWriter, resp response) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(resp.status)
	_ = json.NewEncoder(w).Encode(resp.body)
}

// readForm reads parameters the way Slack accepts them: the query string,
// a form-encoded body, or a JSON body whose non-string values are kept as
// JSON text.
func readForm(r *http.Request) (url.Values, error) {
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct != "application/json" {
		if err := r.ParseForm(); err != nil {
			return nil, err
		}
		return cloneValues(r.Form), nil
	}
	form := cloneValues(r.URL.Query())
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, err
	}
	for k, raw := range m {
		var str string
		if json.Unmarshal(raw, &str) == nil {
			form.Set(k, str)
		} else {
			form.Set(k, string(raw))
		}
	}
	return form, nil
}

func cloneValues(v url.Values) url.Values {
	out := make(url.Values, len(v))
	for k, vs := range v {
		out[k] = append([]string(nil), vs...)
	}
	return out
}
