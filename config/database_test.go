package config_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/meetingbot/meetingbot/config"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const secretDBPassword = "SECRETdbPassw0rd"

// DATABASE_URL selects PostgreSQL; its password never shows, not even in
// the start-up line.
func TestDatabaseURL(t *testing.T) {
	url := "postgres://meetingbot:" + secretDBPassword + "@db.internal:5432/meetingbot?sslmode=require&search_path=bot"
	c, err := config.Parse(prod("DATABASE_URL=" + url))
	require.NoError(t, err)
	assert.Equal(t, url, c.DatabaseURL)
	assert.Empty(t, c.DatabasePath, "DatabasePath with DATABASE_URL set")
	assert.Contains(t, c.String(), " db=postgres://db.internal:5432/meetingbot ", "the start-up line names the database")
	assert.NotContains(t, c.String(), "SECRET")
	assert.NotContains(t, c.String(), "meetingbot:", "the start-up line shows no user")

	// DATABASE_PATH's default is not checked when PostgreSQL is used: the
	// working directory may be read-only.
	c, err = config.Parse(prod("DATABASE_URL=postgresql://db.internal/meetingbot"))
	require.NoError(t, err)
	assert.Equal(t, "postgresql://db.internal/meetingbot", c.DatabaseURL)
}

func TestDatabaseURLProblems(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		name string
		env  []string
		want string
	}{
		{"both", []string{"DATABASE_URL=postgres://u:" + secretDBPassword + "@db/x", "DATABASE_PATH=" + filepath.Join(dir, "bot.db")},
			"DATABASE_URL and DATABASE_PATH: both set; DATABASE_URL (PostgreSQL, for several replicas) replaces DATABASE_PATH (SQLite, for one machine): unset one, e.g. DATABASE_URL=postgres://"},
		{"not postgres", []string{"DATABASE_URL=mysql://u:" + secretDBPassword + "@db/x"}, "DATABASE_URL: must be a PostgreSQL URL starting with postgres:// (the value is secret and not shown), e.g. "},
		{"a path", []string{"DATABASE_URL=/data/" + secretDBPassword + ".db"}, "DATABASE_URL: must be a PostgreSQL URL"},
		{"keywords", []string{"DATABASE_URL=host=db password=" + secretDBPassword}, "DATABASE_URL: must be a PostgreSQL URL"},
		{"not a URL", []string{"DATABASE_URL=postgres://u:" + secretDBPassword + "@db:port/x"}, "DATABASE_URL: is not a URL (the value is secret and not shown)"},
		{"no host", []string{"DATABASE_URL=postgres:///x?password=" + secretDBPassword}, "DATABASE_URL: names no host"},
		{"no database", []string{"DATABASE_URL=postgres://u:" + secretDBPassword + "@db:5432/"}, "DATABASE_URL: names no database after the host"},
		{"sslmode", []string{"DATABASE_URL=postgres://u:" + secretDBPassword + "@db/x?sslmode=on"}, "DATABASE_URL: has an sslmode that is none of disable, allow, prefer, require, verify-ca, verify-full"},
	} {
		_, err := config.Parse(prod(tt.env...))
		if !config.IsConfig(err) {
			t.Errorf("Parse(%s) = %v, want a config error", tt.name, err)
			continue
		}
		got := err.Error()
		if strings.Contains(got, "\n") || !strings.HasPrefix(got, tt.want) || !strings.Contains(got, "e.g. ") {
			t.Errorf("Parse(%s) = %q, want one line starting %q with an example", tt.name, got, tt.want)
		}
		if strings.Contains(got, "SECRET") {
			t.Errorf("Parse(%s) = %q, shows the password", tt.name, got)
		}
	}
}

func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://u:" + secretDBPassword + "@db.internal:5432/meetingbot?password=" + secretDBPassword: "postgres://db.internal:5432/meetingbot",
		"postgresql://db/x":                          "postgresql://db/x",
		"host=db password=" + secretDBPassword:       "postgres://…",
		"postgres://u:" + secretDBPassword + "@db:p": "postgres://…",
	} {
		assert.Equal(t, want, config.RedactURL(in), "RedactURL(<%s>)", config.RedactURL(in))
	}
}
