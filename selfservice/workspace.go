package selfservice

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/slack-go/slack"
)

// Refusals of requests that are Slack's, but not for this bot.
const (
	// RefusedWorkspace: a team_id other than the bot's (auth.test's), as
	// a request from another workspace the app is installed in carries.
	RefusedWorkspace Refusal = "other_workspace"
	// RefusedApp: an api_app_id other than the bot's (bots.info's).
	RefusedApp Refusal = "other_app"
)

var (
	errOtherWorkspace = &refusal{RefusedWorkspace, "the request is for another Slack workspace than the bot's"}
	errOtherApp       = &refusal{RefusedApp, "the request is for another Slack app than the bot"}
	errNoIdentity     = &refusal{RefusedUnchecked, "cannot ask Slack which workspace and app the bot is (auth.test, bots.info)"}
)

// identityRetry is how long after a failed lookup of the bot's identity
// the next request asks Slack again; those in between are answered 503.
const identityRetry = 5 * time.Second

// identity is the bot's own workspace and app. auth.test
// (https://api.slack.com/methods/auth.test) "tells you who you are": for
// a bot token its team_id and its bot_id, but it documents no app ID (its
// examples have none, and slack-go's AuthTestResponse reads none), so the
// app ID comes from bots.info of that bot_id
// (https://api.slack.com/methods/bots.info: "Use the app_id field to
// identify whether a bot belongs to your Slack app"; scope users:read,
// which the manifest asks for). The app is installed in one workspace
// (the manifest's org_deploy_enabled: false), so a request's team_id is
// that one's.
type identity struct {
	team, app string
}

// identity returns the bot's workspace and app, asking Slack once; a
// failure is asked again after identityRetry.
func (a *App) identity(ctx context.Context) (identity, error) {
	a.selfMu.Lock()
	defer a.selfMu.Unlock()
	if a.self.team != "" {
		return a.self, nil
	}
	if now := a.now(); !a.selfFailed.IsZero() && now.Sub(a.selfFailed) < identityRetry && !now.Before(a.selfFailed) {
		return identity{}, errors.New("the last lookup failed moments ago")
	}
	auth, err := a.api.AuthTestContext(ctx)
	if err == nil && (auth.TeamID == "" || auth.BotID == "") {
		err = fmt.Errorf("auth.test named no team_id or bot_id (team %q, bot %q)", auth.TeamID, auth.BotID)
	}
	var bot *slack.Bot
	if err == nil {
		bot, err = a.api.GetBotInfoContext(ctx, slack.GetBotInfoParameters{Bot: auth.BotID})
		if err == nil && bot.AppID == "" {
			err = fmt.Errorf("bots.info of %s named no app_id", auth.BotID)
		}
	}
	if err != nil {
		a.selfFailed = a.now()
		return identity{}, err
	}
	a.self = identity{team: auth.TeamID, app: bot.AppID}
	a.log.Info("self-service serves one Slack workspace and app; requests for others are refused", "team", a.self.team, "app", a.self.app)
	return a.self, nil
}

// forUs returns nil when a request names the bot's workspace (team) and
// app, else the *refusal to answer it with: errOtherWorkspace,
// errOtherApp, or errNoIdentity (wrapping why) when Slack cannot say who
// the bot is.
func (a *App) forUs(ctx context.Context, team, app string) error {
	self, err := a.identity(ctx)
	switch {
	case err != nil:
		return errors.Join(errNoIdentity, err)
	case team != self.team:
		return errOtherWorkspace
	case app != self.app:
		return errOtherApp
	}
	return nil
}

// forUs answers a request that is not for the bot (see App.forUs) and
// reports false, or reports true.
func (h *handler) forUs(w http.ResponseWriter, r *http.Request, team, app string) bool {
	err := h.app.forUs(r.Context(), team, app)
	if err == nil {
		return true
	}
	var ref *refusal
	errors.As(err, &ref)
	h.refused.refused(ref.reason, r.URL.Path, r.RemoteAddr, err)
	if errors.Is(err, errNoIdentity) {
		http.Error(w, "refused: "+errNoIdentity.Error(), http.StatusServiceUnavailable) // Slack retries
		return false
	}
	http.Error(w, "refused: "+ref.Error(), http.StatusForbidden)
	return false
}
