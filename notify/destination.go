package notify

import (
	"context"
	"fmt"
	"strings"

	"github.com/meetingbot/meetingbot"
	"github.com/slack-go/slack"
)

// destination is a subscription's destination resolved to a conversation.
type destination struct {
	raw     string // as configured
	channel string // conversation ID to post to and read
	name    string // "#standup" when configured by name
	email   string // when configured (or defaulted) by email
	user    string // user ID when the destination is a DM
}

// resolve finds the conversation for sub: its Destination as configured, or
// a DM to the user whose email is the CalendarID when Destination is empty.
// Resolutions are cached for the life of s; failures are not.
func (s *Slack) resolve(ctx context.Context, sub meetingbot.Subscription) (destination, error) {
	raw := destinationOf(sub)
	if d, ok := s.cache.Load(raw); ok {
		return d.(destination), nil
	}
	d := destination{raw: raw}
	var err error
	switch {
	case raw == "":
		return d, meetingbot.Permanent(fmt.Errorf("no destination and no calendar ID: set a destination in CALENDARS"))
	case strings.HasPrefix(raw, "#"):
		d.name = raw
		d.channel, err = s.channelID(ctx, strings.TrimPrefix(raw, "#"))
	case strings.Contains(raw, "@"):
		d.email = raw
		err = s.openByEmail(ctx, &d)
	case isID(raw, "CGD"):
		d.channel = raw
	case isID(raw, "UW"):
		d.user = raw
		err = s.openDM(ctx, &d)
	default:
		return d, meetingbot.Permanent(fmt.Errorf("destination %q is not a channel ID (C…), #channel, user ID (U…) or email: fix CALENDARS", raw))
	}
	if err != nil {
		return d, err
	}
	s.cache.Store(raw, d)
	return d, nil
}

// destinationOf is where sub's reminders go, as configured: its
// Destination, or the calendar owner's email.
func destinationOf(sub meetingbot.Subscription) string {
	if d := strings.TrimSpace(sub.Destination); d != "" {
		return d
	}
	return strings.TrimSpace(sub.CalendarID)
}

// LookUp looks sub's destination up as Notify does before a post, unless
// it is known already, and keeps it for Notify: a DM by email costs
// users.lookupByEmail and conversations.open the first time, nothing after.
// The scheduler calls it a second before a reminder's trigger, so that the
// reminder goes out at the trigger.
func (s *Slack) LookUp(ctx context.Context, sub meetingbot.Subscription) error {
	_, err := s.resolve(ctx, sub)
	return err
}

// Resolve looks sub's destination up in Slack afresh, as Notify does before
// a post, and checks that a reminder could be posted there now: a channel
// exists, is not archived and has the bot in it; a user exists and is
// active. It posts nothing.
//
// It returns nil when a reminder could go out. A failure an operator must
// fix (no such channel, user or email; the bot not invited; an archived
// channel; a deactivated account; a missing scope; a bad token) is marked
// meetingbot.Permanent and names the destination and the fix; any other (a
// rate limit, a 5xx, the network) may pass by itself. A success is kept for
// Notify; after a failure Notify looks the destination up again.
func (s *Slack) Resolve(ctx context.Context, sub meetingbot.Subscription) error {
	raw := destinationOf(sub)
	s.cache.Delete(raw)
	d, err := s.resolve(ctx, sub)
	if err == nil {
		if err = s.usable(ctx, d); err != nil {
			s.forgetStaleName(ctx, d, err)
		}
	}
	if err != nil {
		s.cache.Delete(raw)
		return err
	}
	return nil
}

// usable checks what resolving d did not: that the bot is in its channel
// and the channel is not archived, or that the user it DMs by ID is active
// (a deactivated user is not found by email in the first place).
func (s *Slack) usable(ctx context.Context, d destination) error {
	switch {
	case d.user != "" && d.email == "":
		var u *slack.User
		err := s.call(ctx, "users.info", policy{}, func(ctx context.Context) error {
			var err error
			u, err = s.api.GetUserInfoContext(ctx, d.user)
			return err
		})
		if err != nil {
			return s.explain("users.info", d, err)
		}
		if u.Deleted {
			return s.explain("users.info", d, slack.SlackErrorResponse{Err: "user_disabled"})
		}
	case d.user == "" && isID(d.channel, "CG"):
		var ch *slack.Channel
		err := s.call(ctx, "conversations.info", policy{}, func(ctx context.Context) error {
			var err error
			ch, err = s.api.GetConversationInfoContext(ctx, &slack.GetConversationInfoInput{ChannelID: d.channel})
			return err
		})
		if err != nil {
			return s.explain("conversations.info", d, err)
		}
		switch {
		case ch.IsArchived:
			return s.explain("conversations.info", d, slack.SlackErrorResponse{Err: "is_archived"})
		case !ch.IsMember:
			return s.explain("conversations.info", d, slack.SlackErrorResponse{Err: "not_in_channel"})
		}
	}
	return nil
}

// isID reports whether v looks like a Slack ID starting with one of prefixes.
func isID(v, prefixes string) bool {
	if len(v) < 2 || !strings.ContainsRune(prefixes, rune(v[0])) {
		return false
	}
	for _, r := range v[1:] {
		if (r < 'A' || r > 'Z') && (r < '0' || r > '9') {
			return false
		}
	}
	return true
}

func (s *Slack) openByEmail(ctx context.Context, d *destination) error {
	var user *slack.User
	err := s.call(ctx, "users.lookupByEmail", policy{}, func(ctx context.Context) error {
		var err error
		user, err = s.api.GetUserByEmailContext(ctx, d.email)
		return err
	})
	if err != nil {
		return s.explain("users.lookupByEmail", *d, err)
	}
	d.user = user.ID
	return s.openDM(ctx, d)
}

func (s *Slack) openDM(ctx context.Context, d *destination) error {
	var ch *slack.Channel
	err := s.call(ctx, "conversations.open", policy{}, func(ctx context.Context) error {
		var err error
		ch, _, _, err = s.api.OpenConversationContext(ctx, &slack.OpenConversationParameters{Users: []string{d.user}})
		return err
	})
	if err != nil {
		return s.explain("conversations.open", *d, err)
	}
	d.channel = ch.ID
	return nil
}
