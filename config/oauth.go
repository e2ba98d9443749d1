package config

import (
	"encoding/json"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/meetingbot/meetingbot/internal/keyring"
	"github.com/meetingbot/meetingbot/internal/outbound"
)

// People connect their own accounts (docs/design.md): GOOGLE_OAUTH_CLIENT_JSON,
// PUBLIC_URL and TOKEN_ENCRYPTION_KEY turn it on for Google, with
// self-service on; the service account then becomes optional (CALENDARS
// still needs it).

// GoogleCallbackPath is where Google sends a person back, under PUBLIC_URL.
const GoogleCallbackPath = "/google/oauth/callback"

// GoogleOAuthClient is the OAuth client of type Web application that
// GOOGLE_OAUTH_CLIENT_JSON holds, as Google's console downloads it. Its
// AuthURI and TokenURI are used as given. Secret holds a secret.
type GoogleOAuthClient struct {
	ID, Secret        string
	AuthURI, TokenURI string
	// RedirectURIs are the redirect URIs the file lists (a downloaded file
	// lists those registered when it was downloaded).
	RedirectURIs []string
}

// Registers reports whether the client's file lists uri among its
// redirect URIs. A file that lists none says nothing either way, and
// answers true: the console may have more than the file.
func (c GoogleOAuthClient) Registers(uri string) bool {
	return len(c.RedirectURIs) == 0 || slices.Contains(c.RedirectURIs, uri)
}

// GoogleConnect reports whether people may connect their own Google
// accounts.
func (c Config) GoogleConnect() bool { return c.GoogleOAuth != nil }

// GoogleRedirectURI is the redirect URI the Google OAuth client must list:
// PUBLIC_URL/google/oauth/callback; "" without PUBLIC_URL.
func (c Config) GoogleRedirectURI() string {
	if c.PublicURL == "" {
		return ""
	}
	return c.PublicURL + GoogleCallbackPath
}

// HasServiceAccount reports whether Google credentials of the bot's own
// are set (GOOGLE_APPLICATION_CREDENTIALS or GOOGLE_CREDENTIALS_JSON).
func (c Config) HasServiceAccount() bool {
	return c.CredentialsFile != "" || len(c.CredentialsJSON) > 0
}

// Examples of the OAuth variables, for problems that cannot quote them.
const (
	exampleOAuthClient = `GOOGLE_OAUTH_CLIENT_JSON="$(cat client_secret_123-abc.apps.googleusercontent.com.json)"`
	webClientSteps     = "create an OAuth client of type Web application (Google Cloud console > Google Auth Platform > Clients > Create client > Web application), add the redirect URI PUBLIC_URL" + GoogleCallbackPath + ", download its JSON and put it here, e.g. " + exampleOAuthClient
)

// oauth reads the variables of people's own connections into c and checks
// that they go together.
func (p *parser) oauth(c *Config) {
	keys := p.getenv("TOKEN_ENCRYPTION_KEY")
	if strings.TrimSpace(keys) != "" {
		if _, err := keyring.Parse(keys); err != nil {
			p.add("TOKEN_ENCRYPTION_KEY", err.Error()+" (the value is secret and not shown)")
		} else {
			c.TokenKeys = strings.TrimSpace(keys)
		}
	}
	p.slackOAuth(c)
	if !p.set("GOOGLE_OAUTH_CLIENT_JSON") {
		return
	}
	client, ok := p.oauthClient("GOOGLE_OAUTH_CLIENT_JSON")
	if !ok {
		return
	}
	needs := []string{}
	if !p.set("PUBLIC_URL") {
		p.add("GOOGLE_OAUTH_CLIENT_JSON", "is set, but PUBLIC_URL is not: Google sends people back to PUBLIC_URL"+GoogleCallbackPath+", which must be an https URL reaching HTTP_ADDR, e.g. PUBLIC_URL="+examplePublicURL)
		needs = append(needs, "PUBLIC_URL")
	}
	if !p.set("TOKEN_ENCRYPTION_KEY") {
		p.add("TOKEN_ENCRYPTION_KEY", "missing: GOOGLE_OAUTH_CLIENT_JSON is set, so people's tokens are stored, encrypted with it, e.g. "+keyring.Example)
		needs = append(needs, "TOKEN_ENCRYPTION_KEY")
	}
	if !p.selfServiceSet() {
		p.add("GOOGLE_OAUTH_CLIENT_JSON", "is set, but self-service from Slack is off, so nobody can ask to connect: set SLACK_SIGNING_SECRET (request URLs) or SLACK_APP_TOKEN (Socket Mode) too, e.g. "+exampleSigningSecret)
		needs = append(needs, "self-service")
	}
	if len(needs) == 0 {
		c.GoogleOAuth = &client
	}
}

// oauthClient reads a Web application client's JSON. Every other kind of
// Google JSON is refused with what it is and where it goes; nothing of the
// value is shown.
func (p *parser) oauthClient(name string) (GoogleOAuthClient, bool) {
	v := strings.TrimSpace(p.getenv(name))
	var file struct {
		Type      string          `json:"type"`
		Installed json.RawMessage `json:"installed"`
		Web       *struct {
			ClientID     string   `json:"client_id"`
			ClientSecret string   `json:"client_secret"`
			AuthURI      string   `json:"auth_uri"`
			TokenURI     string   `json:"token_uri"`
			RedirectURIs []string `json:"redirect_uris"`
		} `json:"web"`
	}
	if looksLikePath(v) {
		p.add(name, "looks like a path; put the JSON itself here (the value is secret and not shown), e.g. "+exampleOAuthClient)
		return GoogleOAuthClient{}, false
	}
	if err := json.Unmarshal([]byte(v), &file); err != nil {
		p.add(name, "is not valid JSON (its content is secret and not shown): "+webClientSteps)
		return GoogleOAuthClient{}, false
	}
	switch {
	case file.Type == "service_account" || file.Type == "authorized_user" || file.Type == "external_account":
		p.add(name, "holds "+file.Type+" credentials, which belong in GOOGLE_APPLICATION_CREDENTIALS or GOOGLE_CREDENTIALS_JSON; here goes the JSON of an OAuth client people connect through: "+webClientSteps)
		return GoogleOAuthClient{}, false
	case file.Installed != nil:
		p.add(name, `is a Desktop app client ("installed"), which cannot send people back to the bot: `+webClientSteps)
		return GoogleOAuthClient{}, false
	case file.Web == nil:
		p.add(name, `is not an OAuth client's JSON (no "web" object): `+webClientSteps)
		return GoogleOAuthClient{}, false
	}
	w := file.Web
	var missing []string
	for field, v := range map[string]string{"client_id": w.ClientID, "client_secret": w.ClientSecret, "auth_uri": w.AuthURI, "token_uri": w.TokenURI} {
		if v == "" {
			missing = append(missing, field)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		p.add(name, "lacks "+strings.Join(missing, ", ")+": download the client's JSON again from the Google Cloud console (Google Auth Platform > Clients > the client > Download JSON), e.g. "+exampleOAuthClient)
		return GoogleOAuthClient{}, false
	}
	for field, v := range map[string]string{"auth_uri": w.AuthURI, "token_uri": w.TokenURI} {
		u, err := url.Parse(v)
		if err != nil || u.Host == "" || (u.Scheme != "https" && !(u.Scheme == "http" && outbound.Loopback(u.Hostname()))) {
			p.add(name, "has a "+field+" that is not an https URL (http only to a loopback emulator): download the client's JSON again, e.g. "+exampleOAuthClient)
			return GoogleOAuthClient{}, false
		}
	}
	return GoogleOAuthClient{ID: w.ClientID, Secret: w.ClientSecret, AuthURI: w.AuthURI, TokenURI: w.TokenURI, RedirectURIs: w.RedirectURIs}, true
}

// oauthString describes the connection settings for String, without
// secrets.
func (c Config) oauthString() string {
	if c.GoogleOAuth == nil {
		return "google_connect=off " + c.slackOAuthString()
	}
	return "google_connect=on redirect_uri=" + c.GoogleRedirectURI() + " " + c.slackOAuthString()
}

// slackOAuthString describes the Slack connection settings for String.
func (c Config) slackOAuthString() string {
	if !c.SlackConnect() {
		return "slack_connect=off"
	}
	return "slack_connect=on client_id=" + c.SlackClientID
}

// SlackCallbackPath is where Slack sends a person back, under PUBLIC_URL.
const SlackCallbackPath = "/slack/oauth/callback"

// SlackConnect reports whether people may connect their own Slack user,
// for their status during meetings.
func (c Config) SlackConnect() bool { return c.SlackClientID != "" }

// SlackRedirectURI is the redirect URL the Slack app must list:
// PUBLIC_URL/slack/oauth/callback; "" without PUBLIC_URL.
func (c Config) SlackRedirectURI() string {
	if c.PublicURL == "" {
		return ""
	}
	return c.PublicURL + SlackCallbackPath
}

// exampleSlackClient are valid SLACK_CLIENT_ID and SLACK_CLIENT_SECRET
// values, Slack's documentation's shape.
const exampleSlackClient = "SLACK_CLIENT_ID=1234567890.0987654321 SLACK_CLIENT_SECRET=<Client Secret, from Basic Information > App Credentials>"

// slackOAuth reads SLACK_CLIENT_ID and SLACK_CLIENT_SECRET, which turn on
// people's own Slack users (status), and checks what they need.
func (p *parser) slackOAuth(c *Config) {
	id, secret := p.get("SLACK_CLIENT_ID"), strings.TrimSpace(p.getenv("SLACK_CLIENT_SECRET"))
	switch {
	case id == "" && secret == "":
		return
	case id == "":
		p.add("SLACK_CLIENT_SECRET", "is set, but SLACK_CLIENT_ID is not: set both (Basic Information > App Credentials) or neither, e.g. "+exampleSlackClient)
		return
	case secret == "":
		p.add("SLACK_CLIENT_ID", "is set, but its Client Secret is not: set both (Basic Information > App Credentials) or neither, e.g. "+exampleSlackClient)
		return
	case !slackClientID.MatchString(id):
		p.bad("SLACK_CLIENT_ID", id, "is not a Slack app's Client ID (digits, a dot, digits), e.g. "+exampleSlackClient)
		return
	case strings.IndexFunc(secret, unicode.IsSpace) >= 0 || strings.HasPrefix(secret, "xox"):
		p.add("SLACK_CLIENT_SECRET", "must be the app's Client Secret (Basic Information > App Credentials), not a token, without spaces (the value is secret and not shown), e.g. "+exampleSlackClient)
		return
	}
	ok := true
	if !p.set("PUBLIC_URL") {
		p.add("SLACK_CLIENT_ID", "is set, but PUBLIC_URL is not: Slack sends people back to PUBLIC_URL"+SlackCallbackPath+", which must be an https URL reaching HTTP_ADDR, e.g. PUBLIC_URL="+examplePublicURL)
		ok = false
	}
	if !p.set("TOKEN_ENCRYPTION_KEY") {
		p.add("TOKEN_ENCRYPTION_KEY", "missing: SLACK_CLIENT_ID is set, so people's Slack tokens are stored, encrypted with it, e.g. "+keyring.Example)
		ok = false
	}
	if !p.selfServiceSet() {
		p.add("SLACK_CLIENT_ID", "is set, but self-service from Slack is off, so nobody can ask to connect: set SLACK_SIGNING_SECRET (request URLs) or SLACK_APP_TOKEN (Socket Mode) too, e.g. "+exampleSigningSecret)
		ok = false
	}
	if ok {
		c.SlackClientID, c.SlackClientSecret = id, secret
	}
}

// slackClientID is the shape of a Slack app's Client ID.
var slackClientID = regexp.MustCompile(`^[0-9]+\.[0-9]+$`)
