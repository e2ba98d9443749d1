package notify

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/internal/outbound"
	"github.com/meetingbot/meetingbot/internal/retry"
	"github.com/slack-go/slack"
)

// scopes names the bot scope each method needs, for missing_scope errors
// that do not say which one.
var scopes = map[string]string{
	"chat.postMessage":      "chat:write",
	"chat.update":           "chat:write",
	"conversations.open":    "im:write",
	"conversations.list":    "channels:read and groups:read",
	"conversations.info":    "channels:read and groups:read",
	"users.info":            "users:read",
	"conversations.history": "channels:history, groups:history and im:history",
	"users.lookupByEmail":   "users:read.email",
}

// fixError is an error whose message tells the operator what to do; it
// unwraps to the client's error so callers can still errors.As it.
type fixError struct {
	msg string
	err error
}

func (e *fixError) Error() string { return e.msg }
func (e *fixError) Unwrap() error { return e.err }

// explain turns the error of a Slack call into one an operator can act on:
// permanent errors are marked meetingbot.Permanent and say the fix; others
// are wrapped with the method name. dest says where the call was aimed.
func (s *Slack) explain(method string, dest destination, err error) error {
	if err == nil || errors.Is(err, errConfirmed) {
		return err
	}
	where := method
	if l := dest.label(); l != "" {
		where += " to " + l
	}
	if class, _ := classify(err); class != retry.Permanent {
		return fmt.Errorf("%s: %w", where, err)
	}
	if errors.Is(err, outbound.ErrRedirect) {
		return meetingbot.Permanent(&fixError{fmt.Sprintf("%s: %v: check SLACK_API_URL (%s); the token is not sent elsewhere", where, concise(err), s.cfg.APIURL), err})
	}
	var se slack.SlackErrorResponse
	if !errors.As(err, &se) {
		var sc slack.StatusCodeError
		if errors.As(err, &sc) {
			return meetingbot.Permanent(&fixError{fmt.Sprintf("%s: Slack answered HTTP %d: check SLACK_API_URL (%s)", where, sc.Code, s.cfg.APIURL), err})
		}
		return meetingbot.Permanent(fmt.Errorf("%s: %w", where, err))
	}
	bot := "@" + s.botName()
	var fix string
	switch code := se.Err; code {
	case "invalid_auth", "not_authed":
		return meetingbot.Permanent(&fixError{fmt.Sprintf("SLACK_BOT_TOKEN was rejected by Slack (%s): copy the Bot User OAuth Token (xoxb-…) from your app's OAuth & Permissions page", code), err})
	case "token_revoked", "token_expired", "account_inactive":
		return meetingbot.Permanent(&fixError{fmt.Sprintf("SLACK_BOT_TOKEN no longer works (%s): the app was uninstalled or its token revoked; reinstall the app and copy its new Bot User OAuth Token (xoxb-…)", code), err})
	case "missing_scope":
		scope := se.Needed
		if scope == "" {
			scope = scopes[method]
		}
		fix = fmt.Sprintf("add the %s scope and reinstall the app", scope)
	case "channel_not_found":
		if dest.name != "" {
			fix = fmt.Sprintf("no channel named %s is visible to the bot: check the name in CALENDARS; for a private channel, /invite %s there first", dest.name, bot)
		} else {
			fix = fmt.Sprintf("check the channel ID in CALENDARS; for a private channel, /invite %s there first", bot)
		}
	case "not_in_channel":
		fix = fmt.Sprintf("invite the bot to %s: /invite %s", dest.label(), bot)
	case "is_archived":
		fix = fmt.Sprintf("%s is archived: unarchive it or set another destination in CALENDARS", dest.label())
	case "user_not_found":
		fix = fmt.Sprintf("no Slack user %s: check the user ID in CALENDARS", dest.user)
	case "users_not_found":
		fix = fmt.Sprintf("no active Slack user has the email %s (not in the workspace, or deactivated): set a destination in CALENDARS or remove the entry", dest.email)
	case "user_disabled":
		fix = fmt.Sprintf("the Slack account %s is deactivated: set another destination in CALENDARS or remove the entry", dest.user)
	case "no_permission", "restricted_action", "ekm_access_denied":
		fix = fmt.Sprintf("the bot may not post to %s: ask a workspace admin, or set another destination in CALENDARS", dest.label())
	case "message_not_found":
		fix = "the reminder was deleted from Slack; it is left as it is"
	case "cant_update_message", "edit_window_closed":
		fix = "Slack does not let the bot edit this reminder (the workspace's message editing settings); it is left as it is"
	case "is_inactive":
		fix = fmt.Sprintf("%s is archived or frozen; the reminder in it is left as it is", dest.label())
	case "cannot_dm_bot":
		fix = "that user is a bot and cannot get DMs: set a destination in CALENDARS"
	default:
		return meetingbot.Permanent(fmt.Errorf("%s: %w", where, err))
	}
	return meetingbot.Permanent(&fixError{fmt.Sprintf("%s: %s: %s", where, se.Err, fix), err})
}

// concise drops the *url.Error around err, whose quoted URL adds nothing
// to SLACK_API_URL and the method.
func concise(err error) error {
	var uerr *url.Error
	if errors.As(err, &uerr) {
		return uerr.Err
	}
	return err
}

// botName is the bot's user name for /invite hints: from auth.test when it
// has been called, else the name the app manifest gives it.
func (s *Slack) botName() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.self != nil && s.self.User != "" {
		return s.self.User
	}
	return "meetingbot"
}

// label names a destination for people: "#standup", "channel C123", the
// email or user it DMs.
func (d destination) label() string {
	switch {
	case d.name != "":
		return d.name
	case d.email != "":
		return "DM to " + d.email
	case d.user != "":
		return "DM to " + d.user
	case d.channel != "":
		return "channel " + d.channel
	}
	return strings.TrimSpace(d.raw)
}
