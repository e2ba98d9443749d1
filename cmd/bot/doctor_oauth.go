package main

import (
	"context"
	"strings"
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
