package meetingbot

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"
)

// A channel that follows a team calendar (docs/design.md, "Team calendars
// in channels") hears of each change of it: an event added, moved,
// cancelled, renamed or re-placed. Each notice is a ledger entry of the
// channel subscription's pseudo-subscription (FeedSubscription), keyed by
// the event and the state it reached (FeedKey): claimed, sent and recorded
// like a reminder, so that a restart, a second replica or a resync that
// sees the same change again never repeats it.

// Change is what happened to an event, as a notice says it.
type Change string

// Changes. A notice of an event that moved and was renamed at once says
// both; Changes lists them in this order.
const (
	// ChangeAdded: an event new on the calendar.
	ChangeAdded Change = "added"
	// ChangeMoved: its start or end changed.
	ChangeMoved Change = "moved"
	// ChangeCancelled: cancelled or deleted (or declined by the
	// calendar's owner: it is no longer on the calendar's agenda).
	ChangeCancelled Change = "cancelled"
	// ChangeRenamed: its title changed.
	ChangeRenamed Change = "renamed"
	// ChangePlaced: its location changed.
	ChangePlaced Change = "placed"
)

// feedPrefix starts the keys and the pseudo-subscriptions of change
// notices. No subscription of CALENDARS nor one made in Slack can have it.
const feedPrefix = "feed:"

// FeedSubscription returns the pseudo-subscription ID that scopes the
// change notices of the subscription subID in the ledger: feed:<subID>.
func FeedSubscription(subID string) string { return feedPrefix + subID }

// Notice is one change of one event of a followed calendar, as a channel
// is told it: Was is the event as the channel last knew it (zero for one
// added), Now as it is (zero for one cancelled).
type Notice struct {
	// Key is the notice's ledger key (FeedKey).
	Key string
	// Subscription is the channel subscription followed: its ID scopes
	// nothing (the notice's pseudo-subscription does, FeedSubscription),
	// its Destination is the channel.
	Subscription Subscription
	// Changes says what changed, in the order of the Change constants.
	Changes []Change
	// Was and Now are the event before and after.
	Was, Now Meeting
	// At is when the notice was first due.
	At time.Time
}

// Meeting returns the event the notice is about: Now, or Was for one
// cancelled.
func (n Notice) Meeting() Meeting {
	if n.Now.ID != "" {
		return n.Now
	}
	return n.Was
}

// Has reports whether n says c.
func (n Notice) Has(c Change) bool {
	for _, x := range n.Changes {
		if x == c {
			return true
		}
	}
	return false
}

// FeedPseudo returns the pseudo-subscription of n's ledger entry and of
// its message's metadata: FeedSubscription of the channel subscription,
// posting to its channel.
func (n Notice) FeedPseudo() Subscription {
	s := n.Subscription
	return Subscription{ID: FeedSubscription(s.ID), Kind: KindFeed, CalendarID: s.CalendarID, Destination: s.Destination}
}

// Reminder is the notice as the ledger and Slack's history know it.
func (n Notice) Reminder() Reminder {
	m := n.Meeting()
	return Reminder{Key: n.Key, Subscription: n.FeedPseudo(), Meeting: m, TriggerAt: n.At}
}

// Entry returns the notice's ledger entry, unclaimed.
func (n Notice) Entry() Entry {
	m := n.Meeting()
	return Entry{Subscription: FeedSubscription(n.Subscription.ID), Kind: KindFeed, Key: n.Key, EventID: m.ID,
		Start: m.Start.UTC(), TriggerAt: n.At.UTC()}
}

// FeedState is what of an event a channel is told about: when it is,
// what it is called and where. A change to anything else (an attendee's
// answer, the bot's own RSVP write, a description) is no notice. For a
// private event only its time counts: a channel is never told its title
// or place, so never that they changed.
func FeedState(m Meeting) string {
	if m.ID == "" {
		return "gone"
	}
	parts := []string{m.Start.UTC().Format(time.RFC3339), m.End.UTC().Format(time.RFC3339)}
	if !m.Private {
		parts = append(parts, m.Title, m.Location)
	}
	return strings.Join(parts, "\x00")
}

// FeedKey returns the ledger key of the notice that event eventID went
// from was (as the channel last knew it; zero for an event added) to now
// (zero for gone), as Google last stamped it (updated):
// feed:<eventId>:<digest>. The same change seen again, by a restart, a
// replica or a resync, has the same key; an event that comes back to an
// earlier state later is a new change, as what the channel knew and
// Google's stamp differ.
func FeedKey(eventID string, was, now Meeting, updated time.Time) string {
	sum := sha256.Sum256([]byte(FeedState(was) + "\x01" + FeedState(now) + "\x01" + updated.UTC().Format(time.RFC3339Nano)))
	return feedPrefix + eventID + ":" + hex.EncodeToString(sum[:8])
}

// FeedChanges returns what changed between was and now, the same event
// as a channel last knew it and as it is: nil when nothing a channel is
// told about did. A zero was is an event added, a zero now one
// cancelled.
func FeedChanges(was, now Meeting) []Change {
	switch {
	case was.ID == "" && now.ID == "":
		return nil
	case was.ID == "":
		return []Change{ChangeAdded}
	case now.ID == "":
		return []Change{ChangeCancelled}
	}
	var out []Change
	if !was.Start.Equal(now.Start) || !was.End.Equal(now.End) {
		out = append(out, ChangeMoved)
	}
	if was.Private || now.Private {
		return out
	}
	if was.Title != now.Title {
		out = append(out, ChangeRenamed)
	}
	if was.Location != now.Location {
		out = append(out, ChangePlaced)
	}
	return out
}

// FeedDigestAt is how many notices of one channel found in one pass make
// one digest rather than a message each: someone importing 200 events is
// one message, not 200.
const FeedDigestAt = 5

// Reason codes of change notices.
const (
	// ReasonFeedOff: skipped, an interrupted notice whose channel stopped
	// following changes since; it was not found in Slack.
	ReasonFeedOff ReasonCode = "feed_off"
)

// ResourceCalendar reports whether calendarID is a Google Workspace
// resource's (a meeting room, a piece of equipment): Google gives each
// resource a calendar whose ID ends in "@resource.calendar.google.com"
// (Admin SDK Directory API, Resources.calendars: resourceEmail). Its
// events are bookings, and a notice of one says who booked it.
func ResourceCalendar(calendarID string) bool {
	return strings.HasSuffix(strings.ToLower(calendarID), "@resource.calendar.google.com")
}

// FeedPending is a notice being posted: the state Now of the event it
// tells, under its ledger Key. Until its outcome is known the channel may
// or may not have been told it.
type FeedPending struct {
	// Event is the event's ID, Key the notice's.
	Event, Key string
	// Now is the state told; zero for a cancellation.
	Now Meeting
}
