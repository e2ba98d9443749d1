package meetingbot_test

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"

	"github.com/meetingbot/meetingbot/config"
)

// fly.replicas.toml runs several machines on one PostgreSQL: no volume,
// the image's DATABASE_PATH emptied so that DATABASE_URL alone names the
// state, and everything else as fly.toml has it.
func TestFlyReplicasConfig(t *testing.T) {
	var one, many flyConfig
	_, err := toml.DecodeFile("fly.toml", &one)
	if err != nil {
		t.Fatalf("parse fly.toml: %v", err)
	}
	meta, err := toml.DecodeFile("fly.replicas.toml", &many)
	if err != nil {
		t.Fatalf("parse fly.replicas.toml: %v", err)
	}

	if len(many.Mounts) != 0 {
		t.Errorf("fly.replicas.toml mounts = %v, want none: the state is in PostgreSQL, not on a volume", many.Mounts)
	}
	if !meta.IsDefined("env", "DATABASE_PATH") || many.Env["DATABASE_PATH"] != "" {
		t.Errorf("fly.replicas.toml [env] DATABASE_PATH = %q (set: %v), want it set to \"\" to empty the image's", many.Env["DATABASE_PATH"], meta.IsDefined("env", "DATABASE_PATH"))
	}
	if many.Env["DATABASE_URL"] != "" {
		t.Errorf("fly.replicas.toml [env] sets DATABASE_URL, want it a secret")
	}

	// The machine's environment: the image's, then [env], then the secrets.
	dockerfile, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for line := range strings.SplitSeq(string(dockerfile), "\n") {
		if kv, ok := strings.CutPrefix(line, "ENV "); ok {
			k, v, _ := strings.Cut(kv, "=")
			env[k] = v
		}
	}
	if env["DATABASE_PATH"] == "" {
		t.Fatal("the Dockerfile sets no DATABASE_PATH, want the image to set it")
	}
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
	if err != nil {
		t.Fatalf("config.Parse(the replicas' environment): %v", err)
	}
	if c.DatabaseURL == "" {
		t.Errorf("config.Parse(the replicas' environment).DatabaseURL is empty, want fly's DATABASE_URL")
	}

	many.Mounts, one.Mounts = nil, nil
	delete(one.Env, "DATABASE_PATH")
	delete(many.Env, "DATABASE_PATH")
	if !reflect.DeepEqual(one, many) {
		t.Errorf("fly.replicas.toml = %+v\nwant fly.toml but for the volume and DATABASE_PATH: %+v", many, one)
	}
}
