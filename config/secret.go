package config

import "regexp"

// secretVars hold secrets: their values are never shown, so they need no
// guard against one pasted there.
var secretVars = map[string]bool{
	"SLACK_BOT_TOKEN":          true,
	"GOOGLE_CREDENTIALS_JSON":  true,
	"SLACK_SIGNING_SECRET":     true,
	"SLACK_APP_TOKEN":          true,
	"DATABASE_URL":             true,
	"GOOGLE_OAUTH_CLIENT_JSON": true,
	"TOKEN_ENCRYPTION_KEY":     true,
	"SLACK_CLIENT_SECRET":      true,
}

// Signs that a value is a secret: a JSON document (a credentials file's
// content), a PEM block (a private key), a Slack token, a Google access
// token, or a long blob that does not end an email's local part (a group
// calendar's ID is 64 hex digits before "@"): 32 or more hex digits, or 32
// or more base64 characters as random as a key's (see random). Slashes
// split runs, so that paths are not blobs.
var (
	secretMarker = regexp.MustCompile(`\{|-----BEGIN|\bxox[a-z]-|\bxapp-|\bya29\.`)
	base64Run    = regexp.MustCompile(`[A-Za-z0-9+=_-]{32,}`)
	hexRun       = regexp.MustCompile(`[0-9A-Fa-f]{32,}`)
)

// random reports whether a run of base64 characters reads like random
// bytes rather than words: at least three upper and three lower case
// letters and a digit, and a change between those classes at least every
// other character, as in a key. "TestParseProblems3849438321" or any
// CamelCase name changes class far less often.
func random(s string) bool {
	class := func(c byte) int {
		switch {
		case c >= 'A' && c <= 'Z':
			return 1
		case c >= 'a' && c <= 'z':
			return 2
		case c >= '0' && c <= '9':
			return 3
		}
		return 0
	}
	var counts [4]int
	changes := 0
	for i := 0; i < len(s); i++ {
		counts[class(s[i])]++
		if i > 0 && class(s[i]) != class(s[i-1]) {
			changes++
		}
	}
	return counts[1] >= 3 && counts[2] >= 3 && counts[3] >= 1 && changes*2 >= len(s)
}

// looksSecret reports whether v looks like a key, a token or credentials.
func looksSecret(v string) bool {
	if secretMarker.MatchString(v) {
		return true
	}
	blob := func(re *regexp.Regexp, ok func(string) bool) bool {
		for _, loc := range re.FindAllStringIndex(v, -1) {
			if (loc[1] == len(v) || v[loc[1]] != '@') && ok(v[loc[0]:loc[1]]) {
				return true
			}
		}
		return false
	}
	return blob(base64Run, random) || blob(hexRun, func(string) bool { return true })
}

// examples gives a valid value of each variable that is not a secret, for
// problems that cannot quote the value given.
var examples = map[string]string{
	"SLACK_API_URL":                  DefaultSlackAPIURL,
	"GOOGLE_APPLICATION_CREDENTIALS": "/secrets/key.json",
	"GOOGLE_API_ENDPOINT":            DefaultGoogleEndpoint,
	"GOOGLE_IMPERSONATE":             "true",
	"CALENDARS":                      "alice@example.com,team@example.com=#eng",
	"REMINDER_OFFSETS":               "10m,1m",
	"TICK_INTERVAL":                  "30s",
	"JOIN_URL_HOSTS":                 "meet.jit.si",
	"SLACK_POSTS_PER_MINUTE":         "300",
	"REMINDER_EARLY_MAX":             "5m",
	"DATABASE_PATH":                  "/data/reminders.db",
	"HTTP_ADDR":                      DefaultHTTPAddr,
	"METRICS_ADDR":                   "127.0.0.1:9091",
	"LOG_LEVEL":                      "info",
	"LOG_FORMAT":                     "json",
	"SLACK_ADMINS":                   "U0123ABCD,U0456EFGH",
	"PUBLIC_URL":                     examplePublicURL,
	"CALENDAR_RESYNC_INTERVAL":       "5m",
	"SLACK_CLIENT_ID":                "1234567890.0987654321",

	// The Calendar quotas (quota.go).
	"CALENDAR_QUOTA_PER_MINUTE":          "10000",
	"CALENDAR_DAILY_REQUEST_THRESHOLD":   "1000000",
	"CALENDAR_QUOTA_PER_USER_PER_MINUTE": "600",
}

// secretProblem is the problem of a secret-looking value in variable name:
// it says what belongs there and where the secret goes, never the value.
func secretProblem(name string) Problem {
	if name == "GOOGLE_APPLICATION_CREDENTIALS" {
		return Problem{Var: name, Msg: `holds what looks like the key itself, not the path of a key file (the value is secret and not shown): ` +
			`set GOOGLE_CREDENTIALS_JSON="$(cat key.json)" for the content, or the path here, e.g. GOOGLE_APPLICATION_CREDENTIALS=/secrets/key.json`}
	}
	example := "see bot -h"
	if e, ok := examples[name]; ok {
		example = "e.g. " + name + "=" + e
	}
	return Problem{Var: name, Msg: "looks like a secret (a key, a token or credentials JSON), which does not belong here, and is not shown; " +
		"the Slack token goes in SLACK_BOT_TOKEN and Google credentials in GOOGLE_CREDENTIALS_JSON, " + example}
}
