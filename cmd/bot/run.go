package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/audit"
	"github.com/meetingbot/meetingbot/calendar/cost"
	"github.com/meetingbot/meetingbot/config"
	"github.com/meetingbot/meetingbot/connect"
	"github.com/meetingbot/meetingbot/internal/clock"
	"github.com/meetingbot/meetingbot/internal/logger"
	"github.com/meetingbot/meetingbot/mirror"
	"github.com/meetingbot/meetingbot/monitor"
	"github.com/meetingbot/meetingbot/rsvp"
	"github.com/meetingbot/meetingbot/scheduler"
)

// usageError is a command line the bot does not understand; it exits 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// run is the whole program: main only adds signals and the exit status.
// It returns a *config.Error or a usageError for what the operator must
// fix before anything starts, and nil when ctx ends after a clean stop.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cmd := ""
	if len(args) > 0 {
		cmd = args[0]
	}
	switch cmd {
	case "-h", "-help", "--help", "help":
		config.Usage(stdout)
		return nil
	case "audit":
		return runAudit(ctx, args[1:], getenv, stdout, stderr)
	case "doctor":
		return runDoctor(ctx, args[1:], getenv, stdout, stderr)
	case "version", "-version", "--version":
		if len(args) > 1 {
			return usageError{fmt.Sprintf("unexpected argument %q: bot version takes none", args[1])}
		}
		return printVersion(stdout)
	case "", "demo":
	default:
		return usageError{fmt.Sprintf("unknown command %q: want no command, demo, audit, doctor or version (see bot -h)", cmd)}
	}
	if len(args) > 1 {
		return usageError{fmt.Sprintf("unexpected argument %q: configuration comes from environment variables (see bot -h)", args[1])}
	}
	if cmd == "demo" {
		return demo(ctx, getenv, stdout, stderr)
	}
	cfg, err := config.Parse(getenv)
	if err != nil {
		return err
	}
	if cfg.Demo {
		return demo(ctx, getenv, stdout, stderr)
	}
	return serve(ctx, cfg, newLogger(cfg, stderr), hooks{})
}

// newLogger builds the one logger of the process, writing to w.
func newLogger(cfg config.Config, w io.Writer) *slog.Logger {
	return logger.New(cfg.LogLevel, cfg.LogFormat, w)
}

// Timings of the serving process.
const (
	// checkTimeout bounds the start-up check of the Slack token.
	checkTimeout = 20 * time.Second
	// ledgerRefresh is how often the ledger rows gauge is refreshed.
	ledgerRefresh = time.Minute
	// shutdownTimeout bounds the HTTP server's shutdown.
	shutdownTimeout = 2 * time.Second
)

// hooks let the demo watch the serving process, and the simulated day
// (day_test.go) run it without a socket, inside a synctest bubble.
type hooks struct {
	// listening is called with the HTTP address once it accepts.
	listening func(addr string)
	// listen, if set, opens the HTTP listeners instead of net.Listen.
	listen func(network, addr string) (net.Listener, error)
	// http, where set, carries the Calendar and Slack clients' requests.
	http httpClients
}

// serve runs the bot with cfg until ctx ends: it opens the ledger, serves
// /healthz and /metrics (see listen) and, with self-service on, Slack's
// request URLs and Socket Mode (see newSelfService), and sweeps the
// calendars every tick, those of CALENDARS and those people made in Slack.
// When ctx ends it stops ticking, finishes and records a send in flight,
// shuts the HTTP server down, ends self-service's work in flight and
// returns nil.
func serve(ctx context.Context, cfg config.Config, log *slog.Logger, h hooks) error {
	log.Info("starting", "version", version(), "config", cfg.String())
	// The clients first: they check the credentials without side effects,
	// so a rejected key stops the bot before the database or the port.
	mon := monitor.New(monitor.Options{Subscriptions: cfg.Subscriptions, Interval: cfg.TickInterval})
	late := accountsFor(cfg)
	// What Calendar calls cost (package cost), of the calendars subscribed
	// once the store is open.
	spent := cost.NewSpend(cfg, clock.New(), mon, log)
	source, slack, err := clients(ctx, cfg, log, observers{calendar: spent.Observe(mon.ObserveCalendar), slack: mon.ObserveSlack, quotaWait: mon.ObserveQuotaWait, quotaChanged: cost.NewUsageLimits(cfg, mon, log).Changed}, late, h.http)
	if err != nil {
		return err
	}
	if ctx.Err() != nil {
		return nil // stopped during start-up: nothing to finish
	}
	store, share, err := openStore(ctx, cfg, mon, log)
	if err != nil || store == nil {
		return err // nil: stopped while waiting for the database
	}
	var held *heldCalendars // with replicas, the calendars this one keeps channels on
	if share != nil {
		held = &heldCalendars{}
		share = replicaShare(share, source, held)
	}
	defer store.Close()
	keepChannelNames(slack, store, cfg.Subscriptions, log)
	netListen := net.Listen
	if h.listen != nil {
		netListen = h.listen
	}
	servers, err := listen(cfg, mon, log, netListen)
	if err != nil {
		return err
	}
	defer func() {
		for _, s := range servers {
			s.ln.Close()
		}
	}()

	snoozes, err := newSnoozes(cfg, store, slack, mon, log)
	if err != nil {
		return err
	}
	refresh := &lateRefresh{}
	var answers *rsvp.Service
	if cfg.SelfService() {
		if answers, err = newAnswers(source, late, refresh, log); err != nil {
			return err
		}
	}
	fromSlack, err := newSelfService(cfg, store, source, mon, slack.BotUserID(), log, late, snoozes, answers)
	if err != nil {
		return err
	}
	conns, err := newConnections(ctx, cfg, store, source, fromSlack, late, mon.Registerer(), log)
	if err != nil {
		return err
	}

	// A send in flight at SIGTERM gets the scheduler's ShutdownGrace (5s)
	// to finish and be recorded, well within the 10 seconds promised.
	opts := scheduler.Options{
		Interval: cfg.TickInterval,
		Lease:    claimLease(cfg),
		Logger:   log,
		Observer: mon,
		Share:    share,
	}
	if fromSlack != nil {
		opts.Subscriptions = fromSlack.subscriptions
	}
	// People's Slack status during meetings: subscriptions of their own,
	// routed to the status setter (status.go).
	var mir *mirror.Mirror
	stat, setter := newStatuses(cfg, conns, store, func(ctx context.Context, sub meetingbot.Subscription, from, to time.Time) ([]meetingbot.Meeting, error) {
		return mir.Meetings(ctx, sub, from, to)
	}, log)
	var notifier scheduler.Notifier = slack
	var extraCalendars func(ctx context.Context) ([]string, error)
	if stat != nil {
		notifier = scheduler.ByKind{meetingbot.KindReminder: slack, meetingbot.KindStatus: setter}
		extraCalendars = stat.Calendars
	}
	if conns != nil {
		var access connect.Access
		if cfg.HasServiceAccount() {
			access = source.Access
		}
		opts.Subscriptions = sweptSubscriptions(opts.Subscriptions, stat, connect.NewPauses(conns.store, access, time.Now), cfg.Subscriptions, mon)
	}
	// Notices of new invitations read the calendars of the people who
	// turned them on through the mirror, which keeps those calendars too.
	notices, err := newNotices(cfg, store, conns, answers, func(ctx context.Context, sub meetingbot.Subscription, from, to time.Time) ([]meetingbot.Meeting, error) {
		return mir.Meetings(ctx, sub, from, to)
	}, slack, log)
	if err != nil {
		return err
	}
	if notices != nil {
		extraCalendars = bothCalendars(extraCalendars, notices.Calendars)
	}
	// The sweeps plan from a mirror of each calendar, kept by incremental
	// sync and, with PUBLIC_URL, by push notifications, which wake the
	// scheduler for the calendar that changed.
	var sched *scheduler.Scheduler
	var changed func(ctx context.Context, calendarID string, ms []meetingbot.Meeting)
	if snoozes != nil {
		changed = snoozes.service.Changed // "at start" follows a meeting that moves
	}
	mir, err = newMirror(cfg, source, store, fromSlack != nil, mon, log,
		func(ctx context.Context, calendarID string) { sched.SweepCalendar(ctx, calendarID) }, extraCalendars, changed, held)
	if err != nil {
		return err
	}
	if conns != nil {
		// A connection about to be revoked stops the push channels it
		// opened, while it still can.
		conns.accounts.Hook(connect.Hooks{Disconnecting: func(ctx context.Context, c meetingbot.Connection) { mir.StopChannels(ctx, c.Account) }})
	}
	if held != nil {
		held.first = mir.MaintainNow // the channels of what it holds, once it knows
	}
	sched, err = scheduler.New(cfg.Subscriptions, mir, notifier, store, opts)
	if err != nil {
		return err
	}
	if snoozes != nil {
		snoozes.source.set(mir) // a snooze checks its meeting as a timer does
	}
	agendas, err := newAgenda(cfg, store, source, slack, mon, log)
	if err != nil {
		return err
	}
	// The in-process audit reads the calendars through the mirror, as the
	// sweeps do: reading each calendar every 5 minutes besides would cost
	// as much as the safety resync. bot audit reads them directly.
	watcher, err := audit.NewWatcher(audit.WatcherConfig{
		Deps: audit.Deps{
			Subscriptions: cfg.Subscriptions, Source: mir, Ledger: store, Slack: slack, Interval: cfg.TickInterval,
			Agendas: auditAgendas(cfg, store, source, slack),
		},
		Logger: log,
	}, mon.Registerer())
	if err != nil {
		return err
	}

	// Said at start-up, and again when it changes side.
	calendars := subscribedCalendars(cfg, store, fromSlack != nil, extraCalendars)
	demand := cost.NewDemand(cfg, source, calendars, mon, log)
	demand.Check(ctx)
	spent.StartUp(ctx, calendars)

	bg, stopBG := context.WithCancel(ctx)
	defer stopBG()
	// An answer given from Slack reads its calendar again at once: a
	// declined meeting's reminders stop and say "You declined".
	refresh.set(func(ctx context.Context, calendarID string) {
		if err := mir.Sync(ctx, calendarID); err != nil {
			log.Warn("sync after an answer; the next sweep reads the calendar", "calendar", calendarID, "err", err)
		}
		sched.SweepCalendar(bg, calendarID)
	})
	var wg sync.WaitGroup
	wg.Go(func() { demand.Run(bg) })
	wg.Go(func() { spent.Run(bg, calendars) })
	if fromSlack != nil {
		fromSlack.mount(servers)
		fromSlack.run(bg, &wg)
	}
	if cfg.PublicURL != "" {
		mountNotify(servers, mir.Handler(), log)
	}
	if conns != nil {
		conns.mount(servers)
		wg.Go(func() { conns.accounts.Run(bg) })
	}
	if stat != nil {
		wg.Go(func() { stat.Keep(bg, setter) })
	}
	for _, s := range servers {
		wg.Go(func() {
			if err := s.srv.Serve(s.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				log.Error("http server stopped", "listener", s.name, "err", err)
			}
		})
		log.Info("serving "+s.what, "listener", s.name, "addr", s.ln.Addr().String())
	}
	wg.Go(func() { mon.TrackLedger(bg, store, ledgerRefresh) })
	wg.Go(func() { watcher.Run(bg) })
	wg.Go(func() { mir.Run(bg) })
	if agendas != nil {
		// Stopped with the scheduler, at ctx's end: a send in flight is
		// finished and recorded before wg.Wait returns.
		wg.Go(func() { _ = agendas.Run(ctx) })
	}
	if snoozes != nil {
		snoozes.run(ctx, &wg, mir.Reading) // as the agendas
	}
	if notices != nil {
		wg.Go(func() { _ = notices.Run(ctx) }) // as the agendas
	}
	wg.Go(func() { monitor.NewDestinationCheck(cfg.Subscriptions, slack.Resolve, mon.Destination, log).Run(bg) })
	if h.listening != nil {
		h.listening(servers[0].ln.Addr().String())
	}

	err = sched.Run(ctx)
	log.Info("stopping: ticks stopped and sends in flight recorded")
	stopBG()
	shut, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownTimeout)
	defer cancel()
	for _, s := range servers {
		if err := s.srv.Shutdown(shut); err != nil {
			log.Warn("http server shutdown", "listener", s.name, "err", err)
		}
	}
	if fromSlack != nil {
		// No request comes any more: end the work still in flight after
		// its answer (a slow calendar read), and wait for it.
		fromSlack.app.Close()
	}
	wg.Wait()
	log.Info("stopped")
	return err
}
