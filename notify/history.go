package notify

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/slack-go/slack"
)

// clockSkew is how far before a trigger time Delivered starts reading
// history: a reminder is never posted before its trigger, but Slack's clock
// and ours may disagree a little.
const clockSkew = 5 * time.Minute

// errHistoryBound says that more history followed r's trigger time than a
// lookup reads, so the reminder may be there unseen.
var errHistoryBound = errors.New("more history than the lookup reads")

// Delivered reports whether a reminder with r.Key is in its destination's
// history, posted by this bot, and where. It reads history back to a little
// before r.TriggerAt, at most Config.HistoryPages pages.
//
// When history can never tell (a missing scope, the bot not in the channel,
// the channel gone or archived, a rejected token: anything IsPermanent), or
// the page bound is reached first, the error wraps meetingbot.ErrUnknown. A
// temporary failure that outlasts the retries (rate limit, 5xx, timeout,
// network) returns an error that does not: asking again later can tell, and
// until then the reminder must not be sent again.
func (s *Slack) Delivered(ctx context.Context, r meetingbot.Reminder) (meetingbot.Receipt, bool, error) {
	dest, err := s.resolve(ctx, r.Subscription)
	if err == nil {
		var rc meetingbot.Receipt
		var found bool
		if rc, found, err = s.find(ctx, dest, r, 0); err == nil {
			return rc, found, nil
		}
	}
	if meetingbot.IsPermanent(err) || errors.Is(err, errHistoryBound) {
		return meetingbot.Receipt{}, false, fmt.Errorf("notify: subscription %q: %w: %w", r.Subscription.ID, meetingbot.ErrUnknown, err)
	}
	return meetingbot.Receipt{}, false, fmt.Errorf("notify: subscription %q: look for %s: %w", r.Subscription.ID, r.Key, err)
}

// find looks for r in dest's recent history; see Delivered. attempts bounds
// the attempts of each API call (0: Config.Retry).
func (s *Slack) find(ctx context.Context, dest destination, r meetingbot.Reminder, attempts int) (meetingbot.Receipt, bool, error) {
	self, err := s.identity(ctx, attempts)
	if err != nil {
		return meetingbot.Receipt{}, false, err
	}
	oldest := r.TriggerAt.Add(-clockSkew)
	var found *slack.Message
	more, err := s.history(ctx, dest.channel, oldest, time.Time{}, s.cfg.HistoryPages, attempts, func(m slack.Message) bool {
		if (m.Metadata.EventType != EventType && m.Metadata.EventType != AgendaEventType) || payload(m, fieldSubscription) != r.Subscription.ID || !own(m, self) {
			return true
		}
		for _, p := range listed(m) {
			if key, _ := p[fieldKey].(string); key == r.Key {
				found = &m
				return false
			}
		}
		return true
	})
	switch {
	case err != nil:
		return meetingbot.Receipt{}, false, s.explain("conversations.history", dest, err)
	case found != nil:
		return meetingbot.Receipt{Channel: dest.channel, TS: found.Timestamp}, true, nil
	case more:
		return meetingbot.Receipt{}, false, fmt.Errorf("conversations.history in %s: %w: more than %d pages since %s", dest.label(), errHistoryBound, s.cfg.HistoryPages, oldest.UTC().Format(time.RFC3339))
	}
	return meetingbot.Receipt{}, false, nil
}

// Reminders returns every meeting_reminder message this bot posted in
// sub's destination in [from, to], oldest first, following all history
// pages. Messages from other subscriptions sharing the destination are
// included; meetingbot.Delivery names each one's subscription. Messages of
// other apps or users are not, whatever their metadata says.
func (s *Slack) Reminders(ctx context.Context, sub meetingbot.Subscription, from, to time.Time) ([]meetingbot.Delivery, error) {
	dest, err := s.resolve(ctx, sub)
	if err != nil {
		return nil, fmt.Errorf("notify: subscription %q: %w", sub.ID, err)
	}
	self, err := s.identity(ctx, 0)
	if err != nil {
		return nil, fmt.Errorf("notify: subscription %q: %w", sub.ID, err)
	}
	var msgs [][]meetingbot.Delivery
	_, err = s.history(ctx, dest.channel, from, to, 0, 0, func(m slack.Message) bool {
		if m.Metadata.EventType == EventType && own(m, self) {
			msgs = append(msgs, decode(dest.channel, m))
		}
		return true
	})
	if err != nil {
		return nil, fmt.Errorf("notify: subscription %q: %w", sub.ID, s.explain("conversations.history", dest, err))
	}
	slices.Reverse(msgs) // history comes newest first
	return slices.Concat(msgs...), nil
}

// history calls visit with each message of channel posted in [oldest,
// latest] (latest zero: up to now), newest first, until visit returns false
// or maxPages pages (0: all) have been read, making up to attempts attempts
// per page (0: Config.Retry). It reports whether unread messages
// remain.
func (s *Slack) history(ctx context.Context, channel string, oldest, latest time.Time, maxPages, attempts int, visit func(slack.Message) bool) (more bool, err error) {
	params := slack.GetConversationHistoryParameters{
		ChannelID: channel, Limit: 200, Inclusive: true, IncludeAllMetadata: true, Oldest: formatTS(oldest),
	}
	if !latest.IsZero() {
		params.Latest = formatTS(latest)
	}
	for page := 0; maxPages == 0 || page < maxPages; page++ {
		var resp *slack.GetConversationHistoryResponse
		err := s.call(ctx, "conversations.history", policy{attempts: attempts}, func(ctx context.Context) error {
			var err error
			resp, err = s.api.GetConversationHistoryContext(ctx, &params)
			return err
		})
		if err != nil {
			return false, err
		}
		for _, m := range resp.Messages {
			if !visit(m) {
				return false, nil
			}
		}
		params.Cursor = resp.ResponseMetaData.NextCursor
		if !resp.HasMore || params.Cursor == "" {
			return false, nil
		}
	}
	return true, nil
}

// own reports whether this bot posted m: any app may post a message with
// the reminders' metadata type and a key of its choosing.
func own(m slack.Message, self *slack.AuthTestResponse) bool {
	return (self.BotID != "" && m.BotID == self.BotID) || (self.UserID != "" && m.User == self.UserID)
}

func payload(m slack.Message, field string) string {
	v, _ := m.Metadata.EventPayload[field].(string)
	return v
}

// decode reads a message's metadata as the deliveries it made: one for a
// reminder, one per reminder for a digest (whose own payload repeats its
// first). Fields that do not parse stay zero, so an audit still sees the
// message.
func decode(channel string, m slack.Message) []meetingbot.Delivery {
	list := listed(m)
	if len(list) > 1 {
		list = list[1:]
	}
	out := make([]meetingbot.Delivery, len(list))
	for i, p := range list {
		str := func(field string) string { v, _ := p[field].(string); return v }
		start, _ := time.Parse(time.RFC3339, str(fieldStart))
		offset, _ := time.ParseDuration(str(fieldOffset))
		out[i] = meetingbot.Delivery{
			Key:          str(fieldKey),
			Subscription: payload(m, fieldSubscription),
			EventID:      str(fieldEventID),
			Start:        start,
			Offset:       offset,
			Channel:      channel,
			TS:           m.Timestamp,
			Posted:       parseTS(m.Timestamp),
		}
	}
	return out
}

// formatTS writes an instant as a Slack timestamp ("seconds.micros").
func formatTS(t time.Time) string {
	us := t.UnixMicro()
	return fmt.Sprintf("%d.%06d", us/1e6, us%1e6)
}

// parseTS reads a Slack timestamp as an instant; zero if it does not parse.
func parseTS(ts string) time.Time {
	sec, frac, _ := strings.Cut(ts, ".")
	s, err := strconv.ParseInt(sec, 10, 64)
	if err != nil {
		return time.Time{}
	}
	us, _ := strconv.ParseInt((frac + "000000")[:6], 10, 64)
	return time.UnixMicro(s*1e6 + us).UTC()
}
