package slacktest

import (
	"net/http"
	"net/http/httptest"
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
		return &http.Client{Transport: inProcess{s.mux}}
	}
	return s.srv.Client()
}

// inProcess is a RoundTripper that answers each request with a handler,
// in the calling goroutine: the request the handler sees is the client's,
// as a server would read it, with the client's context, so that a client
// giving up ends a wait in the handler.
type inProcess struct{ h http.Handler }

func (t inProcess) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	in := req.Clone(ctx)
	in.RequestURI = req.URL.RequestURI()
	in.RemoteAddr = "192.0.2.1:443" // TEST-NET-1 (RFC 5737)
	if in.Host == "" {
		in.Host = req.URL.Host
	}
	if in.Body == nil {
		in.Body = http.NoBody
	}
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, in)
	if req.Body != nil {
		req.Body.Close()
	}
	if err := ctx.Err(); err != nil {
		return nil, err // the client gave up: whatever was written is not its answer
	}
	resp := rec.Result()
	resp.Request = req
	return resp, nil
}
