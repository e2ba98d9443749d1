package calendar

import (
	"context"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"
	"google.golang.org/api/calendar/v3"
)

// Names of the variables credentials come from, for error messages.
const (
	envCredentialsFile = "GOOGLE_APPLICATION_CREDENTIALS"
	envCredentialsJSON = "GOOGLE_CREDENTIALS_JSON"
)

// scope is read-only access to events and calendars.
const scope = calendar.CalendarReadonlyScope

// credentials is what the source knows of its key: its kind and the
// non-secret fields it names in error messages.
type credentials struct {
	json []byte
	// source names where the JSON came from, e.g. GOOGLE_CREDENTIALS_JSON.
	source string
	kind   google.CredentialsType
	// clientEmail and clientID are the service account's.
	clientEmail, clientID string
	// quotaProject is the file's quota_project_id: the project Calendar
	// bills user credentials' requests to (gcloud writes it).
	quotaProject string
}

// keyFile holds the fields checked before handing the JSON to oauth2.
type keyFile struct {
	Type         string `json:"type"`
	ClientEmail  string `json:"client_email"`
	ClientID     string `json:"client_id"`
	PrivateKey   string `json:"private_key"`
	ClientSecret string `json:"client_secret"`
	RefreshToken string `json:"refresh_token"`
	QuotaProject string `json:"quota_project_id"`
	// Workload identity federation's (external_account).
	Audience         string          `json:"audience"`
	SubjectTokenType string          `json:"subject_token_type"`
	TokenURL         string          `json:"token_url"`
	Impersonation    string          `json:"service_account_impersonation_url"`
	CredentialSource json.RawMessage `json:"credential_source"`
}

// loadCredentials reads and checks the configured credentials. Its errors
// name the variable at fault and never quote the secret.
func loadCredentials(cfg Config) (credentials, error) {
	c := credentials{json: cfg.CredentialsJSON, source: envCredentialsJSON}
	switch {
	case cfg.CredentialsFile != "" && len(cfg.CredentialsJSON) > 0:
		return c, fmt.Errorf("both %s and %s are set: set only one", envCredentialsFile, envCredentialsJSON)
	case cfg.CredentialsFile != "":
		c.source = envCredentialsFile
		b, err := os.ReadFile(cfg.CredentialsFile)
		if err != nil {
			return c, fmt.Errorf("%s: %w", envCredentialsFile, err)
		}
		c.json = b
	case len(cfg.CredentialsJSON) == 0:
		return c, fmt.Errorf("%w: set %s to the path of a service-account key, authorized-user or workload identity federation (external_account) JSON, or %s to its content", errNoCredentials, envCredentialsFile, envCredentialsJSON)
	}
	var f keyFile
	if err := json.Unmarshal(c.json, &f); err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			return c, fmt.Errorf("%s: not valid JSON (syntax error at byte %d): want a service-account key, authorized-user or workload identity federation (external_account) JSON", c.source, syn.Offset)
		}
		return c, fmt.Errorf("%s: not a credentials JSON object: want a service-account key, authorized-user or workload identity federation (external_account) JSON", c.source)
	}
	c.quotaProject = f.QuotaProject
	var missing []string
	need := func(field, v string) {
		if v == "" {
			missing = append(missing, field)
		}
	}
	switch c.kind = google.CredentialsType(f.Type); c.kind {
	case google.ServiceAccount:
		need("client_email", f.ClientEmail)
		need("private_key", f.PrivateKey)
		c.clientEmail, c.clientID = f.ClientEmail, f.ClientID
		if f.PrivateKey != "" {
			if !validKey(f.PrivateKey) {
				return c, fmt.Errorf("%s: private_key is not a PEM-encoded RSA private key: download a new JSON key for the service account", c.source)
			}
		}
	case google.AuthorizedUser:
		need("client_id", f.ClientID)
		need("client_secret", f.ClientSecret)
		need("refresh_token", f.RefreshToken)
		if cfg.Impersonate {
			return c, fmt.Errorf("%s: GOOGLE_IMPERSONATE=true needs a service-account key, not authorized-user credentials", c.source)
		}
	case google.ExternalAccount:
		// Workload identity federation, for a bot on GKE, AWS or Azure
		// without a long-lived key: the library exchanges the platform's
		// token and, where the file names a service account, impersonates
		// it; calendars are then shared with that account.
		need("audience", f.Audience)
		need("subject_token_type", f.SubjectTokenType)
		need("token_url", f.TokenURL)
		if len(f.CredentialSource) == 0 {
			missing = append(missing, "credential_source")
		}
		c.clientEmail = impersonated(f.Impersonation)
		if cfg.Impersonate {
			return c, fmt.Errorf("%s: GOOGLE_IMPERSONATE=true needs a service-account key, which signs the delegation; workload identity federation credentials cannot", c.source)
		}
	default:
		t := f.Type
		if len(t) > 40 {
			t = t[:40] + "…"
		}
		return c, fmt.Errorf("%s: credentials type %q is not supported: want \"service_account\", \"authorized_user\" or \"external_account\"", c.source, t)
	}
	if len(missing) > 0 {
		return c, fmt.Errorf("%s: %s credentials lack %v", c.source, c.kind, missing)
	}
	return c, nil
}

// tokenSource returns a token source acting as subject ("" for the key's
// own identity). ctx carries the HTTP client token requests use.
func (c credentials) tokenSource(ctx context.Context, subject string) (oauth2.TokenSource, error) {
	creds, err := google.CredentialsFromJSONWithTypeAndParams(ctx, c.json, c.kind, google.CredentialsParams{
		Scopes:  []string{scope},
		Subject: subject,
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.source, err)
	}
	return creds.TokenSource, nil
}

// impersonated returns the service account a workload identity
// federation file impersonates, from its
// …/serviceAccounts/NAME@PROJECT.iam.gserviceaccount.com:generateAccessToken
// URL; "" for none.
func impersonated(url string) string {
	_, rest, ok := strings.Cut(url, "/serviceAccounts/")
	if !ok {
		return ""
	}
	email, _, _ := strings.Cut(rest, ":")
	return email
}

// userProject sends the credentials' quota project with every API request,
// as X-Goog-User-Project, which is what the client library's own
// credentials options do with quota_project_id: the bot builds its HTTP
// client itself, so the library does not.
type userProject struct {
	base    http.RoundTripper
	project string
}

func (t userProject) RoundTrip(r *http.Request) (*http.Response, error) {
	r2 := *r // a RoundTripper must not change the caller's request
	r2.Header = r.Header.Clone()
	r2.Header.Set("X-Goog-User-Project", t.project)
	return t.base.RoundTrip(&r2)
}

// validKey reports whether pemKey holds an RSA private key oauth2 can sign
// with, in PKCS #8 or PKCS #1 form.
func validKey(pemKey string) bool {
	b, _ := pem.Decode([]byte(pemKey))
	if b == nil {
		return false
	}
	if k, err := x509.ParsePKCS8PrivateKey(b.Bytes); err == nil {
		_, ok := k.(*rsa.PrivateKey)
		return ok
	}
	_, err := x509.ParsePKCS1PrivateKey(b.Bytes)
	return err == nil
}
