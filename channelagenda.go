package meetingbot

import "time"

// ChannelAgenda is a channel's agenda of the calendar it follows
// ("/meetingbot subscribe <calendar> daily 09:00" or "weekly mon 09:00"):
// the meetings of one local day, or of the seven days from one, posted at
// the time chosen in the zone of the person who chose it. Its ledger
// entry is keyed by the channel subscription, daily or weekly, and the
// first local date (ChannelAgendaKey), so it goes out once per day or
// week, DST days included, as the personal agenda does.
type ChannelAgenda struct {
	// Subscription is the channel subscription: its Destination is the
	// channel, its CalendarID the calendar listed.
	Subscription Subscription
	// Weekly is true for the weekly agenda.
	Weekly bool
	// Date is the first local date listed, "2006-01-02", in Zone.
	Date string
	// Zone is the zone the agenda's time is in.
	Zone *time.Location
	// At is the instant it is due; Start and End bound the meetings it
	// lists, [Start, End): the local day, or seven local days.
	At, Start, End time.Time
	// Meetings are the window's meetings after the reminders' filters
	// and the channel's muted series, in start order; AllDay its all-day
	// events. A private one shows as "Private meeting", as in a channel's
	// reminder.
	Meetings []Meeting
	AllDay   []AllDayEvent
	// Late is true when it goes out after At had passed.
	Late bool
}

// channelAgendaPrefix starts the keys and the pseudo-subscriptions of
// channel agendas. No subscription of CALENDARS nor one made in Slack can
// have it.
const channelAgendaPrefix = "chagenda:"

// ChannelAgendaSubscription returns the pseudo-subscription ID that
// scopes the channel subscription subID's agendas in the ledger:
// chagenda:<subID>.
func ChannelAgendaSubscription(subID string) string { return channelAgendaPrefix + subID }

// ChannelAgendaKey returns the ledger key of subID's daily or weekly
// agenda from the local date date: chagenda:<subID>:daily:<date> or
// chagenda:<subID>:weekly:<date>.
func ChannelAgendaKey(subID, date string, weekly bool) string {
	kind := "daily"
	if weekly {
		kind = "weekly"
	}
	return channelAgendaPrefix + subID + ":" + kind + ":" + date
}

// Key returns the agenda's ledger key.
func (a ChannelAgenda) Key() string { return ChannelAgendaKey(a.Subscription.ID, a.Date, a.Weekly) }

// Pseudo returns the pseudo-subscription of the agenda's ledger entry and
// message metadata, posting to the channel.
func (a ChannelAgenda) Pseudo() Subscription {
	s := a.Subscription
	return Subscription{ID: ChannelAgendaSubscription(s.ID), Kind: KindChannelAgenda, CalendarID: s.CalendarID, Reader: s.Reader, Destination: s.Destination}
}

// Reminder is the agenda as Slack's history knows it: its key, in its
// channel, posted no earlier than its time.
func (a ChannelAgenda) Reminder() Reminder {
	return Reminder{Key: a.Key(), Subscription: a.Pseudo(), TriggerAt: a.At}
}

// Entry returns the agenda's ledger entry, unclaimed.
func (a ChannelAgenda) Entry() Entry {
	return Entry{Subscription: ChannelAgendaSubscription(a.Subscription.ID), Kind: KindChannelAgenda, Key: a.Key(),
		Start: a.Start.UTC(), TriggerAt: a.At.UTC(), Late: a.Late}
}
