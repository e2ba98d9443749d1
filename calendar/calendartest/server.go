// Package calendartest provides a local server shaped like the Google
// Calendar API v3, for tests, demos and audits, in the way net/http/httptest
// provides a server: start it with NewServer, point GOOGLE_API_ENDPOINT at
// Endpoint(), and feed it events with Put.
//
// It implements events.list as documented (timeMin bounds an event's end and
// timeMax its start, both exclusive; singleEvents; orderBy=startTime;
// showDeleted; pagination; incremental sync with syncToken, see sync.go),
// events.get (of an event, a series or one instance of a series by its
// generated id) and events.instances (instances.go), all with the fields
// mask, events.patch with ETags and per-attendee writes (patch.go), events.watch and channels.stop, posting push notifications to the
// watching address (push.go), expands simple recurring series into
// instances as far as Google does (recurrence.go), serves an OAuth 2.0 token
// endpoint for service-account and authorized-user credentials and people's
// own grants (the authorization, token and revoke endpoints of a web
// application's flow, see oauth.go), and injects
// faults (rate limits, server errors, dropped connections, lost
// notifications) and a latency on request, and enforces per-minute and
// daily quotas as Google does (quota.go). Run through Checked, it holds
// every request to Google's own discovery document of calendar/v3 and
// refuses, as Google does, what the document refuses (discovery.go).
package calendartest

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/api/calendar/v3"

	"github.com/meetingbot/meetingbot/internal/inprocess"

	// The emulator expands series in IANA zones; embed the database so it
	// works on hosts without one.
	_ "time/tzdata"
)

// Server is a Google-Calendar-shaped HTTP server. All its methods are safe
// for concurrent use.
type Server struct {
	// ts is the listening server, nil for one from NewInProcess; base is
	// the URL the server's URLs start with, and mux serves them.
	ts   *httptest.Server
	base string
	mux  http.Handler
	key  *rsa.PrivateKey
	// spec is the discovery document requests are checked against, nil
	// outside a Checked runner; refused are the requests it refused, see
	// discovery.go.
	spec    *discovery
	refused []refused

	mu        sync.Mutex
	calendars map[string]*calendarState
	// tokens maps an issued access token to the principal it acts for.
	tokens       map[string]string
	tokenCount   int
	tokenFaults  []TokenFault
	subjects     []string
	delegation   bool
	pageSize     int
	refreshToken string
	userEmail    string
	saEmail      string
	saClientID   string

	// Per calendar ID, kept apart from calendars so that faults and counts
	// do not make an unknown calendar exist.
	faults     map[string][]Fault
	emptyPages map[string]int
	requests   map[string]int
	lastQuery  map[string]url.Values
	// userProject is the X-Goog-User-Project of the last events.list
	// request per calendar; needQuota refuses user credentials without one.
	userProject map[string]string
	needQuota   bool

	// Per API method, see api.go.
	methodCounts map[string]int
	getFaults    map[string][]Fault
	// seriesDeltas and deltaHorizon shape what a list with a syncToken
	// says of recurring series, see sync.go.
	seriesDeltas SeriesDeltas
	deltaHorizon time.Duration
	// instancesFaults are events.instances's, see instances.go.
	instancesFaults map[string][]Fault
	// patchFaults, interleave and writes are events.patch's, see
	// patch.go.
	patchFaults map[string][]Fault
	interleave  map[string]func(*calendar.Event)
	writes      []Write
	latency     atomic.Int64 // time.Duration
	// outage is when every API request is answered 503 (outage.go).
	outage [2]time.Time

	// push is the state of watch channels and their notifications, see
	// push.go; idle is signalled, with mu, when no notification is in
	// flight.
	push pushState
	idle *sync.Cond

	// oauth is the state of people's own grants, see oauth.go.
	oauth oauthState
	// quota is the usage limits enforced and what counts against them,
	// see quota.go.
	quota quotaState
	// subjectToken is the platform token workload identity federation
	// accepts, and federated the tokens the STS issued (federation.go).
	subjectToken string
	federated    map[string]bool
}

type calendarState struct {
	// eventSet holds the events as they are now. A stored event is never
	// changed in place, only replaced, so that a snapshot of the set (a
	// copy of its map and order) stays what it was: see sync.go.
	eventSet
	readers map[string]bool
	// busyOnly are the principals that see only free/busy.
	busyOnly map[string]bool
	sync     syncState
	// channels are the live events.watch channels on the calendar, by ID.
	channels map[string]*channel
	// resourceID names the calendar's events collection in watch channels.
	resourceID string
	// defaults are the calendar's default reminders (reminders.go).
	defaults []*calendar.EventReminder
}

// eventSet is a calendar's events: stored ones (single events, series and
// their exceptions) by id, and their ids in insertion order, the default
// list order.
type eventSet struct {
	events map[string]*calendar.Event
	order  []string
}

// NewServer starts a server. Close it when done.
func NewServer() *Server {
	s := newServer()
	s.ts = httptest.NewServer(s.mux)
	s.base = s.ts.URL
	return s
}

// newServer returns a server that does not listen yet.
func newServer() *Server {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(fmt.Sprintf("calendartest: generate key: %v", err))
	}
	s := &Server{
		key:             key,
		calendars:       map[string]*calendarState{},
		tokens:          map[string]string{},
		faults:          map[string][]Fault{},
		emptyPages:      map[string]int{},
		requests:        map[string]int{},
		lastQuery:       map[string]url.Values{},
		userProject:     map[string]string{},
		methodCounts:    map[string]int{},
		getFaults:       map[string][]Fault{},
		instancesFaults: map[string][]Fault{},
		patchFaults:     map[string][]Fault{},
		federated:       map[string]bool{},
		delegation:      true,
		refreshToken:    "1//refresh-" + rand.Text(),
		userEmail:       "user@example.com",
		saEmail:         "bot@meetingbot-test.iam.gserviceaccount.com",
		saClientID:      "101234567890123456789",
		push: pushState{
			now:      time.Now,
			client:   &http.Client{Timeout: 10 * time.Second, CheckRedirect: noRedirect},
			channels: map[string]*channel{},
			drop:     map[string]int{},
			faults:   map[string][]Fault{},
		},
	}
	s.idle = sync.NewCond(&s.mu)
	s.push.ctx, s.push.cancel = context.WithCancel(context.Background())
	mux := http.NewServeMux()
	mux.HandleFunc("POST /token", s.serveToken)
	mux.HandleFunc("GET "+authPath, s.serveAuth)
	mux.HandleFunc("POST "+revokePath, s.serveRevoke)
	mux.HandleFunc("POST "+stsPath, s.serveSTS)
	mux.HandleFunc("POST "+impersonatePath+"{account}", s.serveImpersonate)
	mux.HandleFunc("GET /calendar/v3/calendars/{calendarId}/events", s.api(MethodList, s.serveList))
	mux.HandleFunc("GET /calendar/v3/calendars/{calendarId}/events/{eventId}", s.api(MethodGet, s.serveGet))
	mux.HandleFunc("GET /calendar/v3/calendars/{calendarId}/events/{eventId}/instances", s.api(MethodInstances, s.serveInstances))
	mux.HandleFunc("PATCH /calendar/v3/calendars/{calendarId}/events/{eventId}", s.api(MethodPatch, s.servePatch))
	mux.HandleFunc("POST /calendar/v3/calendars/{calendarId}/events/watch", s.api(MethodWatch, s.serveWatch))
	mux.HandleFunc("POST /calendar/v3/channels/stop", s.api(MethodStop, s.serveStop))
	register(s)
	s.mux = s.specCheck(mux)
	return s
}

// URL returns the server's base URL, e.g. "http://127.0.0.1:5555", or
// InProcessURL.
func (s *Server) URL() string { return s.base }

// Endpoint returns the Calendar API base URL to use as GOOGLE_API_ENDPOINT.
func (s *Server) Endpoint() string { return s.base + "/calendar/v3/" }

// TokenURL returns the URL of the OAuth 2.0 token endpoint.
func (s *Server) TokenURL() string { return s.base + "/token" }

// Client returns an HTTP client that trusts the server, or, for one from
// NewInProcess, that hands it every request.
func (s *Server) Client() *http.Client {
	if s.ts == nil {
		return &http.Client{Transport: inprocess.Transport{Handler: s.mux}}
	}
	return s.ts.Client()
}

// Close shuts the server down, waiting for requests in flight. The
// notifications not yet delivered are dropped; those being delivered are
// cut short.
func (s *Server) Close() {
	s.push.cancel()
	s.FlushNotifications()
	if s.ts != nil {
		s.ts.CloseClientConnections()
		s.ts.Close()
	}
}

// noRedirect leaves a notification's redirect unfollowed: its answer is
// the 3xx.
func noRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// AddCalendar creates an empty calendar, so that reading it returns no
// events rather than 404 notFound. Put creates calendars too.
func (s *Server) AddCalendar(calendarID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calendar(calendarID)
}

// calendar returns the state of calendarID, creating it. s.mu must be held.
func (s *Server) calendar(calendarID string) *calendarState {
	c := s.calendars[calendarID]
	if c == nil {
		c = &calendarState{
			eventSet:   eventSet{events: map[string]*calendar.Event{}},
			readers:    map[string]bool{},
			busyOnly:   map[string]bool{},
			channels:   map[string]*channel{},
			resourceID: rand.Text(),
		}
		s.calendars[calendarID] = c
	}
	return c
}

// Share restricts calendarID to the given principals: a service account's
// client_email, an impersonated subject, or the authorized user's email.
// Others get 404 notFound, as Google answers for calendars not shared with
// the caller. A calendar never shared is readable by any valid token.
// Sharing with a principal that had free/busy only (ShareFreeBusy) gives
// it every event detail.
func (s *Server) Share(calendarID string, principals ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.calendar(calendarID)
	for _, p := range principals {
		c.readers[p] = true
		delete(c.busyOnly, p)
	}
}

// ShareFreeBusy lets the given principals see only when calendarID is busy,
// as Google answers a calendar shared with "See only free/busy" or one
// whose organisation caps external sharing at free/busy: events.list says
// accessRole "freeBusyReader" and each event keeps only its id, status,
// start and end. Like Share, it hides the calendar from everyone else.
func (s *Server) ShareFreeBusy(calendarID string, principals ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.calendar(calendarID)
	for _, p := range principals {
		c.busyOnly[p] = true
		c.readers[p] = true
	}
}

// RequireUserProject makes the server refuse authorized-user credentials
// that name no quota project, as the Calendar API does for credentials
// from an OAuth client whose project cannot be billed (gcloud's own): 403
// SERVICE_DISABLED, "requires a quota project". Service accounts are billed
// to their own project and pass.
func (s *Server) RequireUserProject(required bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.needQuota = required
}

// LastUserProject returns the X-Goog-User-Project header of the last
// events.list request on calendarID: the quota project the client named,
// "" for none.
func (s *Server) LastUserProject(calendarID string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.userProject[calendarID]
}

// SetPageSize caps the number of events per page below the client's
// maxResults, to exercise pagination. 0 restores the default.
func (s *Server) SetPageSize(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pageSize = n
}

// QueueEmptyPages makes the next n list requests on calendarID answer with
// an empty page that still carries a nextPageToken, which the API documents
// as possible.
func (s *Server) QueueEmptyPages(calendarID string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.emptyPages[calendarID] += n
}

// Requests returns how many events.list requests reached calendarID,
// including those answered with an injected fault.
func (s *Server) Requests(calendarID string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[calendarID]
}

// LastQuery returns the query parameters of the last events.list request on
// calendarID, or nil.
func (s *Server) LastQuery(calendarID string) url.Values {
	s.mu.Lock()
	defer s.mu.Unlock()
	last := s.lastQuery[calendarID]
	if last == nil {
		return nil
	}
	q := url.Values{}
	for k, v := range last {
		q[k] = append([]string(nil), v...)
	}
	return q
}
