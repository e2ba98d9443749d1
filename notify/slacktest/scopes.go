package slacktest

import "strings"

// DefaultScopes are the bot scopes a token has unless SetScopes says
// otherwise: those of the bot's app manifests (slack-app-manifest.yaml),
// in their order.
var DefaultScopes = []string{
	"chat:write", "im:write", "users:read", "users:read.email", "channels:read",
	"groups:read", "channels:history", "groups:history", "im:history", "commands",
}

// SetScopes sets the scopes every valid token was granted, as Slack names
// them in the x-oauth-scopes header of each Web API answer to a call made
// with a valid token: comma-separated (Slack's Node SDK splits the header
// on commas, slackapi/node-slack-sdk packages/web-api/src/WebClient.ts).
// The emulator does not refuse calls a scope is missing for.
func (s *Server) SetScopes(scopes ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.scopes = append([]string{}, scopes...)
	s.scopesSet = true
}

// scopeHeader is the x-oauth-scopes header of an answer to a valid token.
func (s *Server) scopeHeader() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.scopesSet {
		return strings.Join(DefaultScopes, ",")
	}
	return strings.Join(s.scopes, ",")
}
