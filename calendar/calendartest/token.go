package calendartest

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"net/http"
	"strings"
	"time"
)

// TokenFault is an injected failure of one token request, answered as
// RFC 6749 section 5.2 says: {"error": Code, "error_description": ...}.
type TokenFault struct {
	Status      int
	Code        string
	Description string
}

// Token faults Google's token endpoint answers with.
var (
	// InvalidGrant is a revoked refresh token or a rejected key.
	InvalidGrant = TokenFault{Status: http.StatusBadRequest, Code: "invalid_grant", Description: "Token has been expired or revoked."}
	// UnauthorizedClient is a delegation the Workspace admin did not grant.
	UnauthorizedClient = TokenFault{Status: http.StatusUnauthorized, Code: "unauthorized_client", Description: "Client is unauthorized to retrieve access tokens using this method, or client not authorized for any of the scopes requested."}
	// TokenUnavailable is a transient failure of the token endpoint.
	TokenUnavailable = TokenFault{Status: http.StatusServiceUnavailable, Code: "internal_failure", Description: "Backend Error"}
)

// ServiceAccountJSON returns a service-account key whose token_uri points
// at the server. Its private key is generated when the server starts.
func (s *Server) ServiceAccountJSON() []byte {
	der, err := x509.MarshalPKCS8PrivateKey(s.key)
	if err != nil {
		panic("calendartest: marshal key: " + err.Error())
	}
	b, _ := json.MarshalIndent(map[string]string{
		"type":                        "service_account",
		"project_id":                  "meetingbot-test",
		"private_key_id":              "0123456789abcdef0123456789abcdef01234567",
		"private_key":                 string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email":                s.saEmail,
		"client_id":                   s.saClientID,
		"auth_uri":                    "https://accounts.google.com/o/oauth2/auth",
		"token_uri":                   s.TokenURL(),
		"auth_provider_x509_cert_url": "https://www.googleapis.com/oauth2/v1/certs",
		"universe_domain":             "googleapis.com",
	}, "", "  ")
	return b
}

// ServiceAccountEmail returns the client_email of ServiceAccountJSON.
func (s *Server) ServiceAccountEmail() string { return s.saEmail }

// AuthorizedUserJSON returns authorized-user credentials (as written by
// gcloud auth application-default login) whose token_uri points at the
// server. Tokens obtained with it act for AuthorizedUserEmail.
func (s *Server) AuthorizedUserJSON() []byte {
	b, _ := json.MarshalIndent(map[string]string{
		"type":          "authorized_user",
		"client_id":     "123456789012-test.apps.googleusercontent.com",
		"client_secret": "test-client-secret",
		"refresh_token": s.refreshToken,
		"token_uri":     s.TokenURL(),
	}, "", "  ")
	return b
}

// AuthorizedUserEmail returns the principal of AuthorizedUserJSON tokens.
func (s *Server) AuthorizedUserEmail() string { return s.userEmail }

// SetDelegation allows (the default) or refuses domain-wide delegation:
// when refused, a JWT with a sub claim gets unauthorized_client.
func (s *Server) SetDelegation(allowed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.delegation = allowed
}

// QueueTokenFaults makes the next token requests fail, in order.
func (s *Server) QueueTokenFaults(faults ...TokenFault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokenFaults = append(s.tokenFaults, faults...)
}

// TokenRequests returns how many token requests the server received.
func (s *Server) TokenRequests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tokenCount
}

// Subjects returns the sub claims of the JWT grants received, in order;
// an empty string stands for a grant without sub.
func (s *Server) Subjects() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.subjects...)
}

// RevokeTokens forgets every access token issued, so the next API request
// with one of them gets 401.
func (s *Server) RevokeTokens() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.tokens)
}

func (s *Server) serveToken(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		writeTokenError(w, TokenFault{http.StatusBadRequest, "invalid_request", "malformed form"})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokenCount++
	if len(s.tokenFaults) > 0 {
		f := s.tokenFaults[0]
		s.tokenFaults = s.tokenFaults[1:]
		writeTokenError(w, f)
		return
	}
	var principal string
	switch r.PostForm.Get("grant_type") {
	case "urn:ietf:params:oauth:grant-type:jwt-bearer":
		claims, err := s.verifyJWT(r.PostForm.Get("assertion"))
		if err != nil {
			writeTokenError(w, TokenFault{http.StatusBadRequest, "invalid_grant", "Invalid JWT Signature."})
			return
		}
		s.subjects = append(s.subjects, claims.Sub)
		principal = claims.Iss
		if claims.Sub != "" {
			if !s.delegation {
				writeTokenError(w, UnauthorizedClient)
				return
			}
			principal = claims.Sub
		}
	case "authorization_code":
		s.exchange(w, r)
		return
	case "refresh_token":
		if s.refreshPersonal(w, r) {
			return
		}
		if r.PostForm.Get("refresh_token") != s.refreshToken {
			writeTokenError(w, InvalidGrant)
			return
		}
		principal = s.userEmail
	default:
		writeTokenError(w, TokenFault{http.StatusBadRequest, "unsupported_grant_type", "Invalid grant_type: " + r.PostForm.Get("grant_type")})
		return
	}
	token := "ya29.test-" + rand.Text()
	s.tokens[token] = principal
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	json.NewEncoder(w).Encode(map[string]any{
		"access_token": token,
		"token_type":   "Bearer",
		"expires_in":   3600,
	})
}

func writeTokenError(w http.ResponseWriter, f TokenFault) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(f.Status)
	json.NewEncoder(w).Encode(map[string]string{"error": f.Code, "error_description": f.Description})
}

type jwtClaims struct {
	Iss   string `json:"iss"`
	Sub   string `json:"sub"`
	Scope string `json:"scope"`
	Aud   string `json:"aud"`
	Exp   int64  `json:"exp"`
}

// verifyJWT checks an RS256 assertion against the server's key, its
// audience and its expiry, as Google's token endpoint does.
func (s *Server) verifyJWT(assertion string) (jwtClaims, error) {
	var c jwtClaims
	parts := strings.Split(assertion, ".")
	if len(parts) != 3 {
		return c, errors.New("not a JWT")
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return c, err
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err := rsa.VerifyPKCS1v15(&s.key.PublicKey, crypto.SHA256, sum[:], sig); err != nil {
		return c, err
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return c, err
	}
	if err := json.Unmarshal(payload, &c); err != nil {
		return c, err
	}
	if c.Iss != s.saEmail || c.Aud != s.TokenURL() || c.Scope == "" {
		return c, errors.New("wrong issuer, audience or scope")
	}
	if time.Unix(c.Exp, 0).Before(time.Now()) {
		return c, errors.New("expired")
	}
	return c, nil
}

// principal returns who the request's bearer token acts for. s.mu must be
// held.
func (s *Server) principal(r *http.Request) (string, bool) {
	p, _, ok := s.caller(r)
	return p, ok
}

// caller returns who the request's bearer token acts for, and whether it
// is a person's own token (oauth.go). s.mu must be held.
func (s *Server) caller(r *http.Request) (principal string, personal, ok bool) {
	token, found := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !found {
		return "", false, false
	}
	p, ok := s.tokens[token]
	return p, s.oauth.personal[token] != nil, ok
}
