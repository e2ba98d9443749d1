package calendartest

import (
	"net/http"
	"time"
)

// Names of the Calendar API methods the server answers, as RequestsTo
// counts them.
const (
	MethodList = "events.list"
	MethodGet  = "events.get"
	// MethodPatch is events.patch (patch.go).
	MethodPatch = "events.patch"
)

// SetLatency makes every Calendar API request (events.list, events.get,
// events.watch, channels.stop) wait d before it is answered, as a distant server would; 0, the default,
// answers at once. Requests wait concurrently, never behind each other,
// and a request whose client gives up while it waits gets no answer. The
// token endpoint is not delayed. The latency applies to requests that
// arrive after the call.
func (s *Server) SetLatency(d time.Duration) {
	s.latency.Store(int64(max(d, 0)))
}

// RequestsTo returns how many requests of method (MethodList, MethodGet,
// MethodWatch, MethodStop) the server received, on every calendar, including those answered with
// an injected fault or an error.
func (s *Server) RequestsTo(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.methodCounts[method]
}

// api wraps the handler of one API method: it counts the request, refuses
// it when it is over the Quota (SetQuota), then waits out the latency
// without holding the server's lock, and answers 503 during an outage
// (SetOutage).
func (s *Server) api(method string, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.methodCounts[method]++
		down := s.down(s.push.now())
		var f Fault
		over := false
		if !down {
			f, over = s.overQuota(r)
		}
		s.mu.Unlock()
		if over {
			serveFault(w, f)
			return
		}
		if d := time.Duration(s.latency.Load()); d > 0 {
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-r.Context().Done():
				t.Stop()
				return
			}
		}
		if down {
			serveFault(w, outageFault)
			return
		}
		h(w, r)
	}
}
