package snooze

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/meetingbot/meetingbot"
)

// Service is the click's side of snoozes: it turns a click on a snooze
// button into a durable timer, stored before the click is answered, and
// lists and cancels a person's pending snoozes. Create it with NewService.
type Service struct {
	timers Timers
	store  Store
	subs   Subscriptions
	now    func() time.Time
	log    *slog.Logger
}

// NewService returns a Service adding snoozes to timers, listing and
// cancelling them in store, and finding the clicked reminders'
// subscriptions with subs; now is the clock (time.Now when nil), log may
// be nil.
func NewService(timers Timers, store Store, subs Subscriptions, now func() time.Time, log *slog.Logger) *Service {
	if now == nil {
		now = time.Now
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Service{timers: timers, store: store, subs: subs, now: now, log: log}
}

// Click stores the snooze a person asked for by clicking a reminder's
// button at clicked (Slack's action_ts: the same for Slack's retries of
// one click, wherever they land): ask names who clicked (User), what for
// (Mode), the reminder clicked (Reminder, Subscription) and its meeting as
// the reminder showed it (Meeting); the calendar is the subscription's.
// It returns the answer, as mrkdwn: "I'll remind you at <!date…>". A
// second click finds the first timer and answers with its instant. A
// click on a meeting that has started or on reminders turned off since
// stores nothing and says so; an error of the store is returned.
func (s *Service) Click(ctx context.Context, ask meetingbot.Snooze, clicked time.Time) (string, error) {
	m := ask.Meeting
	now := s.now()
	if clicked.IsZero() || clicked.After(now) {
		clicked = now
	}
	if !now.Before(m.Start) {
		return "It has started already, so there is nothing to remind you of.", nil
	}
	sub, found, err := s.subs(ctx, ask.Subscription)
	if err != nil {
		return "", err
	}
	if !found {
		return "Those reminders have been turned off since, so there is nothing to remind you of.", nil
	}
	mode, fire, note := meetingbot.SnoozeAtStart, m.Start, ""
	if ask.Mode == meetingbot.SnoozeIn5m {
		mode, fire = meetingbot.SnoozeIn5m, clicked.Add(meetingbot.SnoozeDelay).Truncate(time.Second)
		if !fire.Before(m.Start) {
			mode, fire, note = meetingbot.SnoozeAtStart, m.Start, "It starts before then: "
		}
	}
	sn := meetingbot.Snooze{User: ask.User, Mode: mode, Reminder: meetingbot.SnoozedReminder(ask.Reminder),
		Subscription: sub.ID, Calendar: sub.CalendarID, Reader: sub.Reader, Meeting: m}
	got, added, err := s.timers.Add(ctx, sn.Timer(fire))
	if err != nil {
		return "", err
	}
	if !added {
		return fmt.Sprintf("Already set: I'll remind you at %s.", when(got.FireAt)), nil
	}
	s.log.Info("snooze set", "user", ask.User, "timer", got.Key, "mode", mode, "fire_at", got.FireAt)
	return fmt.Sprintf("%sI'll remind you at %s.", note, when(got.FireAt)), nil
}

// when writes an instant as Slack shows it in each reader's zone.
func when(t time.Time) string {
	return fmt.Sprintf("<!date^%d^{time}|%s>", t.Unix(), t.UTC().Format("15:04 UTC"))
}

// Pending returns user's pending snoozes, by instant.
func (s *Service) Pending(ctx context.Context, user string) ([]meetingbot.Timer, error) {
	all, err := s.store.PendingTimers(ctx, user)
	if err != nil {
		return nil, err
	}
	out := all[:0]
	for _, t := range all {
		if t.Kind == meetingbot.TimerKindSnooze {
			out = append(out, t)
		}
	}
	return out, nil
}

// Cancel cancels user's pending snooze key and returns the answer.
func (s *Service) Cancel(ctx context.Context, user, key string) (string, error) {
	if !strings.HasPrefix(key, meetingbot.SnoozeSubscription(user)+":") {
		return "That snooze is not yours, so nothing changed.", nil
	}
	t, ok, err := s.store.CancelTimer(ctx, key, user, s.now())
	if err != nil {
		return "", err
	}
	if !ok {
		return "That snooze is not pending any more (it went out, or was cancelled).", nil
	}
	s.log.Info("snooze cancelled", "user", user, "timer", key)
	title := "the meeting"
	if sn, ok := meetingbot.ParseSnooze(t); ok && sn.Meeting.Title != "" {
		title = "*" + escape(sn.Meeting.Title) + "*"
	}
	return fmt.Sprintf("Cancelled: no reminder of %s at %s.", title, when(t.FireAt)), nil
}

// escape makes text inert in Slack markup.
func escape(text string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(text)
}
