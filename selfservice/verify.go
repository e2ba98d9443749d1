package selfservice

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Bounds of what Slack's request URLs accept.
const (
	// MaxBody is the largest request body read on PathCommands and
	// PathEvents, well above what Slack sends there (a slash command's
	// text is at most a few KiB; an event is a few KiB).
	MaxBody = 64 << 10
	// MaxInteractionBody is the largest body read on PathInteractivity:
	// a block_actions payload carries the whole view it came from, and
	// Slack publishes no maximum; a Home tab of 100 blocks (Slack's most)
	// with long texts and values passes 64 KiB, URL-encoded. Like every
	// body it is read whole, within this bound, and verified before it
	// is parsed.
	MaxInteractionBody = 1 << 20
	// MaxSkew is how far a request's timestamp may be from the clock.
	MaxSkew = 5 * time.Minute
	// rememberFor is how long after its timestamp a verified signature is
	// remembered: the MaxSkew during which it would verify, and MaxSkew
	// more, so that a replica whose clock is up to MaxSkew behind the one
	// that took the request still finds it remembered while it would
	// take it as fresh.
	rememberFor = 2 * MaxSkew
)

// Reasons a request is refused, logged and answered with 401.
var (
	errUnsigned     = &refusal{RefusedUnsigned, "missing X-Slack-Signature or X-Slack-Request-Timestamp"}
	errStale        = &refusal{RefusedStale, "X-Slack-Request-Timestamp is more than 5 minutes from the clock"}
	errBadSignature = &refusal{RefusedSignature, "X-Slack-Signature does not match the body"}
	errReplayed     = &refusal{RefusedReplayed, "this signed request was already received"}
)

// errUnchecked is a request that could not be checked against the ones
// already taken (the store failed); it is answered 503, which Slack
// retries, and has no effect.
var errUnchecked = &refusal{RefusedUnchecked, "cannot check this request against those already received"}

// verifier checks Slack's v0 request signatures
// (https://api.slack.com/authentication/verifying-requests-from-slack):
// HMAC-SHA256 of "v0:" + timestamp + ":" + body under the signing secret,
// the timestamp within MaxSkew of the clock. A valid request seen before
// is refused too, so that a captured request cannot be replayed within the
// window either: what is remembered is the MAC that was verified, not the
// header's text (hex decodes the same in either case, so "v0=ABCD…"
// would otherwise pass as new after "v0=abcd…"), and it is remembered in
// the store, so that every replica on the database, and the bot after a
// restart, knows it.
type verifier struct {
	secret []byte
	now    func() time.Time
	seen   Store
}

// check returns nil if body with header h is a fresh request signed by
// Slack, not taken before; it reads nothing but the two headers and the
// raw body. A request it returns nil for is remembered as taken.
func (v *verifier) check(ctx context.Context, h http.Header, body []byte) error {
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
	want := mac.Sum(nil)
	if !hmac.Equal(want, got) {
		return errBadSignature
	}
	first, err := v.seen.Remember(ctx, "sig:"+hex.EncodeToString(want), now, at.Add(rememberFor))
	switch {
	case err != nil:
		return errors.Join(errUnchecked, err)
	case !first:
		return errReplayed
	}
	return nil
}
