// Package inprocess answers HTTP requests with a handler in the calling
// goroutine, without a socket: the emulators' transport inside a
// testing/synctest bubble, whose fake clock moves only while every
// goroutine of the bubble waits on something of the bubble (a socket is
// not).
package inprocess

import (
	"net/http"
	"net/http/httptest"
)

// Transport is an http.RoundTripper that answers each request with
// Handler, in the calling goroutine: the request the handler sees is the
// client's, as a server would read it, with the client's context, so that
// a client giving up ends a wait in the handler.
type Transport struct{ Handler http.Handler }

// RoundTrip serves req with t.Handler and returns what it wrote; when the
// client gave up meanwhile, its context's error instead.
func (t Transport) RoundTrip(req *http.Request) (*http.Response, error) {
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
	t.Handler.ServeHTTP(rec, in)
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
