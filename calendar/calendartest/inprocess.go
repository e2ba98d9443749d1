package calendartest

import (
	"net/http"
)

// InProcessURL is the base URL of a server from NewInProcess. Its host is
// under .invalid, which RFC 2606 reserves so that no name under it ever
// resolves: only the server's Client reaches it.
const InProcessURL = "https://calendartest.invalid"

// NewInProcess returns a server that does not listen: its Client hands each
// request to Handler in the calling goroutine, and its URLs start with
// InProcessURL. It is for code that cannot use a socket, such as a test
// inside a testing/synctest bubble, whose fake clock moves only while
// every goroutine of the bubble waits on something of the bubble (a socket
// is not): create the server inside the bubble, and its latency
// (SetLatency) is then the bubble's fake time. Notifications go out with
// the client SetNotifyClient gives. Close it when done.
func NewInProcess() *Server {
	s := newServer()
	s.base = InProcessURL
	return s
}

// Handler returns the handler of every path the server answers, the one a
// listening server serves.
func (s *Server) Handler() http.Handler { return s.mux }
