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
//
// The app check is a second lock, not the first: a request is verified
// against the signing secret before it is read, and that secret is the
// app's own (Basic Information > App Credentials), so only Slack, for this
// app, can sign one. What the secret does not bind is the workspace, as
// one app may be installed in several. So the team is required to check
// a request that names one, and the app is checked when Slack can say it:
// a Web API without bots.info, or a bot_id, leaves app "" and the app
// unchecked, which is said once in the log.
type identity struct {
	team, app string
}

// identity returns the bot's workspace and app, asking Slack once; a
// failure of auth.test is asked again after identityRetry, and so is a
// bots.info that failed for a reason that may pass.
func (a *App) identity(ctx context.Context) (identity, error) {
	a.selfMu.Lock()
	defer a.selfMu.Unlock()
	if a.self.team != "" && (a.self.app != "" || a.appUnknown) {
		return a.self, nil
	}
	if now := a.now(); !a.selfFailed.IsZero() && now.Sub(a.selfFailed) < identityRetry && !now.Before(a.selfFailed) {
		if a.self.team != "" {
			return a.self, nil // the app unknown for now
		}
		return identity{}, errors.New("the last lookup failed moments ago")
	}
	if a.self.team == "" {
		auth, err := a.api.AuthTestContext(ctx)
		if err == nil && auth.TeamID == "" {
			err = fmt.Errorf("auth.test named no team_id")
		}
		if err != nil {
			a.selfFailed = a.now()
			return identity{}, err
		}
		a.self.team, a.botID = auth.TeamID, auth.BotID
	}
	if a.botID == "" {
		a.appUnknown = true
		a.log.Warn("auth.test named no bot_id, so requests are not checked for this app's api_app_id; the signing secret, which is the app's own, still is", "team", a.self.team)
		return a.self, nil
	}
	bot, err := a.api.GetBotInfoContext(ctx, slack.GetBotInfoParameters{Bot: a.botID})
	switch {
	case err == nil && bot.AppID != "":
		a.self.app = bot.AppID
		a.log.Info("self-service serves one Slack workspace and app; requests for others are refused", "team", a.self.team, "app", a.self.app)
	case err == nil || isSlackRefusal(err):
		// Slack answered, and will answer the same: no app ID to check.
		a.appUnknown = true
		a.log.Warn("bots.info named no app_id for the bot, so requests are not checked for this app's api_app_id; the signing secret, which is the app's own, still is", "team", a.self.team, "bot", a.botID, "err", err)
	default:
		a.selfFailed = a.now() // unchecked until bots.info answers
	}
	return a.self, nil
}

// isSlackRefusal reports whether err is Slack's answer, as opposed to
// Slack not answering: an error code (unknown_method, missing_scope,
// bot_not_found) or a 4xx.
func isSlackRefusal(err error) bool {
	var se slack.SlackErrorResponse
	var sc slack.StatusCodeError
	return errors.As(err, &se) || errors.As(err, &sc) && sc.Code >= 400 && sc.Code < 500
}

// forUs returns nil when a request names the bot's workspace (team) and
// app, else the *refusal to answer it with: errOtherWorkspace,
// errOtherApp, or errNoIdentity (wrapping why) when Slack cannot say which
// workspace the bot is in. A field the request leaves empty is not
// compared (Slack's requests carry both, and the signature binds the
// app), nor is an app Slack cannot name (see identity).
func (a *App) forUs(ctx context.Context, team, app string) error {
	if team == "" && app == "" {
		return nil
	}
	self, err := a.identity(ctx)
	switch {
	case err != nil:
		return errors.Join(errNoIdentity, err)
	case team != "" && team != self.team:
		return errOtherWorkspace
	case app != "" && self.app != "" && app != self.app:
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
