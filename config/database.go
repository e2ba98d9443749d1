package config

import (
	"net/url"
	"slices"
	"strings"
)

// databaseURLExample is a valid DATABASE_URL for problems, which never
// quote the value given: it holds a password.
const databaseURLExample = "DATABASE_URL=postgres://meetingbot:PASSWORD@db.internal:5432/meetingbot"

// database reads where the state lives: DATABASE_URL (PostgreSQL, shared
// by several replicas) or else DATABASE_PATH (one machine's SQLite file).
// Setting both is a mistake named in one line.
func (p *parser) database() (dbURL, path string) {
	if !p.set("DATABASE_URL") {
		return "", p.databasePath("DATABASE_PATH")
	}
	if p.set("DATABASE_PATH") {
		p.add("DATABASE_URL and DATABASE_PATH", "both set; DATABASE_URL (PostgreSQL, for several replicas) replaces DATABASE_PATH (SQLite, for one machine): unset one, e.g. "+databaseURLExample+" alone")
		return "", ""
	}
	return p.databaseURL("DATABASE_URL"), ""
}

// sslModes are the sslmode values PostgreSQL's clients know.
var sslModes = []string{"disable", "allow", "prefer", "require", "verify-ca", "verify-full"}

// databaseURL checks a PostgreSQL URL. Its problems say what is wrong with
// it without quoting any of it.
func (p *parser) databaseURL(name string) string {
	v := p.get(name)
	const secret = " (the value is secret and not shown), e.g. " + databaseURLExample
	u, err := url.Parse(v)
	switch {
	case err != nil:
		p.add(name, "is not a URL"+secret)
	case u.Scheme != "postgres" && u.Scheme != "postgresql":
		p.add(name, "must be a PostgreSQL URL starting with postgres://"+secret)
	case u.Hostname() == "":
		p.add(name, "names no host"+secret)
	case strings.Trim(u.Path, "/") == "":
		p.add(name, "names no database after the host"+secret)
	case u.Query().Has("sslmode") && !slices.Contains(sslModes, u.Query().Get("sslmode")):
		p.add(name, "has an sslmode that is none of "+strings.Join(sslModes, ", ")+secret+"?sslmode=require")
	default:
		return v
	}
	return ""
}

// RedactURL returns a DATABASE_URL as it may be shown: scheme, host, port
// and database, without user, password or parameters.
func RedactURL(v string) string {
	u, err := url.Parse(v)
	if err != nil || u.Host == "" {
		return "postgres://…"
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}).String()
}
