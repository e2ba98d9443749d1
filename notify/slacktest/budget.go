package slacktest

import (
	"math"
	"time"
)

// PostingBudget is the workspace-wide limit Slack keeps on the messages an
// app posts, over and above the one a second per channel. The
// chat.postMessage reference (https://docs.slack.dev/reference/methods/chat.postMessage,
// "Rate limiting") says Slack "will generally allow an app to post 1
// message per second to a specific channel" and that "there are limits
// governing your app's relationship with the entire workspace above that,
// limiting posting to several hundred messages per minute"; the rate
// limits guide (https://docs.slack.dev/apis/web-api/rate-limits) files
// chat.postMessage under the "Special Tier" that keeps "a workspace-wide
// limit", allows "short bursts", and answers a call past a limit "HTTP 429
// Too Many Requests" with a Retry-After header of the seconds to wait.
//
// The emulator keeps it as a token bucket on its clock (SetClock): the
// bucket holds Burst posts and refills PerMinute a minute; a post that
// finds it empty is refused, takes no effect and spends nothing.
//
// What counts against it: chat.postMessage. chat.scheduleMessage's
// reference (https://docs.slack.dev/reference/methods/chat.scheduleMessage)
// sends its reader to chat.postMessage's for rate limiting, so a
// scheduled message is counted when it is handed over; the emulator does
// not serve that method. chat.update (Tier 3, "50+ per minute") and
// chat.postEphemeral (Tier 4, "100+ per minute") have tiers of their own
// on their reference pages, per method, and are not counted here.
type PostingBudget struct {
	// PerMinute is the posts the bucket regains a minute; 0 turns the
	// budget off.
	PerMinute int
	// Burst is how many posts the bucket holds: how many may go at once
	// after a quiet spell. 0 means PerMinute/10, at least 1.
	Burst int
}

// DefaultPostingBudget is the figure the emulator's users take for
// "several hundred messages per minute": 300 a minute, bursts of 30.
var DefaultPostingBudget = PostingBudget{PerMinute: 300, Burst: 30}

// budgeted are the methods that spend the posting budget.
var budgeted = map[string]bool{
	"chat.postMessage":     true,
	"chat.scheduleMessage": true,
}

// bucket is the state of a PostingBudget.
type bucket struct {
	budget  PostingBudget
	tokens  float64
	at      time.Time // when tokens was last brought up to date
	refused int
}

// SetPostingBudget enforces b from now on, starting with a full bucket;
// a zero PerMinute turns it off. The server starts without one.
func (s *Server) SetPostingBudget(b PostingBudget) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if b.PerMinute <= 0 {
		s.posting = nil
		return
	}
	if b.Burst <= 0 {
		b.Burst = max(1, b.PerMinute/10)
	}
	s.posting = &bucket{budget: b, tokens: float64(b.Burst), at: s.now()}
}

// PostingRefusals returns how many calls the posting budget has refused
// (answered 429) since it was set.
func (s *Server) PostingRefusals() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.posting == nil {
		return 0
	}
	return s.posting.refused
}

// overBudget reports whether a call of method at now finds the posting
// budget spent, and if so the whole seconds until it holds one post
// again; otherwise it spends one post. s.mu must be held.
func (s *Server) overBudget(method string, now time.Time) (retryAfter int, over bool) {
	b := s.posting
	if b == nil || !budgeted[method] {
		return 0, false
	}
	perSecond := float64(b.budget.PerMinute) / 60
	if now.After(b.at) {
		b.tokens = math.Min(float64(b.budget.Burst), b.tokens+now.Sub(b.at).Seconds()*perSecond)
		b.at = now
	}
	if b.tokens >= 1 {
		b.tokens--
		return 0, false
	}
	b.refused++
	return int(math.Ceil((1 - b.tokens) / perSecond)), true
}
