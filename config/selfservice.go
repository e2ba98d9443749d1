package config

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The variables of self-service from Slack: SLACK_SIGNING_SECRET turns on
// Slack's request URLs on HTTP_ADDR, SLACK_APP_TOKEN Socket Mode, and
// SLACK_ADMINS names who may post any calendar in a channel.

// SelfService reports whether self-service from Slack is on: Slack's
// request URLs (SLACK_SIGNING_SECRET), Socket Mode (SLACK_APP_TOKEN), or
// both.
func (c Config) SelfService() bool { return c.SlackSigningSecret != "" || c.SlackAppToken != "" }

// selfServiceString describes the self-service settings for String,
// without the secrets.
func (c Config) selfServiceString() string {
	var on []string
	if c.SlackSigningSecret != "" {
		on = append(on, "request-urls")
	}
	if c.SlackAppToken != "" {
		on = append(on, "socket-mode")
	}
	if len(on) == 0 {
		return "selfservice=off"
	}
	return "selfservice=" + strings.Join(on, "+") + " slack_admins=[" + strings.Join(c.SlackAdmins, " ") + "]"
}

// Examples of the self-service variables, for the problems that cannot
// quote the value. The signing secret has the shape of Slack's: 32
// lower-case hex digits (Slack's documentation example,
// 8f742231b10e8888abcd99yyyzzz85a5, has letters no real one has).
const (
	exampleSigningSecret = "SLACK_SIGNING_SECRET=8f742231b10e8888abcd99edabd85ea5"
	exampleAppToken      = "SLACK_APP_TOKEN=xapp-1-A0123ABCD-1234-abcd"
	exampleAdmins        = "SLACK_ADMINS=U0123ABCD,U0456EFGH"
)

// signingSecretLen is the length of a Slack Signing Secret: 32 hex digits
// (the App Credentials of every app's Basic Information page).
const signingSecretLen = 32

// signingSecret reads SLACK_SIGNING_SECRET, the app's Signing Secret, which
// Slack's requests are verified with. Slack's are exactly 32 lower-case hex
// digits, so anything else is a wrong copy (a token, a cut or doubled
// paste, the Client Secret's neighbour): refused here rather than found
// later as every command answered 401. The value is never shown; its
// length is, which a fixed-length secret does not give away.
func (p *parser) signingSecret(name string) string {
	v := p.get(name)
	if v == "" {
		return ""
	}
	const where = "copy the Signing Secret from your app's Basic Information page (App Credentials), e.g. " + exampleSigningSecret
	switch {
	case strings.HasPrefix(v, "xox") || strings.HasPrefix(v, "xapp-"):
		p.add(name, "is a Slack token, not the Signing Secret (the value is secret and not shown): "+where)
	case strings.IndexFunc(v, unicode.IsSpace) >= 0:
		p.add(name, "must be the Signing Secret without spaces (the value is secret and not shown): "+where)
	default:
		if wrong := signingSecretMistake(v); wrong != "" {
			p.add(name, wrong+" (the value is secret and not shown): "+where)
			return ""
		}
		return v
	}
	return ""
}

// signingSecretMistake says what keeps v from being a Signing Secret, or
// "": its length, then characters that are not hex digits.
func signingSecretMistake(v string) string {
	notHex := strings.IndexFunc(v, func(r rune) bool { return !strings.ContainsRune("0123456789abcdef", r) }) >= 0
	upper := strings.ToLower(v) != v && strings.IndexFunc(strings.ToLower(v), func(r rune) bool { return !strings.ContainsRune("0123456789abcdef", r) }) < 0
	n := utf8.RuneCountInString(v)
	var what string
	switch {
	case n != signingSecretLen && notHex:
		what = fmt.Sprintf("has %d characters, some of them not hex digits", n)
	case n != signingSecretLen:
		what = fmt.Sprintf("has %d characters", n)
	case upper:
		what = "has upper-case letters, and Slack's are lower case"
	case notHex:
		what = "has characters that are not hex digits (0-9, a-f)"
	default:
		return ""
	}
	return fmt.Sprintf("must be the Signing Secret, %d hex digits (0-9, a-f), but %s", signingSecretLen, what)
}

// appToken reads SLACK_APP_TOKEN, an app-level token (xapp-…) with the
// connections:write scope, for Socket Mode. The bot token's check (token)
// takes only xoxb-; this one only xapp-. The value is never shown.
func (p *parser) appToken(name string) string {
	v := p.get(name)
	if v == "" {
		return ""
	}
	const where = "generate an app-level token with the scope connections:write on your app's Basic Information page (App-Level Tokens), e.g. " + exampleAppToken
	switch {
	case strings.IndexFunc(v, unicode.IsSpace) >= 0:
		p.add(name, "must be an app-level token without spaces (the value is secret and not shown): "+where)
	case strings.HasPrefix(v, "xoxb-"):
		p.add(name, "is a bot token (xoxb-…), which belongs in SLACK_BOT_TOKEN; Socket Mode needs an app-level token (xapp-…): "+where)
	case strings.HasPrefix(v, "xoxp-"):
		p.add(name, "is a user token (xoxp-…); Socket Mode needs an app-level token (xapp-…): "+where)
	case !strings.HasPrefix(v, "xapp-"):
		p.add(name, "must be an app-level token starting with xapp- (the value is secret and not shown): "+where)
	default:
		return v
	}
	return ""
}

// admins reads SLACK_ADMINS: Slack user IDs (U…, W…), comma-separated.
// An email is refused with where to find the ID, for an email can change
// hands and an ID cannot.
func (p *parser) admins(name string) []string {
	v := p.get(name)
	if v == "" {
		return nil
	}
	var out []string
	for part := range strings.SplitSeq(v, ",") {
		id := strings.TrimSpace(part)
		switch {
		case id == "":
			p.bad(name, v, "has an empty entry, e.g. "+exampleAdmins)
			return nil
		case email.MatchString(id):
			p.bad(name, v, "\""+id+"\" is an email; SLACK_ADMINS takes Slack user IDs (in Slack: the person's profile > ⋮ > Copy member ID), e.g. "+exampleAdmins)
			return nil
		case !userID.MatchString(id):
			p.bad(name, v, "\""+id+"\" is not a Slack user ID (U… or W…, from the person's profile > ⋮ > Copy member ID), e.g. "+exampleAdmins)
			return nil
		}
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// selfService reads the self-service variables into c and checks that
// they go together: SLACK_ADMINS means nothing without self-service.
func (p *parser) selfService(c *Config) {
	c.SlackSigningSecret = p.signingSecret("SLACK_SIGNING_SECRET")
	c.SlackAppToken = p.appToken("SLACK_APP_TOKEN")
	c.SlackAdmins = p.admins("SLACK_ADMINS")
	if p.set("SLACK_ADMINS") && !p.reported("SLACK_ADMINS") && !p.selfServiceSet() {
		p.add("SLACK_ADMINS", "is set, but self-service from Slack is off: set SLACK_SIGNING_SECRET (request URLs) or SLACK_APP_TOKEN (Socket Mode) too, e.g. "+exampleSigningSecret)
	}
}

// selfServiceSet reports whether either self-service variable has a
// value, valid or not.
func (p *parser) selfServiceSet() bool {
	return p.set("SLACK_SIGNING_SECRET") || p.set("SLACK_APP_TOKEN")
}
