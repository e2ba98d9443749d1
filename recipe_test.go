package meetingbot_test

import (
	"encoding/base64"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"

	"github.com/meetingbot/meetingbot/config"
)

// recipeHeading is the README's section with the route for a company.
const recipeHeading = "## A company of 50 to 5,000 on Google Workspace"

// readmeSection returns the README's section under heading, up to the next.
func readmeSection(t *testing.T, heading string) string {
	t.Helper()
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(b), "\n"+heading+"\n")
	if !ok {
		t.Fatalf("README.md has no section %q", heading)
	}
	section, _, _ := strings.Cut(rest, "\n## ")
	return section
}

// TestCompanyRecipe walks the README's route for a company against the
// code: every variable it names is one the bot reads; the secrets it lists
// are the ones it sets, each a secret of the bot's; fly.toml's settings,
// the PUBLIC_URL it gives and those secrets make a configuration that
// parses, with Slack's request URLs, people's own Google accounts and push
// on and no service account; the OAuth client's redirect URI is the one
// the bot sends people back to; the manifest it names exists; and doctor
// runs through the image's entrypoint.
func TestCompanyRecipe(t *testing.T) {
	recipe := readmeSection(t, recipeHeading)
	known := map[string]config.Var{}
	for _, v := range config.Vars {
		known[v.Name] = v
	}
	for _, name := range regexp.MustCompile(`\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b`).FindAllString(recipe, -1) {
		if _, ok := known[name]; !ok {
			t.Errorf("the recipe names %s, which the bot does not read (config.Vars)", name)
		}
	}

	var table []string
	for _, m := range regexp.MustCompile("(?m)^\\| `([A-Z_]+)` \\|").FindAllStringSubmatch(recipe, -1) {
		table = append(table, m[1])
	}
	set := regexp.MustCompile(`(?s)fly secrets set (.*?)\n\s*fly deploy`).FindStringSubmatch(recipe)
	if set == nil {
		t.Fatal("the recipe has no fly secrets set … fly deploy")
	}
	var secrets []string
	for _, m := range regexp.MustCompile(`\b([A-Z][A-Z_]+)=`).FindAllStringSubmatch(set[1], -1) {
		secrets = append(secrets, m[1])
	}
	if !slices.Equal(table, secrets) {
		t.Errorf("the recipe's table of secrets lists %v, its fly secrets set sets %v", table, secrets)
	}
	for _, name := range secrets {
		if !strings.Contains(known[name].Meaning, "secret") {
			t.Errorf("the recipe sets %s as a secret, which config.Vars does not call secret", name)
		}
	}

	public := regexp.MustCompile(`PUBLIC_URL =\s+"(https://[^"]+)"`).FindStringSubmatch(recipe)
	if public == nil {
		t.Fatal(`the recipe gives no PUBLIC_URL = "https://…" for fly.toml`)
	}
	redirect := public[1] + "/google/oauth/callback"
	var fly struct{ Env map[string]string }
	if _, err := toml.DecodeFile("fly.toml", &fly); err != nil {
		t.Fatal(err)
	}
	samples := map[string]string{
		"SLACK_BOT_TOKEN":      "xoxb-1234-5678-abcd",
		"SLACK_SIGNING_SECRET": "8f742231b10e8888abcd99edabd85ea5",
		"GOOGLE_OAUTH_CLIENT_JSON": `{"web":{"client_id":"1234-abcd.apps.googleusercontent.com","client_secret":"GOCSPX-x",` +
			`"auth_uri":"https://accounts.google.com/o/oauth2/auth","token_uri":"https://oauth2.googleapis.com/token","redirect_uris":["` + redirect + `"]}}`,
		"TOKEN_ENCRYPTION_KEY": base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef")),
	}
	env := map[string]string{"PUBLIC_URL": public[1]}
	for k, v := range fly.Env {
		env[k] = v
	}
	// The volume Fly mounts at /data is not here.
	env["DATABASE_PATH"] = t.TempDir() + "/reminders.db"
	for _, name := range secrets {
		if samples[name] == "" {
			t.Fatalf("the recipe sets %s, which this test has no sample value of", name)
		}
		env[name] = samples[name]
	}
	cfg, err := config.Parse(func(k string) string { return env[k] })
	if err != nil {
		t.Fatalf("the recipe's configuration does not parse: %v", err)
	}
	if !cfg.SelfService() || cfg.SlackSigningSecret == "" || !cfg.GoogleConnect() || cfg.PublicURL != public[1] || cfg.HasServiceAccount() {
		t.Errorf("the recipe's configuration: request URLs %v, own accounts %v, PUBLIC_URL %q, service account %v; want request URLs, own accounts, %s, none",
			cfg.SlackSigningSecret != "", cfg.GoogleConnect(), cfg.PublicURL, cfg.HasServiceAccount(), public[1])
	}
	if got := cfg.GoogleRedirectURI(); got != redirect || !strings.Contains(recipe, "`"+redirect+"`") {
		t.Errorf("the bot sends people back to %s; the recipe must name %s as the client's redirect URI", got, redirect)
	}

	for _, m := range regexp.MustCompile(`\]\(([a-z.-]+\.yaml)\)`).FindAllStringSubmatch(recipe, -1) {
		if _, err := os.Stat(m[1]); err != nil {
			t.Errorf("the recipe names %s: %v", m[1], err)
		}
	}
	dockerfile, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(recipe, `fly ssh console -C "/usr/local/bin/entrypoint doctor"`) ||
		!strings.Contains(string(dockerfile), "COPY deploy/entrypoint.sh /usr/local/bin/entrypoint") {
		t.Errorf("the recipe must end with bot doctor run where the bot runs, through the image's entrypoint")
	}
}
