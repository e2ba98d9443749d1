package selfservice

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Bounds of what Slack's request URLs accept.
const (
	// MaxBody is the largest request body read, well above Slack's
	// payloads (a block_actions payload with a full Home tab view is
	// under 40 KiB).
	MaxBody = 64 << 10
	// MaxSkew is how far a request's timestamp may be from the clock.
	MaxSkew = 5 * time.Minute
	// maxRemembered bounds the signatures kept against replays.
	maxRemembered = 100_000
)

// Reasons a request is refused, logged and answered with 401.
var (
	errUnsigned     = errors.New("missing X-Slack-Signature or X-Slack-Request-Timestamp")
	errStale        = errors.New("X-Slack-Request-Timestamp is more than 5 minutes from the clock")
	errBadSignature = errors.New("X-Slack-Signature does not match the body")
	errReplayed     = errors.New("this signed request was already received")
)

// verifier checks Slack's v0 request signatures
// (https://api.slack.com/authentication/verifying-requests-from-slack):
// HMAC-SHA256 of "v0:" + timestamp + ":" + body under the signing secret,
// the timestamp within MaxSkew of the clock. A valid request seen before
// is refused too, so that a captured request cannot be replayed within the
// window either.
type verifier struct {
	secret []byte
	now    func() time.Time

	mu    sync.Mutex
	seen  map[string]bool
	order []remembered // by arrival, to forget them once stale
}

type remembered struct {
	sig string
	at  time.Time
}

// check returns nil if body with header h is a fresh request signed by
// Slack; it reads nothing but the two headers and the raw body.
func (v *verifier) check(h http.Header, body []byte) error {
	stamp, sig := h.Get("X-Slack-Request-Timestamp"), h.Get("X-Slack-Signature")
	if stamp == "" || sig == "" {
		return errUnsigned
	}
	secs, err := strconv.ParseInt(stamp, 10, 64)
	if err != nil {
		return errUnsigned
	}
	now, at := v.now(), time.Unix(secs, 0)
	if d := now.Sub(at); d > MaxSkew || d < -MaxSkew {
		return errStale
	}
	got, err := hex.DecodeString(strings.TrimPrefix(sig, "v0="))
	if err != nil || !strings.HasPrefix(sig, "v0=") {
		return errBadSignature
	}
	mac := hmac.New(sha256.New, v.secret)
	mac.Write([]byte("v0:" + stamp + ":"))
	mac.Write(body)
	if !hmac.Equal(mac.Sum(nil), got) {
		return errBadSignature
	}
	return v.remember(sig, at, now)
}

// remember records a valid signature, refusing one already recorded.
func (v *verifier) remember(sig string, at, now time.Time) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	for len(v.order) > 0 && (now.Sub(v.order[0].at) > MaxSkew || len(v.order) >= maxRemembered) {
		delete(v.seen, v.order[0].sig)
		v.order = v.order[1:]
	}
	if v.seen[sig] {
		return errReplayed
	}
	v.seen[sig] = true
	v.order = append(v.order, remembered{sig: sig, at: at})
	return nil
}
