// Package daemon builds the whole bot from its configuration and owns its
// lifetime, as one value: New makes each part once, in a fixed order
// (the checks that stop a bad configuration before anything starts, the
// store, people's accounts, the API clients, the mirror of the calendars,
// the engines, then the HTTP listeners), Run runs them until its context
// ends, and Close releases what New took. A part that must hear from one
// made after it registers with it (the mirror's OnWake and OnChange, the
// accounts' Hook, the notifier's AnswerFor); none is reached through a
// variable assigned later.
//
// cmd/bot, the demo, the end-to-end tests and the benchmarks all build the
// bot here. docs/development.md ("A reminder, file by file") follows one
// reminder through what New wires.
package daemon

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/agenda"
	"github.com/meetingbot/meetingbot/audit"
	"github.com/meetingbot/meetingbot/calendar"
	"github.com/meetingbot/meetingbot/calendar/cost"
	"github.com/meetingbot/meetingbot/config"
	"github.com/meetingbot/meetingbot/connect"
	"github.com/meetingbot/meetingbot/feed"
	"github.com/meetingbot/meetingbot/mirror"
	"github.com/meetingbot/meetingbot/monitor"
	"github.com/meetingbot/meetingbot/notify"
	"github.com/meetingbot/meetingbot/rsvp"
	"github.com/meetingbot/meetingbot/scheduler"
	"github.com/meetingbot/meetingbot/selfservice"
	"github.com/meetingbot/meetingbot/snooze"
	"github.com/meetingbot/meetingbot/status"
	"github.com/meetingbot/meetingbot/timer"
)

// Options are what a caller other than the binary changes about how the
// bot runs; the zero value is the binary's.
type Options struct {
	// Logger receives the logs; discarded when nil.
	Logger *slog.Logger
	// Version is the build's, for the start-up line.
	Version string
	// Listen, if set, opens the HTTP listeners instead of net.Listen:
	// the simulated day serves without a socket.
	Listen func(network, addr string) (net.Listener, error)
	// CalendarHTTP and SlackHTTP, where set, carry the Calendar and the
	// Slack clients' requests (the simulated day's in-process emulators).
	CalendarHTTP, SlackHTTP *http.Client
}

// Timings of the serving process.
const (
	// checkTimeout bounds the start-up check of the Slack token.
	checkTimeout = 20 * time.Second
	// ledgerRefresh is how often the ledger rows gauge is refreshed.
	ledgerRefresh = time.Minute
	// shutdownTimeout bounds the HTTP servers' shutdown.
	shutdownTimeout = 2 * time.Second
	// slackCallTimeout bounds one Web API call made with the slack-go
	// client (users.info, views.publish, chat.postEphemeral).
	slackCallTimeout = 30 * time.Second
)

// Bot is the whole bot, built by New. Its parts are nil where the
// configuration leaves a feature off.
type Bot struct {
	cfg  config.Config
	opts Options
	log  *slog.Logger

	mon   *monitor.Monitor
	spend *cost.Spend

	store  Store
	slack  *notify.Slack
	api    *slack.Client // the slack-go client of self-service, status and sign-ins
	source *calendar.Source
	// accounts are people's own connected accounts; nil when they cannot
	// connect any.
	accounts *connect.Accounts
	share    shareFunc // nil with SQLite: one machine sweeps everything
	held     *heldCalendars

	statuses  *status.Engine
	setter    *notify.Status
	calendars cost.Calendars
	mir       *mirror.Mirror

	sched   *scheduler.Scheduler
	timers  *timer.Engine
	snoozes *snooze.Service
	answers *rsvp.Service
	notices *rsvp.Engine
	agendas *agenda.Engine
	changes *feed.Engine
	// channelAgendas are the channels' daily and weekly agendas.
	channelAgendas *agenda.ChannelEngine
	watcher        *audit.Watcher
	demand         *cost.Demand
	forecast       *monitor.PostingForecast
	// madeSubs lists the subscriptions beyond CALENDARS (people's, made
	// in Slack), as the scheduler asks for them; nil without self-service.
	madeSubs     func(ctx context.Context) ([]meetingbot.Subscription, error)
	destinations *monitor.DestinationCheck

	app     *selfservice.App
	handler http.Handler       // Slack's request URLs; nil without SLACK_SIGNING_SECRET
	socket  *socketmode.Client // Socket Mode; nil without SLACK_APP_TOKEN
	servers []*httpServer

	// endLife ends the context of the work the bot's parts start on their
	// own (the sweep after an answer from Slack): Run calls it when the
	// scheduler has stopped, Close when Run never ran.
	endLife   context.CancelFunc
	closeOnce sync.Once
	closeErr  error
}

// New builds the bot cfg describes, in order: the configuration is checked
// against the credentials and Slack first, so that a rejected key stops it
// before the database or the port; then the store, people's accounts, the
// clients, the mirror, the engines and the HTTP listeners. Its errors
// matching config.IsConfig are the operator's to fix (exit 2). When ctx
// ends during start-up (waiting for a database) it returns nil and ctx's
// error. The caller calls Run, then Close. The work the parts start on
// their own (a sweep after an answer from Slack) ends with ctx, or when
// Run returns: Run's context is ctx or one made from it.
func New(ctx context.Context, cfg config.Config, opts Options) (*Bot, error) {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	b := &Bot{cfg: cfg, opts: opts, log: log, endLife: func() {}}
	log.Info("starting", "version", opts.Version, "config", cfg.String())
	stages := []func(context.Context) error{
		b.check, b.openStore, b.connectAccounts, b.makeClients, b.makeMirror,
		b.makeScheduler, b.makeSnoozes, b.makeInvitations, b.makeFeed, b.makeWatchers, b.listen,
	}
	for _, stage := range stages {
		err := stage(ctx)
		if err == nil && ctx.Err() != nil {
			err = ctx.Err() // stopped during start-up: nothing to finish
		}
		if err != nil {
			b.Close()
			return nil, err
		}
	}
	return b, nil
}

// Addr returns the address HTTP_ADDR's listener accepts on.
func (b *Bot) Addr() string { return b.servers[0].ln.Addr().String() }

// Run serves and sweeps until ctx ends: it serves /healthz and /metrics
// and, with self-service on, Slack's request URLs and Socket Mode, and
// sweeps the calendars every tick, those of CALENDARS and those people
// made in Slack. When ctx ends it stops ticking, finishes and records a
// send in flight, shuts the HTTP servers down, ends self-service's work in
// flight and returns nil.
func (b *Bot) Run(ctx context.Context) error {
	bg, stopBG := context.WithCancel(ctx)
	defer stopBG()
	var wg sync.WaitGroup
	b.runBackground(bg, ctx, &wg)
	for _, s := range b.servers {
		wg.Go(func() {
			if err := s.srv.Serve(s.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				b.log.Error("http server stopped", "listener", s.name, "err", err)
			}
		})
		b.log.Info("serving "+s.what, "listener", s.name, "addr", s.ln.Addr().String())
	}

	err := b.sched.Run(ctx)
	b.log.Info("stopping: ticks stopped and sends in flight recorded")
	stopBG()
	b.endLife()
	shut, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	for _, s := range b.servers {
		if err := s.srv.Shutdown(shut); err != nil {
			b.log.Warn("http server shutdown", "listener", s.name, "err", err)
		}
	}
	if b.app != nil {
		// No request comes any more: end the work still in flight after
		// its answer (a slow calendar read), and wait for it.
		b.app.Close()
	}
	wg.Wait()
	b.log.Info("stopped")
	return err
}

// runBackground starts what runs beside the scheduler: the loops that end
// with bg, and the engines that, like the scheduler, end with ctx and
// finish and record a send in flight first.
func (b *Bot) runBackground(bg, ctx context.Context, wg *sync.WaitGroup) {
	wg.Go(func() { b.demand.Run(bg) })
	wg.Go(func() { b.forecast.Run(bg) })
	wg.Go(func() { b.spend.Run(bg, b.calendars) })
	wg.Go(func() { b.mon.TrackLedger(bg, b.store, ledgerRefresh) })
	wg.Go(func() { b.watcher.Run(bg) })
	wg.Go(func() { b.mir.Run(bg) })
	wg.Go(func() { b.destinations.Run(bg) })
	if b.socket != nil {
		wg.Go(func() { b.runSocketMode(bg) })
	}
	if b.accounts != nil {
		wg.Go(func() { b.accounts.Run(bg) })
	}
	if b.statuses != nil {
		wg.Go(func() { b.statuses.Keep(bg, b.setter) })
	}
	if b.agendas != nil {
		wg.Go(func() { _ = b.agendas.Run(ctx) })
	}
	if b.timers != nil {
		wg.Go(func() { _ = b.timers.Run(ctx) })
		wg.Go(func() { b.snoozes.Keep(bg, b.mir.Reading, b.store) })
	}
	if b.notices != nil {
		wg.Go(func() { _ = b.notices.Run(ctx) })
	}
	if b.changes != nil {
		wg.Go(func() { _ = b.changes.Run(ctx) })
		wg.Go(func() { _ = b.channelAgendas.Run(ctx) })
	}
}

// Close releases what New took: the listeners and the store. It may be
// called after Run, or instead of it; calling it again does nothing.
func (b *Bot) Close() error {
	b.closeOnce.Do(func() {
		if b.endLife != nil {
			b.endLife()
		}
		for _, s := range b.servers {
			s.ln.Close()
		}
		if b.slack != nil {
			b.slack.Close() // what a listing of the channels received is kept first
		}
		if b.store != nil {
			b.closeErr = b.store.Close()
		}
	})
	return b.closeErr
}
