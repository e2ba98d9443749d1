// Package action holds what the bot's Slack messages carry for a click to
// name: the action IDs of their buttons and menus, the block IDs a click
// rewrites, and the values a button carries, as JSON Slack hands back
// verbatim. Package notify puts them on messages and package selfservice
// reads them off clicks, so the two agree here; nothing else needs Slack's
// wire formats, and this package imports only the root's words.
package action

import (
	"encoding/json"
	"unicode/utf8"
)

// Bounds Slack puts on what a control carries (Block Kit reference:
// button element, option object).
const (
	// MaxButtonValue is Slack's limit on a button's value: 2,000
	// characters.
	MaxButtonValue = 2000
	// MaxOptionValue is Slack's limit on an option's value: 150
	// characters.
	MaxOptionValue = 150
)

// fits reports whether b, a value's JSON, has at most n characters.
func fits(b []byte, n int) bool { return utf8.RuneCount(b) <= n }

// marshal is json.Marshal of a value of this package, which cannot fail.
func marshal(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// clipRunes cuts s to n characters, the last being "…" when it was cut.
func clipRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
