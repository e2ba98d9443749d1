package slacktest

import (
	"fmt"
	"io"
	"net/http"
	"time"
)

// Fault makes one call fail. Exactly one of Status and Error is usually set:
// Status 429 answers "ratelimited" with a Retry-After header of RetryAfter
// seconds; any other Status answers that HTTP status with an HTML body, as
// Slack's edge does; Error answers HTTP 200 {"ok":false,"error":Error}.
// A call failed by Status or Error has no effect (no message is stored)
// unless Applied is set.
//
// Delay holds the response back: with no Status or Error the call still takes
// effect at once (a message is stored) and only the answer is late, which is
// what a client sees when Slack accepted a message but the response was lost.
type Fault struct {
	Status     int
	RetryAfter int
	Error      string
	Delay      time.Duration
	// Applied makes a Status or Error fault take effect first: Slack's edge
	// answered 5xx after the backend had stored the message.
	Applied bool
	// Drop makes the call take effect and then closes the connection
	// without an answer (after Delay): the client sees the connection
	// reset or an unexpected EOF. Status and Error are ignored.
	Drop bool
	// Body, when set, makes the call take effect and answers HTTP 200 with
	// Body verbatim instead of the method's answer, e.g. `{"ok":true}`
	// without the channel and ts a client needs. Status and Error are
	// ignored.
	Body string
}

// effective reports whether a call with fault f still does its work.
func (f Fault) effective() bool {
	return f.Drop || f.Body != "" || f.Applied || (f.Status == 0 && f.Error == "")
}

type queuedFault struct {
	method, channel string
	fault           Fault
}

// Fail queues faults for the next calls of method (e.g. "chat.postMessage").
// A non-empty channel limits them to calls for that channel ID. Faults are
// used in order, one per matching call.
func (s *Server) Fail(method, channel string, faults ...Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range faults {
		s.faults = append(s.faults, queuedFault{method: method, channel: channel, fault: f})
	}
}

// takeFault removes and returns the first queued fault matching the call.
func (s *Server) takeFault(method, channel string) (Fault, bool) {
	for i, q := range s.faults {
		if q.method == method && (q.channel == "" || q.channel == channel) {
			s.faults = append(s.faults[:i], s.faults[i+1:]...)
			return q.fault, true
		}
	}
	return Fault{}, false
}

func writeFault(w http.ResponseWriter, f Fault) {
	switch {
	case f.Drop:
		// Hijacking takes the connection from the server: closing it
		// sends no status line at all.
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				conn.Close()
				return
			}
		}
		panic(http.ErrAbortHandler) // the server drops the connection
	case f.Body != "":
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, f.Body)
	case f.Status == http.StatusTooManyRequests:
		w.Header().Set("Retry-After", fmt.Sprint(f.RetryAfter))
		writeJSON(w, response{status: f.Status, body: map[string]any{"ok": false, "error": "ratelimited"}})
	case f.Status != 0:
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(f.Status)
		fmt.Fprintf(w, "<html><body><h1>%d %s</h1></body></html>\n", f.Status, http.StatusText(f.Status))
	default:
		writeJSON(w, slackErr(f.Error))
	}
}

// wait sleeps for d unless the client gives up or the server closes first,
// and reports whether the response should still be written.
func (s *Server) wait(r *http.Request, d time.Duration) bool {
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
	case <-s.done:
		return false
	}
}
