package calendartest

import (
	"net/http"
	"time"
)

// SetOutage makes the Calendar API unavailable from from until until, on
// the server's clock (SetClock): every request of a Calendar API method
// (those RequestsTo counts) that arrives then is answered, after the
// latency, 503 backendError, as Google answers when its backend fails
// (the JSON of google-api-python-client's tests/data/503.json; "Handle
// API errors", https://developers.google.com/workspace/calendar/api/guides/errors,
// asks clients to retry such errors with exponential backoff). It counts
// as a request and not against the Quota. The token endpoints are
// Google's OAuth service, not the Calendar API's, and keep answering.
// Notifications still go out. A second call replaces the first; a zero
// until ends it.
func (s *Server) SetOutage(from, until time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.outage = [2]time.Time{from, until}
}

// outageFault is the answer during an outage.
var outageFault = Fault{Status: http.StatusServiceUnavailable, Domain: "global", Reason: "backendError",
	Message: "We encountered an internal error. Please try again using truncated exponential backoff."}

// down reports whether the Calendar API is in its outage at now. s.mu
// must be held.
func (s *Server) down(now time.Time) bool {
	return !now.Before(s.outage[0]) && now.Before(s.outage[1])
}
