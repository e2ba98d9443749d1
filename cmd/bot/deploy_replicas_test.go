package main

import (
	"os"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/meetingbot/meetingbot/config"
)

// fly.replicas.toml runs several machines on one PostgreSQL: no volume,
// the image's DATABASE_PATH emptied so that DATABASE_URL alone names the
// state, and everything else as fly.toml has it.
func TestFlyReplicasConfig(t *testing.T) {
	var one, many flyConfig
	_, err := toml.DecodeFile("../../fly.toml", &one)
	require.NoError(t, err, "parse fly.toml")
	meta, err := toml.DecodeFile("../../fly.replicas.toml", &many)
	require.NoError(t, err, "parse fly.replicas.toml")

	assert.Empty(t, many.Mounts, "fly.replicas.toml mounts: the state is in PostgreSQL, not on a volume")
	assert.True(t, meta.IsDefined("env", "DATABASE_PATH"), "fly.replicas.toml [env] empties DATABASE_PATH")
	assert.Empty(t, many.Env["DATABASE_PATH"])
	assert.Empty(t, many.Env["DATABASE_URL"], "DATABASE_URL is a secret, not in [env]")

	// The machine's environment: the image's, then [env], then the secrets.
	dockerfile, err := os.ReadFile("../../Dockerfile")
	require.NoError(t, err)
	env := map[string]string{}
	for line := range strings.SplitSeq(string(dockerfile), "\n") {
		if kv, ok := strings.CutPrefix(line, "ENV "); ok {
			k, v, _ := strings.Cut(kv, "=")
			env[k] = v
		}
	}
	require.NotEmpty(t, env["DATABASE_PATH"], "the image sets DATABASE_PATH")
	for k, v := range many.Env {
		env[k] = v
	}
	for k, v := range map[string]string{
		"DATABASE_URL": "postgresql://fly-user:PASSWORD@direct.abc123.flympg.net/fly-db", "SLACK_BOT_TOKEN": "xoxb-1-2-abc",
		"GOOGLE_CREDENTIALS_JSON": `{"type":"service_account"}`, "CALENDARS": "alice@example.com",
	} {
		env[k] = v
	}
	c, err := config.Parse(func(k string) string { return env[k] })
	require.NoError(t, err, "config.Parse(the replicas' environment)")
	assert.NotEmpty(t, c.DatabaseURL)

	many.Mounts, one.Mounts = nil, nil
	delete(one.Env, "DATABASE_PATH")
	delete(many.Env, "DATABASE_PATH")
	assert.Equal(t, one, many, "fly.replicas.toml agrees with fly.toml but for the volume and DATABASE_PATH")
}
