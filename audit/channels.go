package audit

import (
	"context"

	"github.com/meetingbot/meetingbot"
)

// Channels lists the subscriptions made in Slack; both stores provide it.
// With Deps.Channels set, the audit judges the change notices and the
// agendas of the channels among them too.
type Channels interface {
	SlackSubscriptions(ctx context.Context) ([]meetingbot.SlackSubscription, error)
}

// reconcileChannels audits, for each channel subscription made in Slack,
// its change notices (meetingbot.FeedSubscription) and its agendas
// (meetingbot.ChannelAgendaSubscription), each a SubReport keyed by the
// ledger's keys: which change or agenda was due is decided when the
// calendar is read, so the ledger says what was due, and each is judged
// against the channel's history (or the ledger when history cannot be
// read) as a notice of an invitation is. A message of either in the
// channel that the ledger does not know is unexpected.
func reconcileChannels(ctx context.Context, p period, channels Channels) []SubReport {
	subs, err := channels.SlackSubscriptions(ctx)
	if err != nil {
		return []SubReport{{Subscription: "channels", CountedFrom: FromLedger, Error: "read channel subscriptions: " + err.Error()}}
	}
	var out []SubReport
	for _, s := range subs {
		if s.Kind != meetingbot.SlackChannel {
			continue
		}
		for _, pseudo := range []struct{ id, unknown string }{
			{meetingbot.FeedSubscription(s.ID), "a change notice the ledger does not know"},
			{meetingbot.ChannelAgendaSubscription(s.ID), "an agenda the ledger does not know"},
		} {
			if ctx.Err() != nil {
				return out
			}
			sub := meetingbot.Subscription{ID: pseudo.id, CalendarID: s.CalendarID, Destination: s.Destination}
			if sr, ok := reconcileKeyed(ctx, p, sub, pseudo.unknown); ok {
				out = append(out, sr)
			}
		}
	}
	return out
}
