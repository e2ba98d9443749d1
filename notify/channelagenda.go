package notify

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/slack-go/slack"
)

// ChannelAgendaMessage renders a channel's daily or weekly agenda of the
// calendar it follows: a headline naming the calendar, the day (or the
// week from it) and how many meetings, then a line each (its start and
// end as <!date> tokens, each reader seeing their own zone; the day too
// in a weekly one; its title, "Private meeting" for a private one, as in
// a channel's reminder), the all-day events apart, and past
// MaxAgendaMeetings one line counting the rest. Event text is made inert
// and escaped, each field cut to Block Kit's limits.
//
//	📅 team@example.com · Monday, December 7: 3 meetings
//	09:00 – 09:15  Standup
//	…
func ChannelAgendaMessage(a meetingbot.ChannelAgenda) (text string, blocks []slack.Block) {
	loc := a.Zone
	if loc == nil {
		loc = time.UTC
	}
	day, _ := time.ParseInLocation(time.DateOnly, a.Date, loc)
	when := fmt.Sprintf("<!date^%d^{date_long}|%s>", day.Unix(), day.Format("Monday, January 2"))
	if a.Weekly {
		when = "The week from " + when
	}
	n := len(a.Meetings)
	head := fmt.Sprintf("%s: %d %s", when, n, plural(n, "meeting", "meetings"))
	cal := escape(inert(a.Subscription.CalendarID))
	blocks = append(blocks, slack.NewSectionBlock(markdown(":calendar: *"+cal+"* · "+head), nil, nil, slack.SectionBlockOptionBlockID("agenda_headline")))
	format := "{time}"
	if a.Weekly {
		format = "{date_short_pretty} {time}"
	}
	clock := func(t time.Time, format string) string {
		fallback := t.In(loc).Format("15:04")
		if strings.Contains(format, "date") {
			fallback = t.In(loc).Format("Mon Jan 2 15:04")
		}
		return fmt.Sprintf("<!date^%d^%s|%s>", t.Unix(), format, fallback)
	}
	var plain []string
	for i, m := range a.Meetings {
		title := feedTitle(m)
		if i < 8 {
			plain = append(plain, clock(m.Start, format)+" "+fit(title, 100))
		}
		if i >= MaxAgendaMeetings {
			continue
		}
		span := clock(m.Start, format)
		if m.End.After(m.Start) {
			span += " – " + clock(m.End, "{time}")
		}
		line := span + "  *" + fit(title, maxSectionText-len(span)-4) + "*"
		blocks = append(blocks, slack.NewSectionBlock(markdown(line), nil, nil, slack.SectionBlockOptionBlockID("agenda_"+strconv.Itoa(i))))
	}
	if rest := len(a.Meetings) - MaxAgendaMeetings; rest > 0 {
		blocks = append(blocks, slack.NewSectionBlock(markdown(fmt.Sprintf("…and %d more %s: open Google Calendar for the rest.", rest, plural(rest, "meeting", "meetings"))),
			nil, nil, slack.SectionBlockOptionBlockID("agenda_more")))
	}
	if len(a.AllDay) > 0 {
		titles := make([]string, 0, min(len(a.AllDay), maxAllDay))
		for _, e := range a.AllDay[:min(len(a.AllDay), maxAllDay)] {
			t := privateTitle
			if !e.Private {
				t = fit(escape(inert(e.Title)), 200)
			}
			titles = append(titles, t)
		}
		line := "*All day:* " + strings.Join(titles, " · ")
		if more := len(a.AllDay) - len(titles); more > 0 {
			line += fmt.Sprintf(" · and %d more", more)
		}
		blocks = append(blocks, slack.NewSectionBlock(markdown(fit(line, maxSectionText)), nil, nil, slack.SectionBlockOptionBlockID("agenda_all_day")))
	}
	text = cal + " · " + head
	if len(plain) > 0 {
		text += ": " + strings.Join(plain, ", ")
		if n > len(plain) {
			text += ", …"
		}
	}
	return fit(text, maxFallback), blocks
}

// NotifyChannelAgenda posts a channel's agenda (ChannelAgendaMessage) in
// its channel and returns where it landed. Its metadata is a reminder's
// (EventType: its key, its pseudo-subscription
// meetingbot.ChannelAgendaSubscription, the window's start), so that
// Delivered finds it and the audit lists it with the channel's other
// messages. Its errors are Notify's.
func (s *Slack) NotifyChannelAgenda(ctx context.Context, a meetingbot.ChannelAgenda) (meetingbot.Receipt, error) {
	r := a.Reminder()
	dest, err := s.resolve(ctx, r.Subscription)
	if err != nil {
		return meetingbot.Receipt{}, fmt.Errorf("notify: agenda %q: %w", r.Key, err)
	}
	text, blocks := ChannelAgendaMessage(a)
	md := slack.SlackMetadata{EventType: EventType, EventPayload: map[string]any{
		fieldKey:          r.Key,
		fieldSubscription: r.Subscription.ID,
		fieldStart:        a.Start.UTC().Format(time.RFC3339),
		fieldOffset:       meetingbot.FormatOffset(0),
		fieldDate:         a.Date,
		fieldMeetings:     strconv.Itoa(len(a.Meetings)),
	}}
	return s.postNotice(ctx, dest, r, md, text, blocks, "agenda "+r.Key)
}
