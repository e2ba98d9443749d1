package daemon

import (
	"context"
	"slices"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/agenda"
	"github.com/meetingbot/meetingbot/audit"
	"github.com/meetingbot/meetingbot/calendar"
	"github.com/meetingbot/meetingbot/calendar/cost"
	"github.com/meetingbot/meetingbot/connect"
	"github.com/meetingbot/meetingbot/monitor"
	"github.com/meetingbot/meetingbot/notify"
	"github.com/meetingbot/meetingbot/rsvp"
	"github.com/meetingbot/meetingbot/scheduler"
	"github.com/meetingbot/meetingbot/snooze"
	"github.com/meetingbot/meetingbot/timer"
)

// The adapters provide what the engines consume.
var (
	_ snooze.Notifier = (*notify.Slack)(nil)
	_ snooze.Timers   = (*timer.Engine)(nil)
	_ timer.Observer  = (*monitor.Monitor)(nil)
	_ rsvp.Calendar   = (*calendar.Source)(nil)
	_ rsvp.Accounts   = (*connect.Accounts)(nil)
	_ rsvp.Notifier   = (*notify.Slack)(nil)
	_ agenda.Calendar = (*calendar.Source)(nil)
	_ agenda.Notifier = (*notify.Slack)(nil)
	_ agenda.Observer = (*monitor.Monitor)(nil)
)

// makeScheduler makes the sweep of the reminders, which plans from the
// mirror and wakes for the calendar a push notification changed. A
// reminder goes to the notifier of its subscription's kind: Slack, or
// with people's statuses on, the status setter (notify.Status).
func (b *Bot) makeScheduler(context.Context) error {
	var notifier scheduler.Notifier = b.slack
	if b.statuses != nil {
		a := b.accounts
		b.setter = notify.NewStatus(notify.StatusConfig{
			APIURL: b.cfg.SlackAPIURL,
			Token: func(ctx context.Context, userID string) (string, error) {
				ts, _, err := a.UserToken(ctx, meetingbot.ProviderSlack, userID)
				if err != nil {
					return "", err
				}
				tok, err := ts.Token()
				if err != nil {
					return "", err
				}
				return tok.AccessToken, nil
			},
			Meetings: b.mir.Meetings,
			Titles:   func(ctx context.Context, userID string) bool { return b.statuses.Settings(ctx, userID).Titles },
			Ledger:   b.store,
			Revoked: func(ctx context.Context, userID string, err error) {
				a.Stop(ctx, meetingbot.ProviderSlack, userID)
			},
			Renew: func(ctx context.Context, userID string) {
				if _, name, err := a.UserToken(ctx, meetingbot.ProviderSlack, userID); err == nil {
					a.Renew(name)
				}
			},
			Logger: b.log,
		})
		notifier = scheduler.ByKind{meetingbot.KindReminder: b.slack, meetingbot.KindStatus: b.setter}
	}
	// A send in flight at SIGTERM gets the scheduler's ShutdownGrace (5s)
	// to finish and be recorded, well within the 10 seconds promised.
	opts := scheduler.Options{
		Interval: b.cfg.TickInterval,
		Lease:    claimLease(b.cfg),
		Logger:   b.log,
		Observer: b.mon,
		Share:    b.share,
		// A crowd of reminders due together is posted ahead within the
		// posting budget Slack leaves (notify's, learned from its 429s).
		Early:          b.cfg.EarlyMax,
		PostsPerMinute: func() float64 { return b.slack.Budget().PerMinute },
	}
	if b.cfg.SelfService() {
		opts.Subscriptions = b.madeInSlack
	}
	if b.accounts != nil {
		var access connect.Access
		if b.cfg.HasServiceAccount() {
			access = b.source.Access
		}
		opts.Subscriptions = b.swept(connect.NewPauses(b.store, access, time.Now))
	}
	b.madeSubs = opts.Subscriptions
	sched, err := scheduler.New(b.cfg.Subscriptions, b.mir, notifier, b.store, opts)
	if err != nil {
		return err
	}
	b.sched = sched
	b.mir.OnWake(sched.SweepCalendar)
	return nil
}

// makeSnoozes makes "Remind me at start" and "In 5 min" (package snooze)
// over the durable timers (package timer), on with self-service, which
// answers the clicks. A snooze checks its meeting in the mirror, and
// follows it when it moves.
func (b *Bot) makeSnoozes(context.Context) error {
	if !b.cfg.SelfService() {
		return nil
	}
	h, err := snooze.NewHandler(b.mir, b.slack, b.store, snooze.Options{Lease: claimLease(b.cfg), Logger: b.log})
	if err != nil {
		return err
	}
	b.timers, err = timer.New(b.store, map[string]timer.Handler{meetingbot.TimerKindSnooze: h}, timer.Options{
		// A timer another replica added, or one a dead replica held, is
		// seen within a tick.
		Poll:     b.cfg.TickInterval,
		Lease:    claimLease(b.cfg),
		Logger:   b.log,
		Observer: b.mon,
	})
	if err != nil {
		return err
	}
	b.snoozes = snooze.NewService(b.timers, b.store, b.subscription, time.Now, b.log)
	b.mir.OnChange(b.snoozes.Changed) // "at start" follows a meeting that moves
	return nil
}

// subscription finds a reminder's subscription: one of CALENDARS, or one
// made in Slack.
func (b *Bot) subscription(ctx context.Context, id string) (meetingbot.Subscription, bool, error) {
	for _, sub := range b.cfg.Subscriptions {
		if sub.ID == id {
			return sub, true, nil
		}
	}
	made, ok, err := b.store.SlackSubscription(ctx, id)
	if err != nil || !ok {
		return meetingbot.Subscription{}, false, err
	}
	return made.Subscription(), true, nil
}

// makeInvitations makes the answers of invitations from Slack (Going /
// Maybe / No, written with people's own Google accounts) and the notices
// of new invitations, which read their calendars through the mirror;
// both on when people answer from Slack.
func (b *Bot) makeInvitations(ctx context.Context) error {
	if !b.answering() {
		return nil
	}
	// An answer reads its calendar again at once: a declined meeting's
	// reminders stop and say "You declined". The sweep it asks for runs
	// until the bot stops, or ctx ends.
	life, end := context.WithCancel(ctx)
	b.endLife = end
	refresh := func(ctx context.Context, calendarID string) {
		if err := b.mir.Sync(ctx, calendarID); err != nil {
			b.log.Warn("sync after an answer; the next sweep reads the calendar", "calendar", calendarID, "err", err)
		}
		b.sched.SweepCalendar(life, calendarID)
	}
	var err error
	if b.answers, err = rsvp.NewService(b.source, b.accounts, refresh, b.log); err != nil {
		return err
	}
	b.notices, err = rsvp.New(b.store, b.accounts, b.mir, b.slack, b.store, rsvp.Options{
		Interval: b.cfg.TickInterval,
		Lease:    claimLease(b.cfg),
		Logger:   b.log,
	})
	return err
}

// makeWatchers makes what runs beside the sweeps: the daily agendas (with
// self-service, which sets them), the in-process audit, the demand on the
// Calendar quota and the day's projected spend (both said at once), and
// the periodic check of CALENDARS' destinations.
func (b *Bot) makeWatchers(ctx context.Context) error {
	var err error
	if b.cfg.SelfService() {
		b.agendas, err = agenda.New(b.store, agenda.NewProfiles(b.slack.Profile, time.Now), b.source, b.slack, b.store, agenda.Options{
			Interval: b.cfg.TickInterval,
			Logger:   b.log,
			Observer: b.mon,
		})
		if err != nil {
			return err
		}
	}
	// The in-process audit reads the calendars through the mirror, as the
	// sweeps do: reading each calendar every 5 minutes besides would cost
	// as much as the safety resync. bot audit reads them directly.
	deps := audit.Deps{
		Subscriptions: b.cfg.Subscriptions, Source: b.mir, Ledger: b.store, Slack: b.slack, Interval: b.cfg.TickInterval,
		Agendas: b.auditAgendas(b.source, b.store),
	}
	if b.cfg.SelfService() {
		deps.Channels = b.store // the channels' change notices and agendas
	}
	b.watcher, err = audit.NewWatcher(audit.WatcherConfig{Deps: deps, Logger: b.log}, b.mon.Registerer())
	if err != nil {
		return err
	}
	// Said at start-up, and again when it changes side.
	b.demand = cost.NewDemand(b.cfg, b.source, b.calendars, b.mon, b.log)
	b.demand.Check(ctx)
	b.spend.StartUp(ctx, b.calendars)
	b.trackPosting(ctx)
	b.destinations = monitor.NewDestinationCheck(b.cfg.Subscriptions, b.slack.Resolve, b.mon.Destination, b.log)
	return nil
}

// auditAgendas is what the audit reads of the daily agendas, in settings,
// nil when self-service (and with it the agenda) is off.
func (b *Bot) auditAgendas(source *calendar.Source, settings agenda.Settings) *audit.AgendaDeps {
	if !b.cfg.SelfService() {
		return nil
	}
	return &audit.AgendaDeps{Settings: settings, Slack: b.slack, Source: source}
}

// trackPosting puts Slack's posting budget on /metrics and projects the
// coming day's busiest minute against it, now and every hour after.
func (b *Bot) trackPosting(ctx context.Context) {
	b.mon.TrackPosting(func() monitor.Posting {
		st := b.slack.Budget()
		return monitor.Posting{PerMinute: st.PerMinute, Used: st.Used, Waiting: st.Waiting, Refusals: st.Refusals, OverBudget: st.OverBudget}
	})
	b.forecast = &monitor.PostingForecast{
		Subscriptions: func(ctx context.Context) ([]meetingbot.Subscription, error) {
			subs := slices.Clone(b.cfg.Subscriptions)
			if b.madeSubs == nil {
				return subs, nil
			}
			more, err := b.madeSubs(ctx)
			return append(subs, more...), err
		},
		Reading:   b.mir.Reading,
		PerMinute: b.cfg.SlackPostsPerMinute,
		Early:     b.cfg.EarlyMax,
		Now:       time.Now,
		Monitor:   b.mon,
		Logger:    b.log,
	}
	b.forecast.Check(ctx)
}
