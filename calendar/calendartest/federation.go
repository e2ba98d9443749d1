package calendartest

import (
	"crypto/rand"
	"encoding/json"
	"net/http"
	"strings"
	"time"
)

// Workload identity federation: a workload outside Google Cloud (GKE, AWS,
// Azure, any OIDC issuer) exchanges a token of its own platform for a
// federated access token at the Security Token Service (RFC 8693 token
// exchange, https://cloud.google.com/iam/docs/reference/sts/rest/v1/TopLevel/token),
// and with it impersonates a service account through the IAM Credentials
// API's generateAccessToken
// (https://cloud.google.com/iam/docs/reference/credentials/rest/v1/projects.serviceAccounts/generateAccessToken),
// whose token then reads calendars as the service account. The
// credential configuration file ("type": "external_account") names the
// subject token's source, the STS token_url and the impersonation URL
// ("Workload identity federation", credential configuration files).

// Paths of the federation endpoints under URL().
const (
	stsPath         = "/v1/token"
	impersonatePath = "/v1/projects/-/serviceAccounts/"
)

// ExternalAccountJSON returns a workload identity federation credential
// configuration whose subject token is read from subjectTokenFile, whose
// STS and impersonation URLs point at the server, and which impersonates
// ServiceAccountEmail. The server accepts subjectToken as the platform's
// token.
func (s *Server) ExternalAccountJSON(subjectTokenFile, subjectToken string) []byte {
	s.mu.Lock()
	s.subjectToken = subjectToken
	s.mu.Unlock()
	b, _ := json.MarshalIndent(map[string]any{
		"type":                              "external_account",
		"audience":                          "//iam.googleapis.com/projects/123456789/locations/global/workloadIdentityPools/meetingbot/providers/ci",
		"subject_token_type":                "urn:ietf:params:oauth:token-type:jwt",
		"token_url":                         s.base + stsPath,
		"service_account_impersonation_url": s.base + impersonatePath + s.saEmail + ":generateAccessToken",
		"credential_source":                 map[string]any{"file": subjectTokenFile},
	}, "", "  ")
	return b
}

// serveSTS answers the token exchange: a federated token for a subject
// token the server accepts, else invalid_grant.
func (s *Server) serveSTS(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		writeTokenError(w, TokenFault{http.StatusBadRequest, "invalid_request", "malformed form"})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokenCount++
	switch {
	case r.PostForm.Get("grant_type") != "urn:ietf:params:oauth:grant-type:token-exchange":
		writeTokenError(w, TokenFault{http.StatusBadRequest, "unsupported_grant_type", "Invalid grant_type"})
		return
	case s.subjectToken == "" || r.PostForm.Get("subject_token") != s.subjectToken:
		writeTokenError(w, TokenFault{http.StatusBadRequest, "invalid_grant", "The subject token is invalid."})
		return
	}
	tok := "ya29.d.federated-" + rand.Text()
	s.federated[tok] = true
	writeJSON(w, map[string]any{
		"access_token":      tok,
		"issued_token_type": "urn:ietf:params:oauth:token-type:access_token",
		"token_type":        "Bearer",
		"expires_in":        3600,
	})
}

// serveImpersonate answers generateAccessToken for the service account,
// to a federated token.
func (s *Server) serveImpersonate(w http.ResponseWriter, r *http.Request) {
	name, ok := strings.CutSuffix(r.PathValue("account"), ":generateAccessToken")
	s.mu.Lock()
	defer s.mu.Unlock()
	bearer, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	switch {
	case !ok || name != s.saEmail:
		writeError(w, http.StatusNotFound, "global", "notFound", "Not found; Gaia id not found for email "+name)
		return
	case !s.federated[bearer]:
		writeError(w, http.StatusUnauthorized, "global", "authError", "Request had invalid authentication credentials.")
		return
	}
	tok := "ya29.c.impersonated-" + rand.Text()
	s.tokens[tok] = s.saEmail
	writeJSON(w, map[string]string{"accessToken": tok, "expireTime": time.Now().Add(time.Hour).UTC().Format(time.RFC3339)})
}
