package selfservice

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/meetingbot/meetingbot"
)

// SubscriptionID names the subscription of calendarID posted to
// destination (a Slack user or channel ID). It depends on nothing else, so
// a subscription turned off and on again gets its old ID back, and with it
// the ledger keys of the reminders it already sent: nothing goes out twice.
func SubscriptionID(calendarID, destination string) string {
	return "slack:" + strings.ToLower(calendarID) + "=" + destination
}

// personal returns the caller's personal subscriptions ("on"): one, or
// none when their reminders are off. (Two only after their email changed.)
func (a *App) personal(ctx context.Context, userID string) ([]meetingbot.SlackSubscription, error) {
	subs, err := a.store.SlackSubscriptionsTo(ctx, userID)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(subs, func(s meetingbot.SlackSubscription) bool { return s.Kind != meetingbot.SlackPersonal }), nil
}

// operatorDM returns the operator's subscription that DMs p, if any.
func (a *App) operatorDM(p person) (Fixed, bool) {
	for _, f := range a.operator {
		d := f.Destination
		if d == p.ID || (p.Email != "" && (strings.EqualFold(d, p.Email) || (d == "" && strings.EqualFold(f.CalendarID, p.Email)))) {
			return f, true
		}
	}
	return Fixed{}, false
}

// operatorDMOf is operatorDM for a user ID; it asks Slack who they are
// only when CALENDARS has subscriptions, and answers false when it cannot.
func (a *App) operatorDMOf(ctx context.Context, userID string) (Fixed, bool) {
	if len(a.operator) == 0 {
		return Fixed{}, false
	}
	p, err := a.people.get(ctx, userID)
	if err != nil {
		return Fixed{}, false
	}
	return a.operatorDM(p)
}

// operatorIn returns the operator's subscriptions posted in a channel,
// given by ID and name.
func (a *App) operatorIn(channelID, channelName string) []Fixed {
	var out []Fixed
	for _, f := range a.operator {
		if f.Destination == channelID || (channelName != "" && strings.EqualFold(f.Destination, "#"+channelName)) {
			out = append(out, f)
		}
	}
	return out
}

// offsetsFor returns the offsets a person's reminders use: theirs, or the
// default.
func (a *App) offsetsFor(set meetingbot.SlackSettings) []time.Duration {
	if len(set.Offsets) > 0 {
		return set.Offsets
	}
	return a.defaults
}

// reminder is one reminder to come: a meeting and when it is reminded.
type reminder struct {
	Meeting Meeting
	At      time.Time
	Offset  time.Duration
}

// reminders returns the reminders of meetings at c's offsets (and each
// meeting's own, with c.onCalendar) that fall after now, earliest first.
func reminders(now time.Time, meetings []Meeting, c choice) []reminder {
	var out []reminder
	for _, m := range meetings {
		offsets := c.offsets
		if c.onCalendar && len(m.Reminders) > 0 {
			offsets = slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(c.offsets), m.Reminders...))))
		}
		for _, o := range offsets {
			if at := m.Start.Add(-o); at.After(now) {
				out = append(out, reminder{Meeting: m, At: at, Offset: o})
			}
		}
	}
	slices.SortStableFunc(out, func(a, b reminder) int { return a.At.Compare(b.At) })
	return out
}

// nextText says when the next reminder of meetings comes.
func (a *App) nextText(meetings []Meeting, c choice, tz string) string {
	rs := reminders(a.now(), meetings, c)
	switch {
	case len(rs) == 0 && len(meetings) > 0:
		return fmt.Sprintf("No reminder due in the next %s; you'll be reminded %s.", days(a.horizon), remindedText(c.offsets, c.onCalendar))
	case len(rs) == 0:
		return fmt.Sprintf("No meetings in the next %s; you'll be reminded %s.", days(a.horizon), remindedText(c.offsets, c.onCalendar))
	}
	r := rs[0]
	return fmt.Sprintf("Next reminder: *%s* at %s (%s).", escape(r.Meeting.Title), dateToken(r.At, tz), whenText(r.Offset))
}

// eachMeeting words offsets for a sentence: "10m and 1m before each
// meeting", "5m before each meeting and as it starts", "as each meeting
// starts".
func eachMeeting(offsets []time.Duration) string {
	before, zero := beforeParts(offsets)
	switch {
	case before == "":
		return "as each meeting starts"
	case zero:
		return before + " before each meeting and as it starts"
	}
	return before + " before each meeting"
}

// offsetsLabel words offsets for a menu: "10m and 1m before", "5m before
// and at the start", "At the start".
func offsetsLabel(offsets []time.Duration) string {
	before, zero := beforeParts(offsets)
	switch {
	case before == "":
		return "At the start"
	case zero:
		return before + " before and at the start"
	}
	return before + " before"
}

// beforeParts joins the offsets above 0, largest first ("10m, 5m and
// 1m"), and says whether 0 is one.
func beforeParts(offsets []time.Duration) (string, bool) {
	var parts []string
	zero := false
	for _, p := range strings.Split(formatOffsets(offsets), ", ") {
		if p == "0" {
			zero = true
		} else if p != "" {
			parts = append(parts, p)
		}
	}
	if len(parts) <= 1 {
		return strings.Join(parts, ""), zero
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1], zero
}

// whenText words one offset: "10m before it starts", "as it starts".
func whenText(o time.Duration) string {
	if o == 0 {
		return "as it starts"
	}
	return formatOffset(o) + " before it starts"
}

func days(d time.Duration) string {
	if d%(24*time.Hour) == 0 {
		if n := int(d / (24 * time.Hour)); n != 1 {
			return fmt.Sprintf("%d days", n)
		}
		return "day"
	}
	return formatOffset(d)
}

// dateToken writes t for Slack, which shows it in each reader's own zone;
// the fallback, for clients that cannot, is in tz (or UTC).
func dateToken(t time.Time, tz string) string {
	loc := time.UTC
	if l, err := time.LoadLocation(tz); tz != "" && err == nil {
		loc = l
	}
	fallback := t.In(loc).Format("Mon 2 Jan 15:04 MST")
	return fmt.Sprintf("<!date^%d^{date_short_pretty} at {time}|%s>", t.Unix(), fallback)
}
