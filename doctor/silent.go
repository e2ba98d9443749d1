package doctor

import (
	"regexp"
	"strings"
)

// A service that did not answer (no connection, no name, a timeout) is not
// one that refused: the fix is the network or the URL, not the
// credentials. These say which URL did not answer, since a call to one
// service can fail at another's: a Calendar read first fetches a token at
// the credentials' token_uri.

// requestURL finds the URLs net/http names in an error ("Get \"…\": …");
// the last is the innermost, the call that failed. The oauth2 package
// words its token errors with %v, so the chain of *url.Error cannot be
// walked: the text is all there is.
var requestURL = regexp.MustCompile(`(?:Get|Post|Put|Patch|Delete|Head) "([^"]+)"`)

// failedURL returns the URL of the innermost request err names, without
// its query (which may carry a key), or "".
func failedURL(err error) string {
	m := requestURL.FindAllStringSubmatch(err.Error(), -1)
	if len(m) == 0 {
		return ""
	}
	u, _, _ := strings.Cut(m[len(m)-1][1], "?")
	return u
}

// didNotAnswer words a call to service that got no answer, naming the URL
// that failed when the error does, else base, the service's base URL.
func didNotAnswer(service, base string, err error) string {
	u := failedURL(err)
	if u == "" {
		u = base
	}
	return service + " did not answer at " + u + ": " + err.Error()
}

// googleSilent words a Calendar check whose call got no answer: at the
// Calendar API (GOOGLE_API_ENDPOINT), or before it, at the token endpoint
// of the credentials (their token_uri), whose fix is elsewhere.
func (d *doctorEnv) googleSilent(err error) outcome {
	u := failedURL(err)
	if u != "" && !strings.HasPrefix(u, d.cfg.GoogleEndpoint) && !strings.HasPrefix(u, strings.TrimSuffix(d.cfg.GoogleEndpoint, "/")) {
		return fail("Google's token endpoint did not answer at "+u+" (token_uri of the credentials): "+err.Error(),
			"run bot doctor again; if it keeps failing, check that this host reaches "+u+" (a proxy or firewall), or the token_uri in the credentials' JSON (GOOGLE_APPLICATION_CREDENTIALS or GOOGLE_CREDENTIALS_JSON)")
	}
	return fail(didNotAnswer("Google Calendar", d.cfg.GoogleEndpoint, err),
		"run bot doctor again; if it keeps failing, check GOOGLE_API_ENDPOINT ("+d.cfg.GoogleEndpoint+") and the network")
}
