package slacktest

import (
	"maps"
	"math"
	"net/http"
	"slices"
	"strconv"
	"time"
)

// Slack's rate limit tiers, as its rate limits guide
// (https://docs.slack.dev/apis/web-api/rate-limits) lists them: "applied
// on a "per API method per workspace/team per app" basis"; Tier 1 "1+ per
// minute", Tier 2 "20+ per minute", Tier 3 "50+ per minute", Tier 4 "100+
// per minute". A request past its method's limit is answered "HTTP 429
// Too Many Requests" with a Retry-After header of the seconds to wait.
// The emulator holds each method to its tier's floor in any 60 seconds of
// its clock (SetClock), for every token of the app alike: a workspace
// promises no more.
const (
	tier1 = 1
	tier2 = 20
	tier3 = 50
	tier4 = 100
)

// tierLimits is the tier of every Web API method the bot calls, each as
// the method's reference page gives it under "Rate limits"
// (https://docs.slack.dev/reference/methods/<method>), in requests per
// minute.
var tierLimits = map[string]int{
	// https://docs.slack.dev/reference/methods/auth.revoke: Tier 3.
	"auth.revoke": tier3,
	// https://docs.slack.dev/reference/methods/bots.info: Tier 3.
	"bots.info": tier3,
	// https://docs.slack.dev/reference/methods/chat.postEphemeral: Tier 4.
	"chat.postEphemeral": tier4,
	// https://docs.slack.dev/reference/methods/chat.update: Tier 3.
	"chat.update": tier3,
	// https://docs.slack.dev/reference/methods/conversations.history:
	// Tier 3 (for internal and Marketplace apps; the 1-a-minute limit of
	// other commercially distributed apps, changelog 2025-05-29, is not
	// ours: docs/setup.md says not to distribute the app).
	"conversations.history": tier3,
	// https://docs.slack.dev/reference/methods/conversations.info: Tier 3.
	"conversations.info": tier3,
	// https://docs.slack.dev/reference/methods/conversations.list: Tier 2.
	"conversations.list": tier2,
	// https://docs.slack.dev/reference/methods/conversations.open: Tier 3.
	"conversations.open": tier3,
	// https://docs.slack.dev/reference/methods/oauth.v2.access: Tier 4.
	"oauth.v2.access": tier4,
	// https://docs.slack.dev/reference/methods/users.info: Tier 4.
	"users.info": tier4,
	// https://docs.slack.dev/reference/methods/users.lookupByEmail: Tier 3.
	"users.lookupByEmail": tier3,
	// https://docs.slack.dev/reference/methods/users.profile.get: Tier 4.
	"users.profile.get": tier4,
	// https://docs.slack.dev/reference/methods/users.profile.set: Tier 3.
	"users.profile.set": tier3,
	// https://docs.slack.dev/reference/methods/views.publish: Tier 4.
	"views.publish": tier4,
}

// untiered are the methods the bot calls that no tier above holds, and
// why.
var untiered = map[string]string{
	// https://docs.slack.dev/reference/methods/auth.test: "Special rate
	// limits apply": "This method allows hundreds of requests per minute."
	"auth.test": "special: hundreds of requests a minute",
	// https://docs.slack.dev/reference/methods/chat.postMessage: "Special
	// rate limits apply": "1 message per second per channel", with short
	// bursts allowed, and a workspace-wide budget; no tier.
	"chat.postMessage": "special: about one a second per channel",
	// https://docs.slack.dev/reference/methods/apps.connections.open:
	// Tier 1, of which the guide says "A small amount of burst behavior
	// is tolerated" without saying how much; Slack itself asks a Socket
	// Mode app to open a new connection ("refresh_requested") and the
	// emulator does not refuse the one it asked for.
	"apps.connections.open": "Tier 1, its burst undocumented",
}

// untieredCalls returns the methods called on servers that neither
// tierLimits nor untiered lists, sorted.
func untieredCalls(servers []*Server) []string {
	seen := map[string]bool{}
	for _, s := range servers {
		for _, c := range s.Calls() {
			_, tiered := tierLimits[c.Method]
			_, special := untiered[c.Method]
			if !tiered && !special {
				seen[c.Method] = true
			}
		}
	}
	return slices.Sorted(maps.Keys(seen))
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
