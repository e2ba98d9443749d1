package calendar

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/internal/outbound"
	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"
	"google.golang.org/api/googleapi"
)

// UserCredentialsCommand makes authorized-user credentials that can read
// Calendar for one Google account. Since June 2025 gcloud's own OAuth client
// may not ask for non-Cloud scopes such as Calendar's ("Access blocked"):
// the command names the operator's own Desktop app client (client.json,
// from a project with the Calendar API enabled), and gcloud requires the
// cloud-platform scope alongside.
const UserCredentialsCommand = "gcloud auth application-default login --client-id-file=client.json --scopes=" + scope + ",https://www.googleapis.com/auth/cloud-platform"

// explain turns a permanent failure into an error that tells the operator
// what to do, marked meetingbot.Permanent.
func (s *Source) explain(calendarID string, err error) error {
	fix := s.fix(calendarID, err)
	var rerr *oauth2.RetrieveError
	if errors.As(err, &rerr) {
		err = tokenError{rerr}
	}
	if addressUnverified(err) {
		return meetingbot.Permanent(fmt.Errorf("calendar %s: %s: %w: %w", calendarID, fix, meetingbot.ErrPushAddressUnverified, concise(err)))
	}
	return meetingbot.Permanent(fmt.Errorf("calendar %s: %s: %w", calendarID, fix, concise(err)))
}

// addressUnverified reports whether err is Google refusing a watch's
// address for its domain: reason push.webhookUrlUnauthorized, message
// "Unauthorized WebHook callback channel: <address>", HTTP 401 as the
// Cloud Storage JSON API lists it
// (https://cloud.google.com/storage/docs/json_api/v1/status-codes) and
// googleapis/google-api-php-client#569 saw it for a Calendar watch; one
// report has it as a 403. Either way it is about the address, not the
// credentials.
func addressUnverified(err error) bool {
	var gerr *googleapi.Error
	return errors.As(err, &gerr) && hasReason(gerr, "push.webhookUrlUnauthorized")
}

// addressFix says how to have Google post notifications to address:
// verify its domain for the project. Older Google guides to push
// notifications required it (a domain verified in Search Console, then
// added under the Cloud console's Domain verification), and a 2026
// report still meets the refusal.
func addressFix(address string) string {
	host := address
	if u, err := url.Parse(address); err == nil && u.Hostname() != "" {
		host = u.Hostname()
	}
	return fmt.Sprintf("Google refuses to post push notifications to %s (PUBLIC_URL) because the domain %s is not verified for the project: "+
		"verify %s in Google Search Console (https://search.google.com/search-console, as an owner), then add it in the Google Cloud console of the project of the credentials, "+
		"APIs & Services > Domain verification (https://console.cloud.google.com/apis/credentials/domainverification); "+
		"only the domain's owner can verify it, so for a host under a provider's domain (such as <app>.fly.dev) give the bot a host of a domain you own and set PUBLIC_URL to it; "+
		"until then every calendar is synced every CALENDAR_RESYNC_INTERVAL instead", address, host, host)
}

// tokenError words a token endpoint's refusal on one line; oauth2's own
// message quotes the whole response body.
type tokenError struct{ err *oauth2.RetrieveError }

func (e tokenError) Error() string {
	if e.err.Response == nil {
		return "token endpoint: " + oauthErrorCode(e.err)
	}
	return fmt.Sprintf("token endpoint: HTTP %d %s", e.err.Response.StatusCode, oauthErrorCode(e.err))
}

func (e tokenError) Unwrap() error { return e.err }

// concise drops the *url.Error around err: the request URL it quotes is
// long and says nothing the calendar ID does not.
func concise(err error) error {
	var uerr *url.Error
	if errors.As(err, &uerr) {
		return uerr.Err
	}
	return err
}

// fix says what went wrong and how to put it right.
func (s *Source) fix(calendarID string, err error) string {
	if errors.Is(err, errors.ErrUnsupported) {
		return fmt.Sprintf("the Calendar API at GOOGLE_API_ENDPOINT (%s) does not serve this method", s.endpoint)
	}
	if errors.Is(err, meetingbot.ErrNotConnected) {
		if s.creds.kind == "" {
			return "no connected Google account reads it, and the bot has no service account: its owner connects it with /meetingbot connect in Slack"
		}
		return connectedFix(calendarID)
	}
	var rerr *oauth2.RetrieveError
	if errors.As(err, &rerr) {
		return s.tokenFix(calendarID, oauthErrorCode(rerr))
	}
	if errors.Is(err, outbound.ErrRedirect) {
		return fmt.Sprintf("GOOGLE_API_ENDPOINT (%s) redirects to another host, where the access token is not sent: point it at the API itself", s.endpoint)
	}
	var gerr *googleapi.Error
	if !errors.As(err, &gerr) {
		return "cannot build the API client"
	}
	switch {
	case hasReason(gerr, "push.webhookUrlUnauthorized"):
		return addressFix(watchAddress(gerr))
	case hasReasonPrefix(gerr, "push.webhookUrl"):
		// events.watch: push.webhookUrlNotHttps, push.webhookUrlUnauthorized …
		return "Google refused the notification address of the watch: PUBLIC_URL must be an https URL that Google can reach, with a valid certificate"
	case gerr.Code == http.StatusNotFound:
		return "not found or not shared: " + s.shareFix(calendarID)
	case gerr.Code == http.StatusUnauthorized:
		return fmt.Sprintf("credentials rejected: check that the key in %s is valid and not deleted or disabled", s.creds.source)
	case gerr.Code == http.StatusForbidden && (hasReason(gerr, "accessNotConfigured") || hasReason(gerr, "SERVICE_DISABLED")):
		if s.creds.kind == google.AuthorizedUser {
			return fmt.Sprintf("the Google Calendar API is not enabled in the project these user credentials are billed to: "+
				"create them with your own Desktop OAuth client, in a project with the Calendar API enabled (%s), "+
				"or add \"quota_project_id\": \"<such a project>\" to the JSON in %s", UserCredentialsCommand, s.creds.source)
		}
		return "the Google Calendar API is not enabled: enable it in the Google Cloud project of the credentials"
	case gerr.Code == http.StatusForbidden:
		return "access denied: " + s.shareFix(calendarID)
	}
	return fmt.Sprintf("request refused (HTTP %d): this is a bug in the bot or a change in the API, please report it", gerr.Code)
}

// shareFix says how to give the bot read access to calendarID.
func (s *Source) shareFix(calendarID string) string {
	switch {
	case s.cfg.Impersonate:
		return fmt.Sprintf("check that %s is a user of the Workspace domain and that domain-wide delegation grants client ID %s the scope %s", calendarID, s.clientIDOrUnknown(), scope)
	case s.creds.clientEmail != "":
		return fmt.Sprintf("share %s's calendar with %s (See all event details)", calendarID, s.creds.clientEmail)
	}
	return fmt.Sprintf("share %s's calendar with the Google account of the authorized-user credentials (See all event details)", calendarID)
}

// tokenFix explains a refusal of the token endpoint.
func (s *Source) tokenFix(calendarID, code string) string {
	switch {
	case s.cfg.Impersonate && (code == "unauthorized_client" || code == "access_denied"):
		return fmt.Sprintf("impersonation refused: in the Google Workspace Admin console (Security > API controls > Domain-wide delegation) authorize client ID %s for the scope %s", s.clientIDOrUnknown(), scope)
	case s.cfg.Impersonate && code == "invalid_grant":
		return fmt.Sprintf("impersonation refused (invalid_grant): check that %s is a user of the Workspace domain, that the service account key is valid and that the host clock is correct", calendarID)
	case s.creds.kind == google.AuthorizedUser:
		return fmt.Sprintf("refresh token refused (%s): it expired or was revoked; create new authorized-user credentials with your own Desktop OAuth client (%s) and update %s; "+
			"if this comes back every 7 days, the OAuth consent screen is in Testing: publish the app (Google Auth Platform > Audience > Publish app)",
			code, UserCredentialsCommand, s.creds.source)
	}
	return fmt.Sprintf("service account key refused (%s): check that the key in %s is not deleted or disabled and that the host clock is correct", code, s.creds.source)
}

func (s *Source) clientIDOrUnknown() string {
	if s.creds.clientID != "" {
		return s.creds.clientID
	}
	return "(the service account's client_id)"
}

// watchAddress is the address Google's refusal names ("Unauthorized
// WebHook callback channel: <address>"), or "PUBLIC_URL's address" when
// it names none.
func watchAddress(gerr *googleapi.Error) string {
	for _, m := range append([]string{gerr.Message}, reasonMessages(gerr)...) {
		if _, addr, ok := strings.Cut(m, "callback channel: "); ok && strings.TrimSpace(addr) != "" {
			return strings.TrimSpace(addr)
		}
	}
	return "PUBLIC_URL's address"
}

func reasonMessages(gerr *googleapi.Error) []string {
	out := make([]string, 0, len(gerr.Errors))
	for _, e := range gerr.Errors {
		out = append(out, e.Message)
	}
	return out
}
