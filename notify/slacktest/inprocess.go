package slacktest

import (
	"net/http"

	"github.com/meetingbot/meetingbot/internal/inprocess"
)

// InProcessURL is the base URL of an emulator from NewInProcess: URL is
// InProcessURL + "/api/". Its host is under .invalid, which RFC 2606
// reserves so that no name under it ever resolves: only the emulator's
// Client reaches it.
const InProcessURL = "https://slacktest.invalid"

// NewInProcess returns an emulator that does not listen: its Client hands
// each request to Handler in the calling goroutine. It is for code that
// cannot use a socket, such as a test inside a testing/synctest bubble,
// whose fake clock moves only while every goroutine of the bubble waits on
// something of the bubble (a socket is not): create the emulator inside
// the bubble, and its latency (SetLatency) is then the bubble's fake time.
// Socket Mode needs a listening emulator. Close it when done.
func NewInProcess() *Server {
	s := newServer()
	s.base = InProcessURL
	return s
}

// Handler returns the handler of every path the emulator answers, the one
// a listening emulator serves.
func (s *Server) Handler() http.Handler { return s.mux }

// Client returns an HTTP client that reaches the emulator: for one from
// NewInProcess, one that hands it every request; else a plain client.
func (s *Server) Client() *http.Client {
	if s.srv == nil {
		return &http.Client{Transport: inprocess.Transport{Handler: s.mux}}
	}
	return s.srv.Client()
}
