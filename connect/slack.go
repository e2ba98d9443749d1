package connect

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"
	"golang.org/x/oauth2"

	"github.com/meetingbot/meetingbot"
)

// SlackUserScopes are the user scopes a Slack connection asks for: to read
// the person's status (so that one they set is never replaced) and to set
// it while they are in a meeting.
var SlackUserScopes = []string{"users.profile:read", "users.profile:write"}

// SlackConfig configures the Slack provider.
type SlackConfig struct {
	// ClientID and ClientSecret are SLACK_CLIENT_ID and SLACK_CLIENT_SECRET
	// (Basic Information > App Credentials).
	ClientID, ClientSecret string
	// APIURL is SLACK_API_URL, ending in /api/: oauth.v2.access is under
	// it, and /oauth/v2/authorize on its origin.
	APIURL string
	// RedirectURI is PUBLIC_URL/slack/oauth/callback.
	RedirectURI string
	// TeamID is the workspace's ID (auth.test's team_id): a grant for
	// another workspace is refused. When it is "", Team says it.
	TeamID string
	// Team returns the workspace's ID when TeamID is "" (the start-up's
	// auth.test did not answer): asked at each callback until it answers.
	// A grant the workspace of which cannot be checked is refused: the
	// check fails closed.
	Team       func(ctx context.Context) (string, error)
	HTTPClient *http.Client
	Now        func() time.Time
}

// Slack is the Provider of people's own Slack users, with Slack's OAuth v2
// ("Installing with OAuth", https://docs.slack.dev/authentication/installing-with-oauth):
// the user token is authed_user.access_token of oauth.v2.access, and with
// token rotation on it expires and is refreshed with its refresh token.
type Slack struct {
	cfg       SlackConfig
	authorize string
	http      *http.Client
	now       func() time.Time

	mu   sync.Mutex
	team string // the workspace's ID once known
}

// teamID returns the workspace's ID: TeamID, or what Team answered once.
func (s *Slack) teamID(ctx context.Context) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.team != "" {
		return s.team, nil
	}
	id, err := s.cfg.Team(ctx)
	if err != nil {
		return "", err
	}
	if id == "" {
		return "", errors.New("no team_id")
	}
	s.team = id
	return id, nil
}

// NewSlack returns the Slack provider.
func NewSlack(cfg SlackConfig) (*Slack, error) {
	if cfg.ClientID == "" || cfg.ClientSecret == "" {
		return nil, errors.New("connect: Slack needs SLACK_CLIENT_ID and SLACK_CLIENT_SECRET")
	}
	if cfg.TeamID == "" && cfg.Team == nil {
		return nil, errors.New("connect: Slack needs the workspace's ID (TeamID or Team), to refuse another workspace's grants")
	}
	u, err := url.Parse(cfg.APIURL)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("connect: SLACK_API_URL %q is not a URL", cfg.APIURL)
	}
	s := &Slack{cfg: cfg, authorize: (&url.URL{Scheme: u.Scheme, Host: u.Host, Path: "/oauth/v2/authorize"}).String(), http: cfg.HTTPClient, now: cfg.Now, team: cfg.TeamID}
	if s.http == nil {
		s.http = &http.Client{Timeout: 30 * time.Second}
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s, nil
}

func (s *Slack) Name() meetingbot.Provider { return meetingbot.ProviderSlack }
func (s *Slack) Title() string             { return "Slack" }

// AuthCodeURL asks for the user scopes only, in the bot's workspace. The
// state and its cookie bind the consent to the browser; the verifier is
// not sent (the app authenticates with its client secret).
func (s *Slack) AuthCodeURL(state, _, _ string, _ []string) string {
	q := url.Values{
		"client_id":    {s.cfg.ClientID},
		"user_scope":   {strings.Join(SlackUserScopes, ",")},
		"redirect_uri": {s.cfg.RedirectURI},
		"state":        {state},
	}
	s.mu.Lock()
	if s.team != "" {
		q.Set("team", s.team)
	}
	s.mu.Unlock()
	return s.authorize + "?" + q.Encode()
}

// slackError turns Slack's refusal into the RetrieveError the flow and the
// tokens branch on: a revoked or used grant is invalid_grant.
func slackError(err error) error {
	var se slack.SlackErrorResponse
	if !errors.As(err, &se) {
		return err
	}
	code := se.Err
	switch code {
	case "invalid_refresh_token", "token_revoked", "token_expired", "invalid_code", "code_already_used":
		code = "invalid_grant"
	}
	return &oauth2.RetrieveError{ErrorCode: code, ErrorDescription: se.Err}
}

// Exchange calls oauth.v2.access and keeps the user token. A grant for
// another workspace, or without users.profile:write, is refused.
func (s *Slack) Exchange(ctx context.Context, code, _ string) (Grant, error) {
	resp, err := slack.GetOAuthV2ResponseContext(ctx, s.http, s.cfg.ClientID, s.cfg.ClientSecret, code, s.cfg.RedirectURI, slack.OAuthOptionAPIURL(s.cfg.APIURL))
	if err != nil {
		return Grant{}, slackError(err)
	}
	u := resp.AuthedUser
	g := Grant{Account: u.ID, Scopes: strings.Split(u.Scope, ","), Token: &oauth2.Token{AccessToken: u.AccessToken, RefreshToken: u.RefreshToken, TokenType: "user"}}
	if u.ExpiresIn > 0 {
		g.Token.Expiry = s.now().Add(time.Duration(u.ExpiresIn) * time.Second)
	}
	if u.AccessToken == "" || u.ID == "" {
		return g, &Refusal{Status: http.StatusBadGateway, What: "Slack gave no user token, so nothing was stored.", Fix: "Try again in a minute."}
	}
	team, err := s.teamID(ctx)
	switch {
	case err != nil:
		// Which workspace is the bot's is unknown (auth.test did not
		// answer): refused rather than kept unchecked.
		return g, &Refusal{Status: http.StatusServiceUnavailable, What: "I could not check that you signed in to the bot's Slack workspace (Slack did not answer me), so nothing was stored.", Fix: "Try again in a minute."}
	case resp.Team.ID != team:
		return g, &Refusal{Status: http.StatusForbidden, What: "You signed in to another Slack workspace than the bot's, so nothing was stored.", Fix: "Pick the bot's workspace on Slack's page."}
	case !slices.Contains(g.Scopes, "users.profile:write"):
		return g, &Refusal{Status: http.StatusForbidden, What: "Slack did not give the permission to set your status, so nothing was stored.", Fix: "Start again and allow it on Slack's page."}
	}
	return g, nil
}

// Expect is the Slack user itself: people connect their own user only.
func (s *Slack) Expect(_ context.Context, userID string) (string, error) { return userID, nil }

// Revoke calls auth.revoke with the user token.
func (s *Slack) Revoke(ctx context.Context, tok *oauth2.Token) error {
	api := slack.New(tok.AccessToken, slack.OptionAPIURL(s.cfg.APIURL), slack.OptionHTTPClient(s.http))
	if _, err := api.SendAuthRevokeContext(ctx, ""); err != nil {
		return fmt.Errorf("auth.revoke: %w", err)
	}
	return nil
}

// TokenSource returns tok; with token rotation, refreshed through
// oauth.v2.access (grant_type refresh_token) when it expires.
func (s *Slack) TokenSource(ctx context.Context, tok *oauth2.Token) oauth2.TokenSource {
	return &slackTokens{ctx: ctx, s: s, tok: tok}
}

type slackTokens struct {
	ctx context.Context
	s   *Slack
	tok *oauth2.Token
}

func (t *slackTokens) Token() (*oauth2.Token, error) {
	if t.tok.RefreshToken == "" || (!t.tok.Expiry.IsZero() && t.tok.Expiry.After(t.s.now().Add(time.Minute))) {
		return t.tok, nil // without rotation a user token does not expire
	}
	resp, err := slack.RefreshOAuthV2TokenContext(t.ctx, t.s.http, t.s.cfg.ClientID, t.s.cfg.ClientSecret, t.tok.RefreshToken, slack.OAuthOptionAPIURL(t.s.cfg.APIURL))
	if err != nil {
		return nil, slackError(err)
	}
	t.tok = &oauth2.Token{AccessToken: resp.AccessToken, RefreshToken: resp.RefreshToken, TokenType: "user"}
	if resp.ExpiresIn > 0 {
		t.tok.Expiry = t.s.now().Add(time.Duration(resp.ExpiresIn) * time.Second)
	}
	return t.tok, nil
}
