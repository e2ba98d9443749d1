package config

import (
	"strconv"
	"strings"
	"time"
)

// Slack's workspace-wide posting budget: chat.postMessage's reference
// (https://docs.slack.dev/reference/methods/chat.postMessage) allows an
// app about a post a second per channel and, for the whole workspace,
// "several hundred messages per minute", without a figure. The bot paces
// every post to SLACK_POSTS_PER_MINUTE, learns a lower one from Slack's
// 429s, and posts a crowd of reminders due together ahead of their
// triggers, up to REMINDER_EARLY_MAX, when the budget cannot pass them by
// their triggers (see docs/operations.md, Slack's posting budget).

const (
	// DefaultPostsPerMinute is SLACK_POSTS_PER_MINUTE's default: the low
	// reading of "several hundred".
	DefaultPostsPerMinute = 300
	// maxPostsPerMinute bounds it, as maxQuota the Calendar's.
	maxPostsPerMinute = 100_000
	// DefaultEarlyMax is REMINDER_EARLY_MAX's default: with it a
	// reminder goes at most a quarter of its offset ahead up to 20
	// minutes' offset, and never more than 5 minutes.
	DefaultEarlyMax = 5 * time.Minute
	// maxEarly bounds it: an hour ahead is no longer the reminder asked
	// for.
	maxEarly = time.Hour
)

// posting reads SLACK_POSTS_PER_MINUTE and REMINDER_EARLY_MAX into c.
func (p *parser) posting(c *Config) {
	c.SlackPostsPerMinute = p.postsPerMinute("SLACK_POSTS_PER_MINUTE")
	c.EarlyMax = p.earlyMax("REMINDER_EARLY_MAX")
}

// postsPerMinute reads posts a minute: a whole number from 0 (no
// workspace pacing) to maxPostsPerMinute.
func (p *parser) postsPerMinute(name string) int {
	v := p.get(name)
	if v == "" {
		return DefaultPostsPerMinute
	}
	n, err := strconv.Atoi(strings.ReplaceAll(v, "_", ""))
	switch {
	case err != nil:
		p.bad(name, v, "not a whole number of posts a minute, e.g. "+name+"=300 (0 turns the workspace-wide pacing off)")
	case n < 0:
		p.bad(name, v, "must be 0 (off) or more posts a minute, e.g. "+name+"=300")
	case n > maxPostsPerMinute:
		p.bad(name, v, "must be at most 100000 posts a minute (is a zero too many?), e.g. "+name+"=300")
	default:
		return n
	}
	return DefaultPostsPerMinute
}

// earlyMax reads a duration from 0 (never ahead) to maxEarly, in whole
// seconds.
func (p *parser) earlyMax(name string) time.Duration {
	v := p.get(name)
	if v == "" {
		return DefaultEarlyMax
	}
	d, err := time.ParseDuration(v)
	switch {
	case v == "0":
		return 0
	case err != nil:
		p.bad(name, v, strings.TrimPrefix(durationMistake(v), "is ")+", e.g. "+name+"=5m (0: never ahead)")
	case d < 0 || d > maxEarly:
		p.bad(name, v, "must be from 0 (never ahead) to 1h, e.g. "+name+"=5m")
	case d%time.Second != 0:
		p.bad(name, v, "must be whole seconds, e.g. "+name+"=5m")
	default:
		return d
	}
	return DefaultEarlyMax
}
