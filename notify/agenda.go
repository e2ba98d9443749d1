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

// AgendaEventType is the message metadata event type of a daily agenda.
// Its payload holds key (meetingbot.AgendaKey), subscription
// (meetingbot.AgendaSubscription), date (the local date), start (the local
// day's first instant, RFC 3339 UTC) and meetings (how many it lists), so
// that the bot after a crash (Delivered) and the audit (Agendas) find it.
const AgendaEventType = "meeting_agenda"

const (
	fieldDate     = "date"
	fieldMeetings = "meetings"
)

// MaxAgendaMeetings is the most meetings an agenda lists one by one, a
// block each; the rest are summarised in one line, so that a day of any
// size fits Slack's 50 blocks a message.
const MaxAgendaMeetings = 40

// maxAllDay bounds the all-day events an agenda names.
const maxAllDay = 20

// AgendaMessage renders a daily agenda: a headline naming the day and how
// many meetings it has, one line per meeting in start order (its start and
// end as <!date> tokens, each reader seeing their own zone, with the
// agenda's zone as the plain fallback; its title; its Join button by the
// rules of Message), the all-day events apart, and past MaxAgendaMeetings
// one line summarising the rest. The agenda goes to the calendar's owner,
// so private meetings show their titles. Event text is made inert and
// escaped, and every field cut to Block Kit's limits, as in Message.
func AgendaMessage(a meetingbot.Agenda, joinHosts ...string) (text string, blocks []slack.Block) {
	loc := a.Zone
	if loc == nil {
		loc = time.UTC
	}
	day, _ := time.ParseInLocation(time.DateOnly, a.Date, loc)
	dayToken := fmt.Sprintf("<!date^%d^{date_long}|%s>", day.Unix(), day.Format("Monday, January 2"))
	n := len(a.Meetings)
	head := fmt.Sprintf("%s: %d %s", dayToken, n, plural(n, "meeting", "meetings"))
	if n == 0 {
		head = dayToken + ": no meetings"
	}
	blocks = append(blocks, slack.NewSectionBlock(markdown(":calendar: *Your day* · "+head), nil, nil, slack.SectionBlockOptionBlockID("agenda_headline")))
	clock := func(t time.Time) string {
		return fmt.Sprintf("<!date^%d^{time}|%s>", t.Unix(), t.In(loc).Format("15:04"))
	}
	var plain []string
	for i, m := range a.Meetings {
		title := escape(inert(m.Title))
		if title == "" {
			title = "(No title)"
		}
		if i < 8 {
			plain = append(plain, clock(m.Start)+" "+fit(title, 100))
		}
		if i >= MaxAgendaMeetings {
			continue
		}
		when := clock(m.Start)
		if m.End.After(m.Start) {
			when += " – " + clock(m.End)
		}
		line := when + "  *" + fit(title, maxSectionText-len(when)-4) + "*"
		var accessory *slack.Accessory
		if joinButton(m.JoinURL, joinHosts) {
			accessory = slack.NewAccessory(slack.NewButtonBlockElement("join", strconv.Itoa(i), slack.NewTextBlockObject(slack.PlainTextType, "Join", false, false)).
				WithURL(m.JoinURL))
		}
		blocks = append(blocks, slack.NewSectionBlock(markdown(line), nil, accessory, slack.SectionBlockOptionBlockID("agenda_"+strconv.Itoa(i))))
	}
	if rest := a.Meetings[min(n, MaxAgendaMeetings):]; len(rest) > 0 {
		line := fmt.Sprintf("…and %d more %s, from %s to %s: open Google Calendar for the rest.",
			len(rest), plural(len(rest), "meeting", "meetings"), clock(rest[0].Start), clock(rest[len(rest)-1].Start))
		blocks = append(blocks, slack.NewSectionBlock(markdown(line), nil, nil, slack.SectionBlockOptionBlockID("agenda_more")))
	}
	if len(a.AllDay) > 0 {
		titles := make([]string, 0, min(len(a.AllDay), maxAllDay))
		for _, e := range a.AllDay[:min(len(a.AllDay), maxAllDay)] {
			titles = append(titles, fit(escape(inert(e.Title)), 200))
		}
		line := "*All day:* " + strings.Join(titles, " · ")
		if more := len(a.AllDay) - len(titles); more > 0 {
			line += fmt.Sprintf(" · and %d more", more)
		}
		blocks = append(blocks, slack.NewSectionBlock(markdown(fit(line, maxSectionText)), nil, nil, slack.SectionBlockOptionBlockID("agenda_all_day")))
	}
	text = "Your day, " + head
	if len(plain) > 0 {
		text += ": " + strings.Join(plain, ", ")
		if n > len(plain) {
			text += ", …"
		}
	}
	return fit(text, maxFallback), blocks
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// agendaMetadata is an agenda's message metadata (see AgendaEventType).
func agendaMetadata(a meetingbot.Agenda) slack.SlackMetadata {
	loc := a.Zone
	if loc == nil {
		loc = time.UTC
	}
	day, _ := time.ParseInLocation(time.DateOnly, a.Date, loc)
	return slack.SlackMetadata{EventType: AgendaEventType, EventPayload: map[string]any{
		fieldKey:          a.Key(),
		fieldSubscription: meetingbot.AgendaSubscription(a.User),
		fieldDate:         a.Date,
		fieldStart:        day.UTC().Format(time.RFC3339),
		fieldMeetings:     strconv.Itoa(len(a.Meetings)),
	}}
}

// agendaReminder is what Delivered and the look before posting again
// search for: the agenda's key in its DM, posted no earlier than its time.
func agendaReminder(a meetingbot.Agenda) meetingbot.Reminder {
	return meetingbot.Reminder{Key: a.Key(), Subscription: a.Subscription(), TriggerAt: a.At}
}

// NotifyAgenda DMs the daily agenda a to a.User (AgendaMessage) and
// returns where it landed. Its metadata lets Delivered find it by its key
// (ask Delivered with a Reminder of the agenda's Key, Subscription and At
// as TriggerAt) and Agendas list it. Posting, pacing, retries, the look
// before posting again, the text-only retry of a message Slack refuses,
// and the errors are Notify's.
func (s *Slack) NotifyAgenda(ctx context.Context, a meetingbot.Agenda) (meetingbot.Receipt, error) {
	r := agendaReminder(a)
	dest, err := s.resolve(ctx, r.Subscription)
	if err != nil {
		return meetingbot.Receipt{}, fmt.Errorf("notify: agenda of %s: %w", a.User, err)
	}
	text, blocks := AgendaMessage(a, s.cfg.JoinHosts...)
	md := agendaMetadata(a)
	receipt, err := s.post(ctx, dest, r, md, slack.MsgOptionText(text, false), slack.MsgOptionBlocks(blocks...))
	var se slack.SlackErrorResponse
	if errors.As(err, &se) && refusedContent[se.Err] && !errors.Is(err, meetingbot.ErrUnconfirmed) {
		s.log.DebugContext(ctx, "agenda blocks refused; posting it as text", "user", a.User, "key", r.Key, "err", err)
		receipt, err = s.post(ctx, dest, r, md, slack.MsgOptionText(text, false))
	}
	if err != nil {
		return meetingbot.Receipt{}, fmt.Errorf("notify: agenda of %s: %w", a.User, s.explain("chat.postMessage", dest, err))
	}
	s.log.DebugContext(ctx, "agenda posted", "user", a.User, "key", r.Key, "channel", receipt.Channel, "ts", receipt.TS)
	return receipt, nil
}

// Agendas returns the agenda messages this bot posted in the DM of the
// Slack user user in [from, to], oldest first, one Delivery each: Key,
// Subscription, Start (the local day's first instant), Channel, TS and
// Posted.
func (s *Slack) Agendas(ctx context.Context, user string, from, to time.Time) ([]meetingbot.Delivery, error) {
	sub := meetingbot.Subscription{ID: meetingbot.AgendaSubscription(user), Destination: user}
	dest, err := s.resolve(ctx, sub)
	if err != nil {
		return nil, fmt.Errorf("notify: agenda of %s: %w", user, err)
	}
	self, err := s.identity(ctx, 0)
	if err != nil {
		return nil, fmt.Errorf("notify: agenda of %s: %w", user, err)
	}
	var out []meetingbot.Delivery
	_, err = s.history(ctx, dest.channel, from, to, 0, 0, func(m slack.Message) bool {
		if m.Metadata.EventType == AgendaEventType && own(m, self) {
			start, _ := time.Parse(time.RFC3339, payload(m, fieldStart))
			out = append(out, meetingbot.Delivery{
				Key: payload(m, fieldKey), Subscription: payload(m, fieldSubscription), Start: start,
				Channel: dest.channel, TS: m.Timestamp, Posted: parseTS(m.Timestamp),
			})
		}
		return true
	})
	if err != nil {
		return nil, fmt.Errorf("notify: agenda of %s: %w", user, s.explain("conversations.history", dest, err))
	}
	slices.Reverse(out)
	return out, nil
}
