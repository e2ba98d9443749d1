package config

import (
	"fmt"
	"path/filepath"
	"strings"
	"unicode"
)

// The first hour: values a newcomer writes that look almost right, each
// with the one-line message that says what they meant. parse.go asks here
// before its general checks, whose messages would point elsewhere.

// durationMistake words a value that is not a duration, as a predicate of
// the value ("… has no unit: …", "… is not a duration: …"): a bare number
// is told which unit it lacks.
func durationMistake(v string) string {
	if v != "" && strings.IndexFunc(v, func(r rune) bool { return !unicode.IsDigit(r) }) < 0 {
		return fmt.Sprintf("has no unit: write %ss for seconds or %sm for minutes", v, v)
	}
	return "is not a duration: write a number with a unit, like 30s or 10m"
}

// calendarsMistake returns what is wrong with a CALENDARS value as a whole,
// or "": entries separated by semicolons, or an email cut in two by a
// comma where its dot should be (alice@example,com).
func calendarsMistake(name, v string) string {
	if strings.Contains(v, ";") {
		var entries []string
		for e := range strings.FieldsFuncSeq(v, func(r rune) bool { return r == ';' || r == ',' }) {
			if e = strings.TrimSpace(e); e != "" {
				entries = append(entries, e)
			}
		}
		fixed := strings.Join(entries, ",")
		return fmt.Sprintf("entries are separated by commas, not semicolons, e.g. %s=%s", name, fixed)
	}
	entries := strings.Split(v, ",")
	for i := 1; i < len(entries); i++ {
		prev, cur := strings.TrimSpace(entries[i-1]), strings.TrimSpace(entries[i])
		at := strings.LastIndex(prev, "@")
		if at < 0 || strings.Contains(prev, "=") || strings.Contains(prev[at:], ".") || !domainLabels(cur) {
			continue
		}
		email := prev + "." + cur
		return fmt.Sprintf("%q then %q: a comma where the email's dot should be? e.g. %s=%s", prev, cur, name, email)
	}
	return ""
}

// domainLabels reports whether s could end an email's domain (com,
// co.uk): letters, digits and hyphens in dot-separated labels, no @ or =.
func domainLabels(s string) bool {
	if s == "" {
		return false
	}
	for label := range strings.SplitSeq(s, ".") {
		if label == "" || strings.IndexFunc(label, func(r rune) bool {
			return !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-')
		}) >= 0 {
			return false
		}
	}
	return true
}

// rotatingToken is told a bot token of an app with token rotation on:
// Slack then issues bot tokens (xoxe.xoxb-…) that expire after 12 hours
// and are renewed with a refresh token (xoxe-…), which the bot does not do
// (https://docs.slack.dev/authentication/using-token-rotation).
const rotatingToken = "is a rotating token (xoxe.…): the app has token rotation on, so Slack issues bot tokens that expire after 12 hours " +
	"and must be renewed with a refresh token, which this bot does not do; use an app without it (slack-app-manifest.yaml sets " +
	"token_rotation_enabled: false) and copy its Bot User OAuth Token (xoxb-…) from the OAuth & Permissions page"

// refreshToken is told a refresh token (xoxe-…) of an app with token
// rotation on.
const refreshToken = "is a refresh token (xoxe-…) of an app with token rotation on, not a bot token: " +
	"use an app without token rotation (slack-app-manifest.yaml sets token_rotation_enabled: false) and copy its Bot User OAuth Token (xoxb-…) from the OAuth & Permissions page"

// tokenMistake returns the message for a Slack token of the wrong kind it
// recognises, or "".
func tokenMistake(v string) string {
	switch {
	case strings.HasPrefix(v, "xoxe.xoxb-"), strings.HasPrefix(v, "xoxe.xoxp-"):
		return rotatingToken
	case strings.HasPrefix(v, "xoxe-"):
		return refreshToken
	}
	return ""
}

// tildeMistake returns the message for a path that starts with ~, which
// only a shell expands (not Docker, systemd, fly.toml, or a shell when the
// value is quoted), or "". home is $HOME, for the example.
func tildeMistake(name, v, home string) string {
	if !strings.HasPrefix(v, "~") {
		return ""
	}
	var example string
	switch rest := strings.TrimPrefix(v, "~"); {
	case (rest == "" || strings.HasPrefix(rest, "/")) && home != "":
		example = filepath.Join(home, rest)
	case rest == "" || strings.HasPrefix(rest, "/"):
		example = "/home/you" + rest
	default: // ~bob/…: bob's home
		example = "/home/" + rest
	}
	return fmt.Sprintf("starts with ~, which is not expanded here (only a shell expands it, and not in quotes, a Dockerfile, a systemd unit or fly.toml): write the whole path, e.g. %s=%s", name, example)
}

// botPaths are the paths the bot serves under PUBLIC_URL, which PUBLIC_URL
// itself must not end with.
var botPaths = []string{NotifyPath, "/healthz", "/metrics", "/slack/commands", "/slack/events", "/slack/interactivity"}

// publicURLMistake returns the message for a PUBLIC_URL that ends with a
// path the bot adds itself (…/google/notify would be doubled), or "".
func publicURLMistake(name, v, path string) string {
	path = strings.TrimSuffix(path, "/")
	for _, p := range botPaths {
		if strings.HasSuffix(path, p) {
			base := strings.TrimSuffix(strings.TrimSuffix(v, "/"), p)
			return fmt.Sprintf("ends with %s, which the bot adds itself (the channels would post to %s%s%s): PUBLIC_URL is the base URL, e.g. %s=%s",
				p, base, p, NotifyPath, name, base)
		}
	}
	return ""
}

// destinationMistake says what is wrong with a CALENDARS destination that
// is none of the four kinds, and what was probably meant: a channel name
// with capitals (#Eng), one without its # (eng), a person by @name, a
// channel ID in lower case. Slack's channel names are lower-case letters,
// digits, hyphens and underscores, at most 80
// (https://slack.com/help/articles/201402297-Create-a-channel).
func destinationMistake(dest string) string {
	const kinds = "a destination is a channel ID (C…, G…), #channel-name, a user ID (U…, W…) or an email"
	lower := strings.ToLower(dest)
	switch {
	case strings.HasPrefix(dest, "#") && channelName.MatchString(lower):
		return fmt.Sprintf("destination %q has capitals, and Slack's channel names are lower case: write %s", dest, lower)
	case strings.HasPrefix(dest, "#") && len(dest) > 81:
		return fmt.Sprintf("destination %q is longer than a Slack channel name (at most 80 characters after the #); %s", dest, kinds)
	case strings.HasPrefix(dest, "#"):
		return fmt.Sprintf("destination %q is not a Slack channel name, which has only lower-case letters, digits, - and _ (no spaces): write it as Slack shows it in the channel's header, or its ID (C…)", dest)
	case strings.HasPrefix(dest, "@"):
		return fmt.Sprintf("destination %q: @names are not accepted (a display name changes and two people may share it): write the person's email, or their user ID (U…, their profile's ⋮ > Copy member ID)", dest)
	case (channelID.MatchString(strings.ToUpper(dest)) || userID.MatchString(strings.ToUpper(dest))) && dest != strings.ToUpper(dest) &&
		strings.IndexFunc(dest, unicode.IsDigit) >= 0:
		return fmt.Sprintf("destination %q looks like a Slack ID in lower case; IDs are upper case: write %s", dest, strings.ToUpper(dest))
	case channelName.MatchString("#" + lower):
		return fmt.Sprintf("destination %q has no #: for the channel, write #%s (or its ID, C…); for a person, their email or user ID (U…)", dest, lower)
	}
	return fmt.Sprintf("destination %q is not one Slack knows: %s", dest, kinds)
}
