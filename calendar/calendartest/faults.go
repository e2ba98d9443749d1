package calendartest

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"
)

// Fault is an injected failure of one events.list request.
type Fault struct {
	// Status is the HTTP status to answer with.
	Status int
	// Domain, Reason and Message fill Google's error JSON.
	Domain, Reason, Message string
	// RetryAfter, when not empty, is sent as the Retry-After header.
	RetryAfter string
	// Drop cuts the connection in the middle of a 200 response instead.
	Drop bool
	// Delay holds the answer back that long first; with no Status and no
	// Drop, the request is then answered as usual: a slow Calendar.
	Delay time.Duration
	// Plain answers Status with a text body instead of Google's error
	// JSON, as a server that lacks the method does (a proxy, or another
	// emulator, at GOOGLE_API_ENDPOINT: Go's http.NotFound answers "404
	// page not found" as text/plain).
	Plain bool
}

// delayOnly reports whether f only slows the request down.
func (f Fault) delayOnly() bool { return f.Status == 0 && !f.Drop }

// QuotaProjectMessage is what the Calendar API answers user credentials
// that name no quota project (see Server.RequireUserProject).
const QuotaProjectMessage = "Your application is authenticating by using local Application Default Credentials. " +
	"The calendar-json.googleapis.com API requires a quota project, which is not set by default. " +
	"To learn how to set your quota project, see https://cloud.google.com/docs/authentication/adc-troubleshooting/user-creds ."

// wait holds a response back for d, unless the client gives up first, and
// reports whether to answer.
func wait(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}

// Faults the Calendar API documents, answered as Google answers them.
var (
	// RateLimited is 429 Too Many Requests (rateLimitExceeded).
	RateLimited = Fault{Status: http.StatusTooManyRequests, Domain: "usageLimits", Reason: "rateLimitExceeded", Message: "Rate Limit Exceeded"}
	// RateLimited403 is 403 rateLimitExceeded.
	RateLimited403 = Fault{Status: http.StatusForbidden, Domain: "usageLimits", Reason: "rateLimitExceeded", Message: "Rate Limit Exceeded"}
	// UserRateLimited is 403 userRateLimitExceeded.
	UserRateLimited = Fault{Status: http.StatusForbidden, Domain: "usageLimits", Reason: "userRateLimitExceeded", Message: "User Rate Limit Exceeded"}
	// ServerError is 500 backendError.
	ServerError = Fault{Status: http.StatusInternalServerError, Domain: "global", Reason: "backendError", Message: "Backend Error"}
	// Unavailable is 503 backendError.
	Unavailable = Fault{Status: http.StatusServiceUnavailable, Domain: "global", Reason: "backendError", Message: "Backend Error"}
	// Forbidden is 403 forbidden.
	Forbidden = Fault{Status: http.StatusForbidden, Domain: "global", Reason: "forbidden", Message: "Forbidden"}
	// Unauthorized is 401 authError (invalid or expired credentials).
	Unauthorized = Fault{Status: http.StatusUnauthorized, Domain: "global", Reason: "authError", Message: "Invalid Credentials"}
	// Drop cuts the connection after the response headers.
	Drop = Fault{Drop: true}
)

// QueueFaults makes the next len(faults) events.list requests on calendarID
// fail, in order, before any other check.
func (s *Server) QueueFaults(calendarID string, faults ...Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults[calendarID] = append(s.faults[calendarID], faults...)
}

// nextFault pops the next queued fault of calendarID. s.mu must be held.
func (s *Server) nextFault(calendarID string) (Fault, bool) {
	q := s.faults[calendarID]
	if len(q) == 0 {
		return Fault{}, false
	}
	s.faults[calendarID] = q[1:]
	return q[0], true
}

// serveFault answers w with f.
func serveFault(w http.ResponseWriter, f Fault) {
	if f.Drop {
		dropConnection(w)
		return
	}
	if f.RetryAfter != "" {
		w.Header().Set("Retry-After", f.RetryAfter)
	}
	if f.Plain {
		http.Error(w, strconv.Itoa(f.Status)+" page not found", f.Status)
		return
	}
	writeError(w, f.Status, f.Domain, f.Reason, f.Message)
}

// dropConnection sends the start of a successful response and cuts the
// connection, so the client sees an unexpected EOF reading the body. A
// connection cut before any response would be retried silently by Go's
// transport on reused connections, making attempt counts unpredictable.
func dropConnection(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic("calendartest: response writer cannot hijack")
	}
	conn, buf, err := hj.Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	buf.WriteString("HTTP/1.1 200 OK\r\nContent-Type: application/json; charset=UTF-8\r\nContent-Length: 4096\r\n\r\n{\"kind\": \"calendar#events\", \"items\": [")
	buf.Flush()
}

// errorBody is Google's JSON error shape.
type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Code    int         `json:"code"`
	Message string      `json:"message"`
	Errors  []errorItem `json:"errors"`
}

type errorItem struct {
	Domain  string `json:"domain"`
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

// writeError answers with Google's error JSON.
func writeError(w http.ResponseWriter, status int, domain, reason, message string) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(errorBody{Error: errorDetail{
		Code:    status,
		Message: message,
		Errors:  []errorItem{{Domain: domain, Reason: reason, Message: message}},
	}})
}

// writeNotFound answers 404 notFound, as for an unknown or unshared calendar.
func writeNotFound(w http.ResponseWriter) {
	writeError(w, http.StatusNotFound, "global", "notFound", "Not Found")
}

// writeBadRequest answers 400 with a parameter problem.
func writeBadRequest(w http.ResponseWriter, reason, message string) {
	writeError(w, http.StatusBadRequest, "global", reason, message)
}
