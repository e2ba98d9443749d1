package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/internal/outbound"
)

// Bounds of the durations the bot accepts.
const (
	MinTickInterval = time.Second
	MaxTickInterval = 10 * time.Minute
	MaxOffset       = 7 * 24 * time.Hour
)

// parser collects problems while reading variables.
type parser struct {
	getenv   func(string) string
	problems []Problem
	hidden   map[string]bool // variables whose value looked secret
}

// get returns the trimmed value of name. A value that looks like a secret
// in a variable that is not one is reported once (secretProblem) and read
// as unset, so that nothing else quotes it.
func (p *parser) get(name string) string {
	v := strings.TrimSpace(p.getenv(name))
	if v == "" || secretVars[name] || !looksSecret(v) {
		return v
	}
	if !p.hidden[name] {
		if p.hidden == nil {
			p.hidden = map[string]bool{}
		}
		p.hidden[name] = true
		p.problems = append(p.problems, secretProblem(name))
	}
	return ""
}

// set reports whether name has a value, secret-looking or not.
func (p *parser) set(name string) bool { return strings.TrimSpace(p.getenv(name)) != "" }

// add records a problem without showing the value (missing, or secret).
func (p *parser) add(name, msg string) {
	p.problems = append(p.problems, Problem{Var: name, Msg: msg})
}

// bad records a problem with the value as given, unless the value looks
// like a secret: then the problem says so and shows nothing of it.
func (p *parser) bad(name, value, msg string) {
	if looksSecret(value) || looksSecret(msg) {
		if !p.hidden[name] {
			p.problems = append(p.problems, secretProblem(name))
		}
		return
	}
	p.problems = append(p.problems, Problem{Var: name, Value: value, Msg: msg})
}

func (p *parser) token(name string) string {
	v := p.get(name)
	if v == "" {
		return ""
	}
	// The value is secret: the messages say what kind of token it is, never
	// what it is.
	const copyBot = "copy the Bot User OAuth Token (xoxb-…) from your app's OAuth & Permissions page"
	example := ", e.g. " + name + "=xoxb-1234-5678-abcd"
	switch {
	case strings.IndexFunc(v, unicode.IsSpace) >= 0:
		p.add(name, "must be a Slack bot token without spaces (the value is secret and not shown): "+copyBot+example)
	case strings.HasPrefix(v, "xoxp-"):
		p.add(name, "is a user token (xoxp-…), which acts as the person who installed the app; the bot needs its own: "+copyBot+example)
	case strings.HasPrefix(v, "xapp-"):
		p.add(name, "is an app-level token (xapp-…), which cannot post messages: "+copyBot+example)
	case tokenMistake(v) != "":
		p.add(name, tokenMistake(v)+example)
	case !strings.HasPrefix(v, "xoxb-"):
		p.add(name, "must be a Slack bot token starting with xoxb- (the value is secret and not shown): "+copyBot+example)
	default:
		return v
	}
	return ""
}

func (p *parser) baseURL(name, def string) string {
	v := p.get(name)
	if v == "" {
		return def
	}
	u, err := url.Parse(v)
	switch {
	case err != nil:
		p.bad(name, v, "not a URL, e.g. "+name+"="+def)
		return ""
	case u.Scheme != "http" && u.Scheme != "https", u.Host == "":
		p.bad(name, v, "must be an absolute http or https URL, e.g. "+name+"="+def)
		return ""
	case u.RawQuery != "" || u.Fragment != "" || u.User != nil:
		p.bad(name, v, "must be a base URL without query, fragment or user info, e.g. "+name+"="+def)
		return ""
	case u.Scheme == "http" && !outbound.Loopback(u.Hostname()):
		p.bad(name, v, "must be https, or http only to a loopback host (127.0.0.1, ::1, localhost), so that the token never crosses a network in the clear, e.g. "+name+"="+def)
		return ""
	}
	if !strings.HasSuffix(v, "/") {
		v += "/"
	}
	return v
}

func (p *parser) boolean(name string) bool {
	switch v := p.get(name); strings.ToLower(v) {
	case "", "false":
		return false
	case "true":
		return true
	default:
		p.bad(name, v, "must be true or false, e.g. "+name+"=true")
		return false
	}
}

func (p *parser) offsets(name string) []time.Duration {
	v := p.get(name)
	if v == "" {
		v = DefaultReminderOffsets
	}
	var out []time.Duration
	for part := range strings.SplitSeq(v, ",") {
		part = strings.TrimSpace(part)
		example := "e.g. " + name + "=10m,1m,0"
		var d time.Duration
		var err error
		if part == "0" {
			d = 0
		} else if d, err = time.ParseDuration(part); err != nil {
			if part == "" {
				p.bad(name, v, "has an empty entry, "+example)
			} else {
				p.bad(name, v, fmt.Sprintf("%q %s, %s", part, durationMistake(part), example))
			}
			continue
		}
		switch {
		case d < 0:
			p.bad(name, v, fmt.Sprintf("%q is negative; offsets are how long before the start, %s", part, example))
		case d%time.Second != 0:
			p.bad(name, v, fmt.Sprintf("%q is not whole seconds, %s", part, example))
		case d > MaxOffset:
			p.bad(name, v, fmt.Sprintf("%q is more than %v, %s", part, MaxOffset, example))
		case slices.Contains(out, d):
			p.bad(name, v, fmt.Sprintf("%q appears twice, %s", part, example))
		default:
			out = append(out, d)
		}
	}
	slices.Sort(out)
	return out
}

func (p *parser) interval(name string) time.Duration {
	v := p.get(name)
	if v == "" {
		return DefaultTickInterval
	}
	return p.duration(name, v, "30s", MaxTickInterval, "must be at most 10m, or reminders go out late")
}

// duration parses v, the value of name, as a duration from MinTickInterval
// to max; tooLong is the problem of a longer one, and example a valid value.
func (p *parser) duration(name, v, example string, max time.Duration, tooLong string) time.Duration {
	example = "e.g. " + name + "=" + example
	d, err := time.ParseDuration(v)
	switch {
	case err != nil:
		p.bad(name, v, strings.TrimPrefix(durationMistake(v), "is ")+", "+example)
	case d < MinTickInterval:
		p.bad(name, v, "must be at least "+MinTickInterval.String()+", "+example)
	case d > max:
		p.bad(name, v, tooLong+", "+example)
	}
	return d
}

// reported reports whether a problem names the variable.
func (p *parser) reported(name string) bool {
	return slices.ContainsFunc(p.problems, func(pr Problem) bool { return pr.Var == name })
}

// tickFits refuses a tick interval under which a reminder can fall between
// two sweeps and never go out. A reminder for an offset o above 0 may go
// out only in the o before its meeting starts, and a 0 ("starting now") one
// only in the meetingbot.StartGrace after the start; a sweep lands in every
// window of a length only when the tick is no longer than it. offsets are
// ascending; isDefault says TICK_INTERVAL was not set.
func (p *parser) tickFits(tick time.Duration, isDefault bool, offsets []time.Duration) {
	var limit time.Duration
	var missed string
	for _, o := range offsets {
		if o > 0 {
			limit = o
			missed = fmt.Sprintf("every %s reminder, which can go out only in the %s before its meeting starts", meetingbot.FormatOffset(o), meetingbot.FormatOffset(o))
			break
		}
	}
	if slices.Contains(offsets, 0) && (limit == 0 || meetingbot.StartGrace < limit) {
		limit = meetingbot.StartGrace
		missed = fmt.Sprintf("every 0 (starting now) reminder, which can go out only in the first %s after its meeting starts", meetingbot.FormatOffset(meetingbot.StartGrace))
	}
	if limit == 0 || tick <= limit {
		return
	}
	sweep := "a sweep every " + meetingbot.FormatOffset(tick)
	if isDefault {
		sweep += " (the default)"
	}
	offs := make([]string, len(offsets))
	for i, o := range offsets {
		offs[len(offsets)-1-i] = meetingbot.FormatOffset(o) // largest first, as people write them
		if o == 0 {
			offs[len(offsets)-1-i] = "0"
		}
	}
	p.add("TICK_INTERVAL and REMINDER_OFFSETS", fmt.Sprintf(
		"%s can miss %s; make TICK_INTERVAL at most the smallest offset above 0 (and at most %s when 0 is one), e.g. TICK_INTERVAL=%s REMINDER_OFFSETS=%s",
		sweep, missed, meetingbot.FormatOffset(meetingbot.StartGrace),
		meetingbot.FormatOffset(min(DefaultTickInterval, limit)), strings.Join(offs, ",")))
}

func (p *parser) databasePath(name string) string {
	v := p.get(name)
	if v == "" {
		v = DefaultDatabasePath
	}
	example := "e.g. " + name + "=/data/reminders.db"
	if msg := tildeMistake(name, v, p.getenv("HOME")); msg != "" {
		p.bad(name, v, msg)
		return v
	}
	if fi, err := os.Stat(v); err == nil && fi.IsDir() {
		p.bad(name, v, "is a directory; name a file in it, "+example)
		return v
	}
	dir := filepath.Dir(v)
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		p.bad(name, v, fmt.Sprintf("directory %s does not exist, %s", dir, example))
	case err != nil:
		p.bad(name, v, fmt.Sprintf("cannot read directory %s (%v), %s", dir, errors.Unwrap(err), example))
	case !fi.IsDir():
		p.bad(name, v, fmt.Sprintf("%s is not a directory, %s", dir, example))
	default:
		if what, err := writable(dir, v); err != nil {
			p.bad(name, v, fmt.Sprintf("%s is not writable%s (%v): the ledger, its journal and the owner locks live there; give the bot's user write access (chown or chmod), or name a file in a writable directory, %s",
				what, runningAs(), errors.Unwrap(err), example))
		}
	}
	return v
}

// writable checks that the process can write the database file, if it
// exists, and create files in its directory (SQLite's journal, the owner
// locks), leaving nothing behind. It names what is not writable.
func writable(dir, file string) (what string, err error) {
	f, err := os.OpenFile(file, os.O_WRONLY, 0)
	switch {
	case err == nil:
		f.Close() // opening for writing changes nothing
	case !errors.Is(err, fs.ErrNotExist):
		return "file " + file, err
	}
	f, err = os.CreateTemp(dir, ".meetingbot-write-check-*")
	if err != nil {
		return "directory " + dir, err
	}
	f.Close()
	return "", os.Remove(f.Name())
}

// runningAs names the user the process runs as, for a permission problem.
func runningAs() string {
	if uid := os.Geteuid(); uid >= 0 {
		return fmt.Sprintf(" by this process (uid %d)", uid)
	}
	return ""
}

// addr reads a listen address, host:port; def when unset.
func (p *parser) addr(name, def string) string {
	v := p.get(name)
	if v == "" {
		return def
	}
	example := "e.g. " + name + "=:8080 or " + name + "=127.0.0.1:9090"
	_, port, err := net.SplitHostPort(v)
	if err != nil {
		p.bad(name, v, "must be host:port, "+example)
		return v
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		p.bad(name, v, "port must be a number from 0 to 65535, "+example)
	}
	return v
}

// hostLabel is one label of a DNS host name.
var hostLabel = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// hosts reads comma-separated host names, lowercased. Each must have at
// least two labels: a host covers its subdomains, so "com" would cover
// every .com site.
func (p *parser) hosts(name string) []string {
	v := p.get(name)
	if v == "" {
		return nil
	}
	example := "e.g. " + name + "=meet.jit.si,whereby.com"
	var out []string
	for part := range strings.SplitSeq(v, ",") {
		h := strings.ToLower(strings.TrimSpace(part))
		if h == "" {
			p.bad(name, v, "has an empty entry, "+example)
			continue
		}
		labels := strings.Split(h, ".")
		ok := len(labels) >= 2 && len(h) <= 253
		for _, l := range labels {
			ok = ok && hostLabel.MatchString(l)
		}
		switch {
		case strings.HasPrefix(h, "*."):
			p.bad(name, v, fmt.Sprintf("%q is not a host name; a host covers its subdomains, e.g. %s=%s", part, name, strings.TrimPrefix(h, "*.")))
		case !ok:
			p.bad(name, v, fmt.Sprintf("%q is not a host name (no scheme, port or path), %s", strings.TrimSpace(part), example))
		case !slices.Contains(out, h):
			out = append(out, h)
		}
	}
	return out
}

func (p *parser) level(name string) slog.Level {
	switch v := p.get(name); strings.ToLower(v) {
	case "debug":
		return slog.LevelDebug
	case "", "info":
		return slog.LevelInfo
	case "warn":
		return slog.LevelWarn
	case "error":
		return slog.LevelError
	default:
		p.bad(name, v, "must be debug, info, warn or error, e.g. "+name+"=debug")
		return slog.LevelInfo
	}
}

func (p *parser) format(name string) string {
	switch v := p.get(name); strings.ToLower(v) {
	case "", "json":
		return "json"
	case "text":
		return "text"
	default:
		p.bad(name, v, "must be json or text, e.g. "+name+"=text")
		return "json"
	}
}

// credentials checks the Google credentials, from the file or inline, and
// returns the inline JSON. Neither the JSON nor its parts are ever shown.
func (p *parser) credentials(file string, impersonate bool) []byte {
	inline := p.get("GOOGLE_CREDENTIALS_JSON")
	if file != "" && inline != "" {
		p.add("GOOGLE_APPLICATION_CREDENTIALS and GOOGLE_CREDENTIALS_JSON", "both set; set one, e.g. GOOGLE_APPLICATION_CREDENTIALS=/secrets/key.json")
		return nil
	}
	var data []byte
	var name string
	switch {
	case file != "":
		name = "GOOGLE_APPLICATION_CREDENTIALS"
		if msg := tildeMistake(name, file, p.getenv("HOME")); msg != "" {
			p.bad(name, file, msg)
			return nil
		}
		b, err := os.ReadFile(file)
		if err != nil {
			p.bad(name, file, fmt.Sprintf("cannot read the file (%v), e.g. %s=/secrets/key.json", errors.Unwrap(err), name))
			return nil
		}
		data = b
	case inline != "":
		name = "GOOGLE_CREDENTIALS_JSON"
		data = []byte(inline)
	default:
		return nil
	}
	what := "the value"
	example := ` e.g. GOOGLE_CREDENTIALS_JSON="$(cat key.json)" with a key downloaded from the Google Cloud console`
	if file != "" {
		what = "the file"
		example = " e.g. GOOGLE_APPLICATION_CREDENTIALS=/secrets/key.json with a key downloaded from the Google Cloud console"
	}
	if file == "" && looksLikePath(inline) {
		p.add(name, "this looks like a path, not the JSON itself (the value is secret and not shown): use GOOGLE_APPLICATION_CREDENTIALS for a file, e.g. GOOGLE_APPLICATION_CREDENTIALS=/secrets/key.json, or put the file's content here, e.g. GOOGLE_CREDENTIALS_JSON=\"$(cat key.json)\"")
		return nil
	}
	var key struct {
		Type      string          `json:"type"`
		Installed json.RawMessage `json:"installed"`
		Web       json.RawMessage `json:"web"`
	}
	if err := json.Unmarshal(data, &key); err != nil {
		p.add(name, what+" is not valid JSON (its content is secret and not shown),"+example)
		return nil
	}
	switch key.Type {
	case "service_account":
	case "authorized_user":
		if impersonate {
			p.add("GOOGLE_IMPERSONATE", "true needs service-account credentials, but "+name+" holds authorized-user ones, e.g. GOOGLE_IMPERSONATE=false")
		}
	case "external_account":
		// Workload identity federation: no long-lived key.
		if impersonate {
			p.add("GOOGLE_IMPERSONATE", "true needs a service-account key, which signs the delegation; "+name+" holds workload identity federation credentials, which cannot, e.g. GOOGLE_IMPERSONATE=false")
		}
	case "":
		switch {
		case key.Installed != nil:
			p.add(name, what+` is an OAuth client ID of a Desktop app ("installed"), which identifies an app, not an account: `+oauthClientFix(name))
		case key.Web != nil:
			p.add(name, what+` is an OAuth client ID of a Web application ("web"), which identifies an app, not an account: `+oauthClientFix(name)+
				`; gcloud needs a Desktop app client, so create one (APIs & Services > Credentials > Create credentials > OAuth client ID > Desktop app)`)
		default:
			p.add(name, what+` has no "type"; want a service-account key ("type": "service_account") or authorized-user credentials ("type": "authorized_user"),`+example)
		}
		return nil
	default:
		if looksSecret(key.Type) {
			key.Type = "…"
		}
		p.add(name, fmt.Sprintf("%s has type %q; want service_account, authorized_user or external_account,%s", what, key.Type, example))
		return nil
	}
	if file != "" {
		return nil // calendar reads the file itself
	}
	return data
}

// UserCredentialsCommand makes authorized-user credentials for one Google
// account that can read Calendar. Since June 2025 gcloud's own OAuth client
// may not ask for non-Cloud scopes such as Calendar's, so the command names
// the operator's own Desktop app client (client.json); gcloud requires the
// cloud-platform scope alongside.
const UserCredentialsCommand = "gcloud auth application-default login --client-id-file=client.json --scopes=https://www.googleapis.com/auth/calendar.readonly,https://www.googleapis.com/auth/cloud-platform"

// oauthClientFix says where the credentials the bot needs come from, for
// an OAuth client ID file given instead of them.
func oauthClientFix(name string) string {
	return "for a service account, download a key instead (Google Cloud console > IAM & Admin > Service accounts > the account > Keys > Add key > Create new key > JSON), " +
		"e.g. " + name + "=/secrets/key.json; for one personal account, turn this client into authorized-user credentials with " +
		UserCredentialsCommand + " and use the file it writes (~/.config/gcloud/application_default_credentials.json)"
}

// looksLikePath reports whether an inline credentials value is a file path
// rather than JSON.
func looksLikePath(v string) bool {
	if strings.HasPrefix(v, "{") || strings.ContainsAny(v, "\n{}\"") {
		return false
	}
	return strings.HasPrefix(v, "/") || strings.HasPrefix(v, "./") || strings.HasPrefix(v, "../") ||
		strings.HasPrefix(v, "~") || strings.HasSuffix(strings.ToLower(v), ".json")
}

var (
	channelID   = regexp.MustCompile(`^[CG][A-Z0-9]{6,}$`)
	userID      = regexp.MustCompile(`^[UW][A-Z0-9]{6,}$`)
	channelName = regexp.MustCompile(`^#[a-z0-9_\-]{1,80}$`)
	email       = regexp.MustCompile(`^[^@\s]+@[^@\s]+$`)
)

func (p *parser) calendars(name string, offsets []time.Duration) []meetingbot.Subscription {
	v := p.get(name)
	example := "e.g. " + name + "=alice@example.com,team@example.com=#eng"
	if v == "" {
		if !p.hidden[name] {
			p.add(name, "missing: name at least one calendar, "+example+", or let people subscribe from Slack with SLACK_SIGNING_SECRET or SLACK_APP_TOKEN")
		}
		return nil
	}
	if msg := calendarsMistake(name, v); msg != "" {
		p.bad(name, v, msg)
		return nil
	}
	var subs []meetingbot.Subscription
	seen := map[string]bool{}
	for i, entry := range strings.Split(v, ",") {
		entry = strings.TrimSpace(entry)
		cal, dest, _ := strings.Cut(entry, "=")
		cal, dest = strings.TrimSpace(cal), strings.TrimSpace(dest)
		id := cal
		if dest != "" {
			id = cal + "=" + dest
		}
		switch {
		case cal == "":
			p.bad(name, v, fmt.Sprintf("entry %d has no calendar ID, %s", i+1, example))
			continue
		case strings.IndexFunc(cal, unicode.IsSpace) >= 0:
			p.bad(name, v, fmt.Sprintf("calendar ID %q has a space, %s", cal, example))
			continue
		case strings.Contains(entry, "=") && dest == "":
			p.bad(name, v, fmt.Sprintf("entry %q has an empty destination; drop the = to DM the calendar's owner, %s", entry, example))
			continue
		case dest != "" && !validDestination(dest):
			p.bad(name, v, destinationMistake(dest)+", "+example)
			continue
		case dest == "" && !email.MatchString(cal):
			p.bad(name, v, fmt.Sprintf("calendar %q is not an email, so it needs a destination, e.g. %s=%s=#eng", cal, name, cal))
			continue
		case seen[id]:
			p.bad(name, v, fmt.Sprintf("entry %q appears twice, %s", id, example))
			continue
		}
		seen[id] = true
		subs = append(subs, meetingbot.Subscription{
			ID: id, CalendarID: cal, Destination: dest, Offsets: slices.Clone(offsets),
		})
	}
	return subs
}

func validDestination(d string) bool {
	return channelID.MatchString(d) || userID.MatchString(d) || channelName.MatchString(d) || email.MatchString(d)
}
