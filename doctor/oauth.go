package doctor

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// googleOAuthChecks check the OAuth client people connect their own
// Google accounts with: its file must list the redirect URI the bot sends
// them back to, PUBLIC_URL/google/oauth/callback, or Google's consent page
// refuses them with redirect_uri_mismatch. The file lists the URIs
// registered when it was downloaded; one that lists none is not judged.
func googleOAuthChecks(d *doctorEnv) []check {
	if !d.cfg.GoogleConnect() {
		return nil
	}
	return []check{{"Google OAuth client", func(context.Context) outcome {
		uri := d.cfg.GoogleRedirectURI()
		c := d.cfg.GoogleOAuth
		switch {
		case len(c.RedirectURIs) == 0:
			return pass("client %s: its file lists no redirect URIs to check; the console must list %s", c.ID, uri)
		case !c.Registers(uri):
			return fail("client "+c.ID+" does not list the redirect URI "+uri+" (it lists "+strings.Join(c.RedirectURIs, ", ")+")",
				"add "+uri+" under Authorized redirect URIs of the client (Google Cloud console > Google Auth Platform > Clients), download its JSON again and put it in GOOGLE_OAUTH_CLIENT_JSON")
		}
		return pass("client %s lists the redirect URI %s", c.ID, uri)
	}}}
}

// slackOAuthChecks check the Slack app people connect their own Slack
// user with (SLACK_CLIENT_ID): its Redirect URLs (the manifests'
// oauth_config.redirect_urls) must list PUBLIC_URL/slack/oauth/callback,
// where the bot sends them back, or Slack stops them on its authorization
// page. The bot cannot read the app's settings, so it asks that page, as
// a person's browser would, without signing in or following it further:
// Slack answers a redirect_uri the app does not list with an error page
// ("redirect_uri did not match any configured URIs", ngs/ts-dakoku#20;
// an error page instead of the OAuth page, slackapi/bolt-js#1115), and an
// unknown client_id likewise.
func slackOAuthChecks(d *doctorEnv) []check {
	if !d.cfg.SlackConnect() {
		return nil
	}
	return []check{{"Slack OAuth client", func(ctx context.Context) outcome {
		uri := d.cfg.SlackRedirectURI()
		fix := "list " + uri + " under the app's Redirect URLs (api.slack.com/apps > the app > OAuth & Permissions > Redirect URLs; in a manifest, oauth_config.redirect_urls, as slack-app-manifest.yaml has it with meetingbot.example.com replaced by PUBLIC_URL's host) " +
			"and check that SLACK_CLIENT_ID is the app's Client ID (Basic Information > App Credentials)"
		if uri == "" {
			return fail("PUBLIC_URL is not set, so Slack has nowhere to send people back", "set PUBLIC_URL to the bot's public https base URL, then "+fix)
		}
		u, err := url.Parse(d.cfg.SlackAPIURL)
		if err != nil {
			return fail("SLACK_API_URL is not a URL: "+err.Error(), "set SLACK_API_URL to Slack's Web API base URL")
		}
		page := (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/oauth/v2/authorize", RawQuery: url.Values{
			"client_id": {d.cfg.SlackClientID}, "user_scope": {"users.profile:read,users.profile:write"}, "redirect_uri": {uri},
		}.Encode()}).String()
		ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, page, nil)
		if err != nil {
			return fail("cannot ask Slack: "+err.Error(), fix)
		}
		client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := client.Do(req)
		if err != nil {
			return fail("Slack's authorization page cannot be reached: "+err.Error(), "check the network and SLACK_API_URL")
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 256<<10))
		text := strings.ToLower(string(body))
		refused := false
		for _, sign := range []string{"did not match any configured uris", "bad_redirect_uri", "invalid_client_id", "invalid client_id"} {
			refused = refused || strings.Contains(text, sign)
		}
		if refused {
			return fail("Slack's authorization page refuses client "+d.cfg.SlackClientID+" with the redirect URL "+uri+" (HTTP "+strconv.Itoa(resp.StatusCode)+")", fix)
		}
		return pass("Slack's authorization page takes client %s with the redirect URL %s", d.cfg.SlackClientID, uri)
	}}}
}
