package selfservice

import (
	"context"
	"fmt"
	"strings"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"github.com/meetingbot/meetingbot"
)

// People's own Slack users, connected so that the bot sets their status
// while they are in a meeting: "/meetingbot status on" gives a link,
// "/meetingbot status off" gives the access back, the Home tab says how it
// is, and Slack's tokens_revoked and app_uninstalled events delete what
// they name.

// Action IDs of the status connection's Home tab controls.
const (
	actionStatusOn     = "status_on"
	actionStatusOff    = "status_off"
	actionStatusOOOOn  = "status_ooo_on"
	actionStatusOOOOff = "status_ooo_off"
)

// statusEnabled reports whether people may connect their Slack user.
func (a *App) statusEnabled() bool {
	return a.accounts != nil && a.accounts.Enabled(meetingbot.ProviderSlack)
}

// statusOn answers "/meetingbot status on": a link for the caller only.
func (a *App) statusOn(ctx context.Context, userID string) string {
	if !a.statusEnabled() {
		return "Setting your Slack status during meetings is not set up on this bot (whoever runs it sets SLACK_CLIENT_ID and SLACK_CLIENT_SECRET)."
	}
	link, err := a.accounts.Link(ctx, meetingbot.ProviderSlack, userID)
	if err != nil {
		return a.failed(err, userID)
	}
	return fmt.Sprintf("Let me set your Slack status while you are in a meeting (it clears itself at the meeting's end, and I never replace a status you set): <%s|Allow it in Slack>\nThe link is yours only: it works once, for 10 minutes.", link)
}

// statusOff answers "/meetingbot status off".
func (a *App) statusOff(ctx context.Context, userID string) string {
	if !a.statusEnabled() {
		return "Setting your Slack status is not set up on this bot, so there is nothing to turn off."
	}
	_, ok, err := a.accounts.Disconnect(ctx, meetingbot.ProviderSlack, userID)
	switch {
	case err != nil:
		return a.failed(err, userID)
	case !ok:
		return fmt.Sprintf("I don't set your status, so nothing changed. `%s status on` turns it on.", a.command)
	}
	return fmt.Sprintf("Status off: I gave the access back to Slack and won't set your status any more. `%s status on` turns it back on.", a.command)
}

// statusBlocks are the Home tab's line about the caller's status.
func (a *App) statusBlocks(ctx context.Context, userID string) []slack.Block {
	if !a.statusEnabled() {
		return nil
	}
	c, ok, err := a.accounts.Connection(ctx, meetingbot.ProviderSlack, userID)
	if err != nil {
		a.log.Warn("cannot read a Slack connection for the Home tab", "user", userID, "err", err)
		return nil
	}
	linkButton := func(text string) slack.BlockElement {
		link, err := a.accounts.Link(ctx, meetingbot.ProviderSlack, userID)
		if err != nil {
			a.log.Warn("cannot make a link for the Home tab", "user", userID, "err", err)
			return nil
		}
		b := button(actionStatusOn, "on", text, slack.StylePrimary)
		b.URL = link
		return b
	}
	switch {
	case ok && c.State == meetingbot.ConnectionActive:
		blocks := []slack.Block{section(":spiral_calendar_pad: *Status during meetings:* on. I set it at each meeting's start, until its end, unless you set one yourself.",
			button(actionStatusOff, "off", "Turn off", slack.StyleDanger))}
		if a.statusSettings != nil {
			set, _, err := a.statusSettings.StatusSettingsOf(ctx, userID)
			if err != nil {
				a.log.Warn("cannot read status settings for the Home tab", "user", userID, "err", err)
				return blocks
			}
			if set.OutOfOffice {
				blocks = append(blocks, section(":palm_tree: *Out of office:* on. During your out-of-office events your status says \"Out of office\".",
					button(actionStatusOOOOff, "off", "Turn off", "")))
			} else {
				blocks = append(blocks, section("*Out of office:* off. Turn it on and your status says \"Out of office\" during your out-of-office events.",
					button(actionStatusOOOOn, "on", "Turn on", "")))
			}
		}
		return blocks
	case ok:
		return []slack.Block{section(fmt.Sprintf(":warning: *Status during meetings:* stopped: %s.", escape(strings.TrimSuffix(c.Reason, "."))), linkButton("Allow again"))}
	}
	return []slack.Block{section("*Status during meetings:* off. Allow it and I show \"In a meeting\" in Slack while you are in one.", linkButton("Turn on"))}
}

// statusAction handles the status controls; handled is false for another
// action.
func (a *App) statusAction(ctx context.Context, user, actionID string) (notice string, handled bool) {
	switch actionID {
	case actionStatusOn:
		return "", true // a link button: the browser opened it
	case actionStatusOff:
		return a.statusOff(ctx, user), true
	case actionStatusOOOOn, actionStatusOOOOff:
		return a.statusOutOfOffice(ctx, user, actionID == actionStatusOOOOn), true
	}
	return "", false
}

// revokedEvent handles tokens_revoked and app_uninstalled: what Slack
// revoked is deleted (there is nothing left to give back).
func (a *App) revokedEvent(ctx context.Context, data any) bool {
	if a.accounts == nil {
		return false
	}
	switch e := data.(type) {
	case *slackevents.TokensRevokedEvent:
		for _, user := range e.Tokens.Oauth {
			if _, err := a.accounts.Forget(ctx, meetingbot.ProviderSlack, user); err != nil {
				a.log.Warn("cannot delete a revoked Slack connection", "user", user, "err", err)
			}
		}
		return true
	case *slackevents.AppUninstalledEvent:
		if n, err := a.accounts.ForgetAll(ctx, meetingbot.ProviderSlack); err != nil {
			a.log.Warn("cannot delete the Slack connections of an uninstalled app", "err", err)
		} else {
			a.log.Info("app uninstalled: people's Slack connections deleted", "connections", n)
		}
		return true
	}
	return false
}

// StatusSettings keeps how people want their status; the stores provide
// it.
type StatusSettings interface {
	StatusSettingsOf(ctx context.Context, userID string) (meetingbot.StatusSettings, bool, error)
	PutStatusSettings(ctx context.Context, set meetingbot.StatusSettings) error
}

// changeStatusSettings changes one of userID's status settings, keeping
// the others.
func (a *App) changeStatusSettings(ctx context.Context, userID string, change func(*meetingbot.StatusSettings)) error {
	set, _, err := a.statusSettings.StatusSettingsOf(ctx, userID)
	if err != nil {
		return err
	}
	set.UserID = userID
	change(&set)
	set.UpdatedAt = a.now()
	return a.statusSettings.PutStatusSettings(ctx, set)
}

// statusTitles answers "/meetingbot status titles" and "status titles off".
func (a *App) statusTitles(ctx context.Context, userID string, on bool) string {
	if !a.statusEnabled() || a.statusSettings == nil {
		return "Setting your Slack status during meetings is not set up on this bot."
	}
	if err := a.changeStatusSettings(ctx, userID, func(s *meetingbot.StatusSettings) { s.Titles = on }); err != nil {
		return a.failed(err, userID)
	}
	if on {
		return fmt.Sprintf("Your status will show the meeting's title (\"In a meeting\" for a private one). `%s status titles off` goes back.", a.command)
	}
	return "Your status will say \"In a meeting\", without the title."
}

// statusOutOfOffice answers "/meetingbot status ooo" and "status ooo
// off", and the Home tab's toggle.
func (a *App) statusOutOfOffice(ctx context.Context, userID string, on bool) string {
	if !a.statusEnabled() || a.statusSettings == nil {
		return "Setting your Slack status during meetings is not set up on this bot."
	}
	if err := a.changeStatusSettings(ctx, userID, func(s *meetingbot.StatusSettings) { s.OutOfOffice = on }); err != nil {
		return a.failed(err, userID)
	}
	if on {
		return fmt.Sprintf("During your out-of-office events (timed ones, as Google Calendar's *Out of office* makes them), your status will say :palm_tree: \"Out of office\" until their end, unless you set one yourself. `%s status ooo off` stops it.", a.command)
	}
	return "Your out-of-office events leave your status alone."
}
