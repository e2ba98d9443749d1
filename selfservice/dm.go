package selfservice

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
)

// A person who writes to the bot in its Messages tab, usually in answer
// to a reminder, gets a short help answer there (the message.im event),
// at most once per dmQuiet, so that a conversation does not become a
// stream of the same text.
const (
	dmQuiet = 10 * time.Minute
	// seenFor is how long event IDs are remembered against Slack's
	// retries and duplicates; Slack retries within about 5 minutes.
	seenFor = time.Hour
	// maxSeen bounds the people remembered.
	maxSeen = 10_000
)

// recent remembers keys for a while: people already answered.
type recent struct {
	mu   sync.Mutex
	at   map[string]time.Time
	keep time.Duration
}

func newRecent(keep time.Duration) *recent {
	return &recent{at: map[string]time.Time{}, keep: keep}
}

// first reports whether key was not seen within keep of now, and notes it.
func (r *recent) first(key string, now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if at, ok := r.at[key]; ok && now.Sub(at) < r.keep && now.Sub(at) >= 0 {
		return false
	}
	if len(r.at) >= maxSeen {
		for k, at := range r.at {
			if now.Sub(at) >= r.keep || now.Sub(at) < 0 {
				delete(r.at, k)
			}
		}
		if len(r.at) >= maxSeen {
			r.at = map[string]time.Time{} // a flood: forget rather than grow
		}
	}
	r.at[key] = now
	return true
}

// eventID returns the event_id of an Events API callback, "" when it has
// none.
func eventID(ev slackevents.EventsAPIEvent) string {
	if cb, ok := ev.Data.(*slackevents.EventsAPICallbackEvent); ok && cb != nil {
		return cb.EventID
	}
	return ""
}

// wantsAnswer reports whether a message event is a person writing to the
// bot: a new message (no subtype: not an edit, a deletion, a join) in a DM,
// from a user who is not a bot, the bot itself included.
func (a *App) wantsAnswer(e *slackevents.MessageEvent) bool {
	return e.ChannelType == "im" && e.SubType == "" && e.BotID == "" &&
		e.User != "" && e.User != a.botUser && e.Channel != ""
}

// answerDM answers a person who wrote to the bot, once per dmQuiet; event
// has already dropped the event IDs handled before.
func (a *App) answerDM(ctx context.Context, e *slackevents.MessageEvent) {
	if !a.wantsAnswer(e) {
		return
	}
	if !a.answered.first(e.User, a.now()) {
		a.log.Debug("DM not answered again so soon", "user", e.User)
		return
	}
	opts := []slack.MsgOption{slack.MsgOptionText(a.dmHelp(ctx, e.User), false), slack.MsgOptionDisableLinkUnfurl()}
	if e.ThreadTimeStamp != "" {
		opts = append(opts, slack.MsgOptionTS(e.ThreadTimeStamp))
	}
	if _, _, err := a.api.PostMessageContext(ctx, e.Channel, opts...); err != nil {
		a.log.Warn("cannot answer a DM", "user", e.User, "channel", e.Channel, "err", err)
		return
	}
	a.log.Info("answered a DM with help", "user", e.User)
}

// dmHelp is the answer to a person's DM: what the bot is, which calendar
// their reminders come from, and how to change or stop them.
func (a *App) dmHelp(ctx context.Context, userID string) string {
	c := a.command
	head := "I'm the meeting reminder bot: I post reminders before Google Calendar meetings, and I don't read replies here."
	if subs, err := a.personal(ctx, userID); err == nil && len(subs) > 0 {
		return fmt.Sprintf("%s I DM you %s on %s.\n`%s offsets 5m,0` changes when, `%s off` stops these DMs, and `%s help` or my Home tab shows everything.",
			head, remindedText(subs[0].Offsets, subs[0].OnCalendar), escape(subs[0].CalendarID), c, c, c)
	}
	if f, ok := a.operatorDMOf(ctx, userID); ok {
		return fmt.Sprintf("%s I DM you %s on %s, as the bot's configuration says: to change or stop that, ask whoever runs the bot. `%s help` shows what else you can do.",
			head, eachMeeting(f.Offsets), escape(f.CalendarID), c)
	}
	return fmt.Sprintf("%s `%s on` turns on DMs before the meetings on your calendar, and `%s help` or my Home tab shows everything.", head, c, c)
}
