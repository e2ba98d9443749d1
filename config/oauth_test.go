package config_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/meetingbot/meetingbot/config"
)

const (
	webClient       = `{"web":{"client_id":"1-web.apps.googleusercontent.com","project_id":"p","auth_uri":"https://accounts.google.com/o/oauth2/auth","token_uri":"https://oauth2.googleapis.com/token","client_secret":"GOCSPX-HIDDENsecret","redirect_uris":["https://meetingbot.fly.dev/google/oauth/callback"]}}`
	tokenKey        = "TOKEN_ENCRYPTION_KEY=q83vEjRWeJAFUUoY5Fj1fN0Xc2/7N0tqTPiwd/dQe5k="
	signing         = "SLACK_SIGNING_SECRET=8f742231b10e8888abcd99edabd85ea5"
	connectPublic   = "PUBLIC_URL=https://meetingbot.fly.dev"
	webClientPrefix = "GOOGLE_OAUTH_CLIENT_JSON="
)

// connectEnv is self-service with people's own Google accounts and no
// service account.
func connectEnv(extra ...string) func(string) string {
	return env(append([]string{"SLACK_BOT_TOKEN=" + secretToken, signing, connectPublic, tokenKey, webClientPrefix + webClient}, extra...)...)
}

func TestGoogleConnect(t *testing.T) {
	c, err := config.Parse(connectEnv())
	require.NoError(t, err)
	require.True(t, c.GoogleConnect())
	assert.False(t, c.HasServiceAccount(), "HasServiceAccount with none set")
	assert.Equal(t, config.GoogleOAuthClient{
		ID: "1-web.apps.googleusercontent.com", Secret: "GOCSPX-HIDDENsecret",
		AuthURI: "https://accounts.google.com/o/oauth2/auth", TokenURI: "https://oauth2.googleapis.com/token",
		RedirectURIs: []string{"https://meetingbot.fly.dev/google/oauth/callback"},
	}, *c.GoogleOAuth)
	assert.Equal(t, "https://meetingbot.fly.dev/google/oauth/callback", c.GoogleRedirectURI())
	assert.True(t, c.GoogleOAuth.Registers(c.GoogleRedirectURI()), "Registers(the redirect URI the file lists)")
	assert.False(t, c.GoogleOAuth.Registers("https://other.example/google/oauth/callback"))
	assert.NotContains(t, c.String(), "HIDDEN", "String shows the client secret")
	assert.NotContains(t, c.String(), "q83vEjR", "String shows the key")
	assert.Contains(t, c.String(), "google_connect=on")

	// A loopback emulator may be http; and the service account may stay.
	local := strings.ReplaceAll(webClient, "https://accounts.google.com", "http://127.0.0.1:5555")
	c, err = config.Parse(connectEnv(webClientPrefix+local, "GOOGLE_CREDENTIALS_JSON="+saJSON, "CALENDARS=alice@example.com"))
	require.NoError(t, err)
	assert.Equal(t, "http://127.0.0.1:5555/o/oauth2/auth", c.GoogleOAuth.AuthURI)
}

func TestGoogleConnectProblems(t *testing.T) {
	desktop := `{"installed":{"client_id":"1-d.apps.googleusercontent.com","client_secret":"GOCSPX-HIDDEN","auth_uri":"https://accounts.google.com/o/oauth2/auth","token_uri":"https://oauth2.googleapis.com/token"}}`
	tests := []struct {
		name string
		env  func(string) string
		want string
	}{
		{"desktop client", connectEnv(webClientPrefix + desktop), `GOOGLE_OAUTH_CLIENT_JSON: is a Desktop app client ("installed"), which cannot send people back to the bot: create an OAuth client of type Web application`},
		{"service account", connectEnv(webClientPrefix + saJSON), "GOOGLE_OAUTH_CLIENT_JSON: holds service_account credentials, which belong in GOOGLE_APPLICATION_CREDENTIALS"},
		{"not JSON", connectEnv(webClientPrefix + "{web"), "GOOGLE_OAUTH_CLIENT_JSON: is not valid JSON (its content is secret and not shown)"},
		{"a path", connectEnv(webClientPrefix + "/secrets/client.json"), "GOOGLE_OAUTH_CLIENT_JSON: looks like a path"},
		{"no secret", connectEnv(webClientPrefix + strings.Replace(webClient, `"client_secret":"GOCSPX-HIDDENsecret",`, "", 1)), "GOOGLE_OAUTH_CLIENT_JSON: lacks client_secret"},
		{"http token_uri", connectEnv(webClientPrefix + strings.Replace(webClient, "https://oauth2.googleapis.com", "http://oauth2.example.com", 1)), "GOOGLE_OAUTH_CLIENT_JSON: has a token_uri that is not an https URL"},
		{"no key", env("SLACK_BOT_TOKEN="+secretToken, signing, connectPublic, webClientPrefix+webClient), "TOKEN_ENCRYPTION_KEY: missing: GOOGLE_OAUTH_CLIENT_JSON is set, so people's tokens are stored, encrypted with it, e.g. TOKEN_ENCRYPTION_KEY=$(openssl rand -base64 32)"},
		{"bad key", connectEnv("TOKEN_ENCRYPTION_KEY=HIDDENshort"), "TOKEN_ENCRYPTION_KEY: the key is 8 bytes, not 32"},
		{"http public url", connectEnv("PUBLIC_URL=http://meetingbot.example"), "PUBLIC_URL=\"http://meetingbot.example\": must be https"},
		{"no public url", env("SLACK_BOT_TOKEN="+secretToken, signing, tokenKey, webClientPrefix+webClient), "GOOGLE_OAUTH_CLIENT_JSON: is set, but PUBLIC_URL is not"},
		{"no self-service", env("SLACK_BOT_TOKEN="+secretToken, connectPublic, tokenKey, webClientPrefix+webClient, "CALENDARS=a@example.com", "GOOGLE_CREDENTIALS_JSON="+saJSON), "GOOGLE_OAUTH_CLIENT_JSON: is set, but self-service from Slack is off"},
		{"calendars without a service account", connectEnv("CALENDARS=team@example.com"), "CALENDARS: is read with the bot's own Google credentials, and none are set"},
	}
	for _, tt := range tests {
		_, err := config.Parse(tt.env)
		if err == nil {
			t.Errorf("%s: Parse = nil, want %q", tt.name, tt.want)
			continue
		}
		got := err.Error()
		if !strings.Contains(got, tt.want) {
			t.Errorf("%s: Parse = %q, want a line containing %q", tt.name, got, tt.want)
		}
		if strings.Contains(withoutNames(got), "HIDDEN") {
			t.Errorf("%s: Parse = %q shows a secret", tt.name, got)
		}
	}
}

// Workload identity federation credentials are the bot's own Google
// credentials too.
func TestExternalAccountAccepted(t *testing.T) {
	fed := `{"type":"external_account","audience":"//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/p/providers/q","subject_token_type":"urn:ietf:params:oauth:token-type:jwt","token_url":"https://sts.googleapis.com/v1/token","credential_source":{"file":"/var/run/token"}}`
	c, err := config.Parse(env("SLACK_BOT_TOKEN="+secretToken, "CALENDARS=alice@example.com", "GOOGLE_CREDENTIALS_JSON="+fed))
	require.NoError(t, err)
	assert.True(t, c.HasServiceAccount())
}

func TestSlackConnect(t *testing.T) {
	withSA := func(extra ...string) func(string) string {
		return env(append([]string{"SLACK_BOT_TOKEN=" + secretToken, "GOOGLE_CREDENTIALS_JSON=" + saJSON, signing, connectPublic, tokenKey}, extra...)...)
	}
	c, err := config.Parse(withSA("SLACK_CLIENT_ID=1234567890.0987654321", "SLACK_CLIENT_SECRET=HIDDENclientsecret"))
	require.NoError(t, err)
	assert.True(t, c.SlackConnect())
	assert.Equal(t, "https://meetingbot.fly.dev/slack/oauth/callback", c.SlackRedirectURI())
	assert.NotContains(t, c.String(), "HIDDEN")
	tests := []struct {
		name string
		env  func(string) string
		want string
	}{
		{"no secret", withSA("SLACK_CLIENT_ID=1234567890.0987654321"), "SLACK_CLIENT_ID: is set, but its Client Secret is not"},
		{"no ID", withSA("SLACK_CLIENT_SECRET=HIDDENclientsecret"), "SLACK_CLIENT_SECRET: is set, but SLACK_CLIENT_ID is not"},
		{"a token for a secret", withSA("SLACK_CLIENT_ID=1234567890.0987654321", "SLACK_CLIENT_SECRET=xoxb-HIDDEN"), "SLACK_CLIENT_SECRET: must be the app's Client Secret"},
		{"bad ID", withSA("SLACK_CLIENT_ID=A0123", "SLACK_CLIENT_SECRET=HIDDENclientsecret"), `SLACK_CLIENT_ID="A0123": is not a Slack app's Client ID`},
		{"no public url", env("SLACK_BOT_TOKEN="+secretToken, "GOOGLE_CREDENTIALS_JSON="+saJSON, signing, tokenKey, "SLACK_CLIENT_ID=1234567890.0987654321", "SLACK_CLIENT_SECRET=HIDDENx"), "SLACK_CLIENT_ID: is set, but PUBLIC_URL is not"},
		{"no key", env("SLACK_BOT_TOKEN="+secretToken, "GOOGLE_CREDENTIALS_JSON="+saJSON, signing, connectPublic, "SLACK_CLIENT_ID=1234567890.0987654321", "SLACK_CLIENT_SECRET=HIDDENx"), "TOKEN_ENCRYPTION_KEY: missing: SLACK_CLIENT_ID is set"},
	}
	for _, tt := range tests {
		_, err := config.Parse(tt.env)
		if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(withoutNames(err.Error()), "HIDDEN") {
			t.Errorf("%s: Parse = %v, want %q without the secret", tt.name, err, tt.want)
		}
	}
}
