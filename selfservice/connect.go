package selfservice

import (
	"context"
	"fmt"
	"strings"

	"github.com/slack-go/slack"

	"github.com/meetingbot/meetingbot"
)

// Accounts lets people connect their own Google account, so that the bot
// reads their calendar with their own access; package connect provides
// it. Links are short-lived and work once: give each to its person only.
type Accounts interface {
	// Enabled reports whether people may connect an account of provider.
	Enabled(provider meetingbot.Provider) bool
	Link(ctx context.Context, provider meetingbot.Provider, userID string) (string, error)
	Connection(ctx context.Context, provider meetingbot.Provider, userID string) (meetingbot.Connection, bool, error)
	Disconnect(ctx context.Context, provider meetingbot.Provider, userID string) (meetingbot.Connection, bool, error)
	// Forget and ForgetAll delete without revoking: the provider said it
	// revoked them (Slack's tokens_revoked, app_uninstalled).
	Forget(ctx context.Context, provider meetingbot.Provider, userID string) (bool, error)
	ForgetAll(ctx context.Context, provider meetingbot.Provider) (int, error)
}

// Action IDs of the connection's controls: the Home tab's Connect (a link
// button) and Disconnect, and the Reconnect button of the DM that says a
// connection stopped (it answers with a fresh link).
const (
	actionConnect    = "connect_google"
	actionDisconnect = "disconnect_google"
	actionReconnect  = "reconnect_google"
)

// connectGoogle answers "/meetingbot connect": a link for the caller only.
// googleEnabled reports whether people may connect their Google account.
func (a *App) googleEnabled() bool {
	return a.accounts != nil && a.accounts.Enabled(meetingbot.ProviderGoogle)
}

func (a *App) connectGoogle(ctx context.Context, userID string) string {
	if !a.googleEnabled() {
		return "Connecting your own Google account is not set up on this bot (whoever runs it sets GOOGLE_OAUTH_CLIENT_JSON). " + a.shareHint()
	}
	c, ok, err := a.accounts.Connection(ctx, meetingbot.ProviderGoogle, userID)
	if err != nil {
		return a.failed(err, userID)
	}
	link, err := a.accounts.Link(ctx, meetingbot.ProviderGoogle, userID)
	if err != nil {
		return a.failed(err, userID)
	}
	head := "Connect your Google account, so that I read your calendar with your own access:"
	if ok && c.State == meetingbot.ConnectionActive {
		head = fmt.Sprintf("You are connected as %s already; to connect again (another account, or after a change):", escape(c.Account))
	}
	return fmt.Sprintf("%s <%s|Connect Google Calendar>\nThe link is yours only: it works once, for 10 minutes. Sign in with the account of your Slack email.", head, link)
}

// disconnectGoogle answers "/meetingbot disconnect".
func (a *App) disconnectGoogle(ctx context.Context, userID string) string {
	if !a.googleEnabled() {
		return "No Google account is connected: connecting one is not set up on this bot."
	}
	c, ok, err := a.accounts.Disconnect(ctx, meetingbot.ProviderGoogle, userID)
	if ok {
		a.reads.forget(c.Account)
	}
	switch {
	case err != nil:
		return a.failed(err, userID)
	case !ok:
		return fmt.Sprintf("No Google account of yours is connected, so nothing changed. `%s connect` connects one.", a.command)
	}
	if a.access.ServiceAccount == "" && !a.access.Impersonate {
		// Nothing else reads it: the sweeps pause the person's
		// subscriptions until they connect again (cmd/bot, paused.go).
		return fmt.Sprintf("Disconnected %s: I gave its access back to Google and deleted it. Your reminders stop: I have no other way to read your calendar. `%s connect` connects it again, and they start again with your settings.",
			escape(c.Account), a.command)
	}
	return fmt.Sprintf("Disconnected %s: I gave its access back to Google and deleted it. Your reminders stop unless I can read your calendar another way (%s). `%s connect` connects it again.",
		escape(c.Account), a.shareHint(), a.command)
}

// shareHint says the other way to let the bot read a calendar.
func (a *App) shareHint() string {
	if a.access.ServiceAccount != "" {
		return fmt.Sprintf("shared with `%s`", escape(a.access.ServiceAccount))
	}
	if a.access.Impersonate {
		return "domain-wide delegation"
	}
	return "there is none on this bot"
}

// connectBlocks are the Home tab's lines about the caller's Google
// account: connected (with Disconnect), stopped (with Reconnect), or not
// (with Connect), each link made for this Home tab and valid for minutes.
func (a *App) connectBlocks(ctx context.Context, userID string) []slack.Block {
	if !a.googleEnabled() {
		return nil
	}
	c, ok, err := a.accounts.Connection(ctx, meetingbot.ProviderGoogle, userID)
	if err != nil {
		a.log.Warn("cannot read a connection for the Home tab", "user", userID, "err", err)
		return nil
	}
	linkButton := func(text string, style slack.Style) slack.BlockElement {
		link, err := a.accounts.Link(ctx, meetingbot.ProviderGoogle, userID)
		if err != nil {
			a.log.Warn("cannot make a link for the Home tab", "user", userID, "err", err)
			return nil
		}
		b := button(actionConnect, "connect", text, style)
		b.URL = link
		return b
	}
	var block *slack.SectionBlock
	switch {
	case ok && c.State == meetingbot.ConnectionActive:
		block = section(fmt.Sprintf(":link: *Google account:* connected as %s; I read your calendar with your own access.", escape(c.Account)),
			button(actionDisconnect, "disconnect", "Disconnect", slack.StyleDanger))
	case ok:
		block = section(fmt.Sprintf(":warning: *Google account:* the connection of %s stopped: %s. Your reminders from it are paused until you reconnect.", escape(c.Account), escape(strings.TrimSuffix(c.Reason, "."))),
			linkButton("Reconnect", slack.StylePrimary))
	default:
		block = section("*Google account:* not connected. Connect it and I read your calendar with your own access, no sharing needed.",
			linkButton("Connect Google Calendar", slack.StylePrimary))
	}
	return []slack.Block{block}
}

// connectAction handles the connection's buttons; handled is false for
// another action.
func (a *App) connectAction(ctx context.Context, cb slack.InteractionCallback, act *slack.BlockAction) (notice string, handled bool) {
	user := cb.User.ID
	if n, ok := a.statusAction(ctx, user, act.ActionID); ok {
		return n, true
	}
	switch act.ActionID {
	case actionConnect:
		return "", true // a link button: the browser opened it; the Home tab gets a fresh one
	case actionDisconnect:
		return a.disconnectGoogle(ctx, user), true
	case actionReconnect:
		msg := a.connectGoogle(ctx, user)
		a.respond(ctx, cb.ResponseURL, cb.Channel.ID, user, msg)
		return msg, true
	}
	return "", false
}

// Connected tells a person their Google account is connected: a DM, and
// their Home tab.
func (a *App) Connected(ctx context.Context, c meetingbot.Connection) {
	if c.Provider == meetingbot.ProviderSlack {
		a.dm(ctx, c.UserID, fmt.Sprintf("Status on: I set your Slack status while you are in a meeting, until its end, and never over one you set yourself. `%s status off` stops it.", a.command), nil)
		a.publishHome(ctx, c.UserID, "")
		return
	}
	a.reads.forget(c.Account) // read with the new access from now on
	a.dm(ctx, c.UserID, fmt.Sprintf("Connected %s: your reminders and agenda now read your calendar with your own access. `%s disconnect` undoes it.", escape(c.Account), a.command), nil)
	a.publishHome(ctx, c.UserID, "")
}

// Broken tells a person, once, that their connection stopped and why: a
// DM with a Reconnect button, and their Home tab.
func (a *App) Broken(ctx context.Context, c meetingbot.Connection) {
	if c.Provider == meetingbot.ProviderSlack {
		a.dm(ctx, c.UserID, fmt.Sprintf(":warning: I can't set your Slack status during meetings any more: %s. `%s status on` allows it again.", escape(strings.TrimSuffix(c.Reason, ".")), a.command), nil)
		a.publishHome(ctx, c.UserID, "")
		return
	}
	a.reads.forget(c.Account)
	text := fmt.Sprintf(":warning: Your reminders from %s stopped: %s. Reconnect your Google account to get them again.", escape(c.Account), escape(strings.TrimSuffix(c.Reason, ".")))
	blocks := []slack.Block{section(text, button(actionReconnect, "reconnect", "Reconnect", slack.StylePrimary))}
	a.dm(ctx, c.UserID, text, blocks)
	a.publishHome(ctx, c.UserID, "")
}

// dm posts text (and blocks, if any) in the person's DM with the bot,
// opened with conversations.open.
func (a *App) dm(ctx context.Context, userID, text string, blocks []slack.Block) {
	ch, _, _, err := a.api.OpenConversationContext(ctx, &slack.OpenConversationParameters{Users: []string{userID}})
	if err != nil {
		a.log.Warn("cannot open a DM to tell a person about their connection", "user", userID, "err", err)
		return
	}
	opts := []slack.MsgOption{slack.MsgOptionText(text, false), slack.MsgOptionDisableLinkUnfurl()}
	if blocks != nil {
		opts = append(opts, slack.MsgOptionBlocks(blocks...))
	}
	if _, _, err := a.api.PostMessageContext(ctx, ch.ID, opts...); err != nil {
		a.log.Warn("cannot DM a person about their connection", "user", userID, "err", err)
	}
}
