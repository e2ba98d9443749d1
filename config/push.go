package config

import (
	"net/url"
	"strings"
	"time"
)

// Calendar push notifications: PUBLIC_URL turns them on, and
// CALENDAR_RESYNC_INTERVAL says how often every calendar is synced anyway.

const (
	// DefaultResyncPush is CALENDAR_RESYNC_INTERVAL's default with
	// PUBLIC_URL set: the safety resync of a calendar whose push channel is
	// live. Google calls notifications "not 100% reliable", and a lost one
	// delays a change by at most this (less when a reminder of the
	// calendar falls due first: its check syncs the calendar). A calendar
	// without a live channel is resynced every 5 minutes, or this if
	// shorter (mirror.DefaultUnwatched).
	DefaultResyncPush = 30 * time.Minute
	// MaxResync bounds CALENDAR_RESYNC_INTERVAL: a lost notification must
	// not delay a change for long.
	MaxResync = time.Hour
	// NotifyPath is where Google posts notifications, under PUBLIC_URL, on
	// HTTP_ADDR.
	NotifyPath = "/google/notify"
	// examplePublicURL is PUBLIC_URL's example.
	examplePublicURL = "https://meetingbot.fly.dev"
)

// NotifyURL is the address of the push channels: PUBLIC_URL +
// "/google/notify"; "" when push is off.
func (c Config) NotifyURL() string {
	if c.PublicURL == "" {
		return ""
	}
	return c.PublicURL + NotifyPath
}

// publicURL reads PUBLIC_URL: an https base URL, without a trailing slash.
func (p *parser) publicURL(name string) string {
	v := p.get(name)
	if v == "" {
		return ""
	}
	u, err := url.Parse(v)
	switch {
	case err != nil:
		p.bad(name, v, "not a URL, e.g. "+name+"="+examplePublicURL)
		return ""
	case u.Scheme == "http":
		p.bad(name, v, "must be https: Google posts Calendar notifications to https URLs only (with a valid certificate), e.g. "+name+"="+examplePublicURL)
		return ""
	case u.Scheme != "https" || u.Host == "":
		p.bad(name, v, "must be an absolute https URL that reaches HTTP_ADDR, e.g. "+name+"="+examplePublicURL)
		return ""
	case u.RawQuery != "" || u.Fragment != "" || u.User != nil:
		p.bad(name, v, "must be a base URL without query, fragment or user info, e.g. "+name+"="+examplePublicURL)
		return ""
	case publicURLMistake(name, v, u.Path) != "":
		p.bad(name, v, publicURLMistake(name, v, u.Path))
		return ""
	}
	return strings.TrimSuffix(v, "/")
}

// resync reads CALENDAR_RESYNC_INTERVAL; its default is DefaultResyncPush
// with push on, tick without.
func (p *parser) resync(name string, push bool, tick time.Duration) time.Duration {
	v := p.get(name)
	if v == "" {
		if push {
			return DefaultResyncPush
		}
		return tick
	}
	return p.duration(name, v, "5m", MaxResync, "must be at most 1h, or a lost notification delays a change too long")
}
