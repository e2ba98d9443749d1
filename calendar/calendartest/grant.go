package calendartest

import (
	"crypto/rand"
	"time"

	"golang.org/x/oauth2"
)

// Grant gives account a grant of the web client (OAuthClientJSON) with
// scopes, as a consent through the authorization endpoint would, without
// a browser, and returns its tokens: for tests of what a person's token
// may do. Its refresh token works with the token endpoint like any other.
func (s *Server) Grant(account string, scopes ...string) *oauth2.Token {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.oauth.init()
	s.oauth.granted[account] = union(scopes, s.oauth.granted[account])
	g := &grant{account: account, scopes: union(scopes, nil), refresh: "1//0g" + rand.Text()}
	s.oauth.grants[g.refresh] = g
	resp := s.issue(g)
	return &oauth2.Token{
		AccessToken: resp["access_token"].(string), TokenType: "Bearer", RefreshToken: g.refresh,
		Expiry: time.Now().Add(time.Duration(resp["expires_in"].(int)) * time.Second),
	}
}
