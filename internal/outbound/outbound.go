// Package outbound makes the HTTP clients the bot calls Slack and Google
// with. Such a client never follows a redirect to another host, which
// would replay a bot token or an access token there (a 307 keeps the
// method, the form and, through oauth2, the Authorization header), and
// never reads more than MaxResponse bytes of an answer: no API answer the
// bot needs comes near that, and an endless one must not exhaust memory.
package outbound

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
)

// MaxResponse bounds the body of any answer the bot reads: 16 MiB.
const MaxResponse = 16 << 20

// IdleConnsPerHost is how many idle connections to one host the clients
// keep for the next call. The standard library keeps 2, so with more calls
// in flight than that (the scheduler has up to 64 Calendar reads and 256
// Slack sends), most calls opened a connection, over TLS with a handshake,
// and closed it after one answer.
const IdleConnsPerHost = 64

// transport is the clients' shared transport when their base has none:
// http.DefaultTransport's settings, keeping IdleConnsPerHost.
var transport = sync.OnceValue(func() http.RoundTripper {
	def, ok := http.DefaultTransport.(*http.Transport)
	if !ok {
		return http.DefaultTransport
	}
	t := def.Clone()
	t.MaxIdleConnsPerHost = IdleConnsPerHost
	t.MaxIdleConns = max(t.MaxIdleConns, 4*IdleConnsPerHost)
	return t
})

// ErrTooLarge is the error of reading an answer longer than MaxResponse.
var ErrTooLarge = errors.New("response larger than 16 MiB")

// ErrRedirect is the error of a redirect to another host, or from https
// to http, which a client does not follow.
var ErrRedirect = errors.New("redirect to another host refused")

// refusal wraps ErrTooLarge and ErrRedirect with the host involved. A
// refused redirect is permanent (meetingbot.IsPermanent): the endpoint
// will answer the same until an operator fixes the base URL. An answer
// too large is not: a read may have done its work, and a later one may be
// smaller.
type refusal struct {
	err    error
	detail string
}

func (e *refusal) Error() string   { return "outbound: " + e.err.Error() + ": " + e.detail }
func (e *refusal) Unwrap() error   { return e.err }
func (e *refusal) Permanent() bool { return e.err == ErrRedirect }

// Client returns a copy of base (a new client if nil) whose transport
// stops reading an answer after MaxResponse bytes and which follows a
// redirect only to the same scheme and host. base's own CheckRedirect, if
// any, still applies after that. Without a transport of base's, the
// client shares one with the others that keeps IdleConnsPerHost
// connections to each host.
func Client(base *http.Client) *http.Client {
	c := &http.Client{}
	if base != nil {
		*c = *base
	}
	rt := c.Transport
	if rt == nil {
		rt = transport()
	}
	if _, ok := rt.(limited); !ok {
		c.Transport = limited{rt}
	}
	next := c.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if err := CheckRedirect(req, via); err != nil {
			return err
		}
		if next != nil {
			return next(req, via)
		}
		return nil
	}
	return c
}

// CheckRedirect is an http.Client's CheckRedirect that refuses a redirect
// to another host or port, or from https to http, and stops after 10
// redirects as the default policy does.
func CheckRedirect(req *http.Request, via []*http.Request) error {
	first := via[0].URL
	if !strings.EqualFold(req.URL.Host, first.Host) || (first.Scheme == "https" && req.URL.Scheme != "https") {
		return &refusal{ErrRedirect, fmt.Sprintf("%s answered with a redirect to %s://%s; point the base URL at the API itself", first.Host, req.URL.Scheme, req.URL.Host)}
	}
	if len(via) >= 10 {
		return errors.New("outbound: stopped after 10 redirects")
	}
	return nil
}

// limited is a RoundTripper whose answers end with an error after
// MaxResponse bytes.
type limited struct{ base http.RoundTripper }

func (t limited) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if resp.ContentLength > MaxResponse {
		resp.Body.Close()
		return nil, &refusal{ErrTooLarge, fmt.Sprintf("%s announced %d bytes", req.URL.Host, resp.ContentLength)}
	}
	resp.Body = &capped{body: resp.Body, left: MaxResponse, host: req.URL.Host}
	return resp, nil
}

// capped reads at most left more bytes of body, then fails with
// ErrTooLarge if anything follows.
type capped struct {
	body io.ReadCloser
	left int64
	host string
}

func (c *capped) Read(p []byte) (int, error) {
	if c.left <= 0 {
		// At the limit: the answer is fine only if it ends here.
		var one [1]byte
		n, err := c.body.Read(one[:])
		if n > 0 {
			return 0, &refusal{ErrTooLarge, "from " + c.host}
		}
		return 0, err
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.body.Read(p)
	c.left -= int64(n)
	return n, err
}

func (c *capped) Close() error { return c.body.Close() }

// Loopback reports whether host (a URL's host name, without port) is this
// machine: localhost, an address in 127.0.0.0/8, or ::1. Plain http is
// safe only to such a host.
func Loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}
