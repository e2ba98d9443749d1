package notify

import (
	"context"
	"net/http"
	"strings"
	"sync"

	"github.com/slack-go/slack"
)

// Grant is what auth.test says of the token: whose it is, and the scopes
// it was granted.
type Grant struct {
	Team, TeamID, User, UserID string
	// Scopes are the token's scopes, from the x-oauth-scopes header of
	// Slack's answer; ScopesKnown is false when the answer had none (a
	// proxy at SLACK_API_URL that drops it).
	Scopes      []string
	ScopesKnown bool
}

// Grant calls auth.test, as Check does, and returns the token's identity
// and scopes. Slack names the scopes of the token that made a call in the
// x-oauth-scopes response header, comma-separated, the only way to read
// them back through the API: Slack's own Node SDK reads it into
// response_metadata.scopes (slackapi/node-slack-sdk,
// packages/web-api/src/WebClient.ts, buildResult), and
// slack-ruby-client#378 asks for it to check an existing token's scopes
// with auth.test. Errors are Check's.
func (s *Slack) Grant(ctx context.Context) (Grant, error) {
	h := &headerKeeper{do: s.cfg.HTTPClient}
	api := slack.New(s.cfg.Token, slack.OptionAPIURL(s.cfg.APIURL), slack.OptionHTTPClient(h))
	var resp *slack.AuthTestResponse
	err := s.call(ctx, "auth.test", policy{}, func(ctx context.Context) error {
		var err error
		resp, err = api.AuthTestContext(ctx)
		return err
	})
	if err != nil {
		return Grant{}, s.explain("auth.test", destination{}, err)
	}
	g := Grant{Team: resp.Team, TeamID: resp.TeamID, User: resp.User, UserID: resp.UserID}
	if raw, ok := h.header("X-OAuth-Scopes"); ok {
		g.ScopesKnown = true
		for sc := range strings.SplitSeq(raw, ",") {
			if sc = strings.TrimSpace(sc); sc != "" {
				g.Scopes = append(g.Scopes, sc)
			}
		}
	}
	return g, nil
}

// headerKeeper makes requests with do and keeps the headers of the last
// answer.
type headerKeeper struct {
	do   *http.Client
	mu   sync.Mutex
	last http.Header
}

func (h *headerKeeper) Do(req *http.Request) (*http.Response, error) {
	resp, err := h.do.Do(req)
	if err == nil {
		h.mu.Lock()
		h.last = resp.Header.Clone()
		h.mu.Unlock()
	}
	return resp, err
}

// header returns the last answer's header key, and whether it had one.
func (h *headerKeeper) header(key string) (string, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	v, ok := h.last[http.CanonicalHeaderKey(key)]
	if !ok || len(v) == 0 {
		return "", false
	}
	return v[0], true
}
