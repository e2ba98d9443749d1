package slacktest

import (
	"math"
	"net/http"
	"strconv"
	"time"
)

// Slack's rate limit tiers, as its rate limits guide
// (https://docs.slack.dev/apis/web-api/rate-limits) lists them: "applied
// on a "per API method per workspace/team per app" basis", Tier 2 being
// "20+ per minute. Most methods allow at least 20 requests per minute,
// while allowing for occasional bursts of more requests". A request past
// its method's limit is answered "HTTP 429 Too Many Requests" with a
// Retry-After header of the seconds to wait. The emulator holds a method
// of Tier 2 to 20 requests in any 60 seconds of its clock (SetClock); the
// methods the bot calls in bulk each have the tier their reference pages
// give: conversations.list is Tier 2.
var tierLimits = map[string]int{
	"conversations.list": 20,
}

// tierWindow is the span a tier's limit counts requests over.
const tierWindow = time.Minute

// overTier reports whether a request of method now passes its tier's
// limit, and if so how many seconds Slack would ask to wait; otherwise it
// counts the request. s.mu must be held.
func (s *Server) overTier(method string, now time.Time) (retryAfter int, over bool) {
	limit, ok := tierLimits[method]
	if !ok {
		return 0, false
	}
	if s.tierCalls == nil {
		s.tierCalls = map[string][]time.Time{}
	}
	recent := s.tierCalls[method][:0]
	for _, at := range s.tierCalls[method] {
		if now.Sub(at) < tierWindow {
			recent = append(recent, at)
		}
	}
	s.tierCalls[method] = recent
	if len(recent) >= limit {
		wait := recent[0].Add(tierWindow).Sub(now)
		return int(math.Ceil(wait.Seconds())), true
	}
	s.tierCalls[method] = append(recent, now)
	return 0, false
}

// writeRateLimited answers as Slack does a request past its tier.
func writeRateLimited(w http.ResponseWriter, retryAfter int) {
	w.Header().Set("Retry-After", strconv.Itoa(max(retryAfter, 1)))
	writeJSON(w, response{status: http.StatusTooManyRequests, body: map[string]any{"ok": false, "error": "ratelimited"}})
}
