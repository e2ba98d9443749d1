package selfservice

import (
	"context"
	"fmt"

	"github.com/slack-go/slack"

	"github.com/meetingbot/meetingbot"
)

// Invitation notices: "/meetingbot invites on" and the Home tab's toggle.
// With notices on, each new invitation on the person's calendar gets one
// DM with Going / Maybe / No (package rsvp sends them). They are off by
// default, read the calendar of the person's own connected Google
// account, and turning them on asks for the scope answering needs too
// (incremental authorization).

// InviteStore keeps who turned invitation notices on; both stores
// provide it.
type InviteStore interface {
	InviteSettingsOf(ctx context.Context, userID string) (meetingbot.InviteSettings, bool, error)
	PutInviteSettings(ctx context.Context, set meetingbot.InviteSettings) error
}

// Action IDs of the Home tab's notices toggle.
const (
	actionInvitesOn  = "invites_on"
	actionInvitesOff = "invites_off"
)

// invitesEnabled reports whether people may turn notices on: they read
// people's own Google accounts, and answer through them.
func (a *App) invitesEnabled() bool {
	return a.invites != nil && a.answers != nil && a.googleEnabled()
}

// invitesOn answers "/meetingbot invites on": notices on from now (an
// invitation already on the calendar gets none), and, when the caller's
// Google account is not connected with the scope answering needs, the
// link that grants it.
func (a *App) invitesOn(ctx context.Context, userID string) string {
	if !a.invitesEnabled() {
		return "Invitation notices are not set up on this bot: they need people's own Google accounts (whoever runs it sets GOOGLE_OAUTH_CLIENT_JSON)."
	}
	set, _, err := a.invites.InviteSettingsOf(ctx, userID)
	if err != nil {
		return a.failed(err, userID)
	}
	head := "Already on: "
	if !set.On {
		now := a.now()
		set = meetingbot.InviteSettings{UserID: userID, On: true, Since: now, UpdatedAt: now}
		if err := a.invites.PutInviteSettings(ctx, set); err != nil {
			return a.failed(err, userID)
		}
		a.log.Info("invitation notices on", "user", userID)
		head = "Invitation notices on: "
	}
	text := head + "when someone invites you to a meeting, I DM you once, with Going / Maybe / No. Invitations already on your calendar get none. `" + a.command + " invites off` stops them."
	c, ok, err := a.accounts.Connection(ctx, meetingbot.ProviderGoogle, userID)
	if err != nil {
		a.log.Warn("cannot read a connection for invitation notices", "user", userID, "err", err)
		return text
	}
	var why string
	switch {
	case !ok:
		why = "\nI see your invitations through your own Google account: connect it, letting me change your answers to invitations (nothing else):"
	case c.State != meetingbot.ConnectionActive:
		why = "\nYour Google connection stopped, so no notices come until you reconnect, letting me change your answers to invitations:"
	case !c.CanAnswer():
		why = "\nTo answer from those DMs, let me change your answers to invitations (Google asks you once; I change nothing else):"
	default:
		return text
	}
	link, err := a.answers.ConsentLink(ctx, userID)
	if err != nil {
		a.log.Warn("cannot make a consent link", "user", userID, "err", err)
		return text + why + fmt.Sprintf(" `%s connect` gives you a link.", a.command)
	}
	return text + why + fmt.Sprintf(" <%s|Allow it in Google>\nThe link is yours only: it works once, for 10 minutes.", link)
}

// invitesOff answers "/meetingbot invites off".
func (a *App) invitesOff(ctx context.Context, userID string) string {
	if !a.invitesEnabled() {
		return "Invitation notices are not set up on this bot, so there is nothing to turn off."
	}
	set, ok, err := a.invites.InviteSettingsOf(ctx, userID)
	if err != nil {
		return a.failed(err, userID)
	}
	if !ok || !set.On {
		return fmt.Sprintf("Invitation notices are already off; `%s invites on` turns them on.", a.command)
	}
	set.On, set.UpdatedAt = false, a.now()
	if err := a.invites.PutInviteSettings(ctx, set); err != nil {
		return a.failed(err, userID)
	}
	a.log.Info("invitation notices off", "user", userID)
	return fmt.Sprintf("Invitation notices off. `%s invites on` turns them back on.", a.command)
}

// invitesBlocks are the Home tab's line about invitation notices, with
// its toggle.
func (a *App) invitesBlocks(ctx context.Context, userID string) []slack.Block {
	if !a.invitesEnabled() {
		return nil
	}
	set, _, err := a.invites.InviteSettingsOf(ctx, userID)
	if err != nil {
		a.log.Warn("cannot read invitation notices for the Home tab", "user", userID, "err", err)
		return nil
	}
	if set.On {
		return []slack.Block{section(":envelope_with_arrow: *Invitation notices:* on. I DM you each new invitation once, with Going / Maybe / No.",
			button(actionInvitesOff, "off", "Turn off", slack.StyleDanger))}
	}
	return []slack.Block{section("*Invitation notices:* off. Turn them on for a DM of each new invitation, answered with one click.",
		button(actionInvitesOn, "on", "Turn on", slack.StylePrimary))}
}

// invitesAction handles the Home tab's toggle; handled is false for
// another action.
func (a *App) invitesAction(ctx context.Context, user, actionID string) (notice string, handled bool) {
	switch actionID {
	case actionInvitesOn:
		return a.invitesOn(ctx, user), true
	case actionInvitesOff:
		return a.invitesOff(ctx, user), true
	}
	return "", false
}
