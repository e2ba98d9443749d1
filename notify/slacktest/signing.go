package slacktest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"time"
)

// Sign sets the headers Slack puts on each request it sends to an app's
// request URLs (https://api.slack.com/authentication/verifying-requests-from-slack):
// X-Slack-Request-Timestamp, the Unix seconds of at, and X-Slack-Signature,
// "v0=" and the hex HMAC-SHA256 of "v0:<timestamp>:<body>" under the app's
// signing secret. Tests and the demo send slash commands, interactions and
// events to the bot this way.
func Sign(h http.Header, body []byte, signingSecret string, at time.Time) {
	stamp := strconv.FormatInt(at.Unix(), 10)
	mac := hmac.New(sha256.New, []byte(signingSecret))
	mac.Write([]byte("v0:" + stamp + ":"))
	mac.Write(body)
	h.Set("X-Slack-Request-Timestamp", stamp)
	h.Set("X-Slack-Signature", "v0="+hex.EncodeToString(mac.Sum(nil)))
}
