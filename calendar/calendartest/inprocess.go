package calendartest

import (
	"net/http"
	"net/http/httptest"
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
