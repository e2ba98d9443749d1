package daemon

import (
	"context"
	"sync"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/agenda"
	"github.com/meetingbot/meetingbot/audit"
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
	"github.com/meetingbot/meetingbot/storage/postgres"
	"github.com/meetingbot/meetingbot/storage/sqlite"
	"github.com/meetingbot/meetingbot/timer"
)

// Store is where the bot keeps its state: one machine's SQLite file
// (DATABASE_PATH), or a PostgreSQL database several replicas share
// (DATABASE_URL). It is every part's store at once.
type Store interface {
	scheduler.Ledger
	audit.Ledger
	audit.Timers
	audit.Notices
	audit.ConnectionsStore
	monitor.Counter
	selfservice.Store
	selfservice.StatusSettings
	selfservice.InviteStore
	agenda.Settings
	mirror.Store
	timer.Store
	snooze.Store
	snooze.Ledger
	snooze.Pruner
	connect.Store
	status.Settings
	rsvp.Settings
	rsvp.Ledger
	feed.Seen
	feed.Ledger
	notify.ChannelNames
	notify.StatusLedger
	Close() error
}

// Both stores provide everything the bot reads and writes; PostgreSQL's
// claims are held by its replicas' heartbeats.
var (
	_ Store            = (*sqlite.Store)(nil)
	_ Store            = (*postgres.Store)(nil)
	_ scheduler.Holder = (*postgres.Store)(nil)
)

// shareFunc is a replica's share of the subscriptions, as
// scheduler.Options.Share asks for it.
type shareFunc = func(ctx context.Context, subs []meetingbot.Subscription) ([]meetingbot.Subscription, error)

// openStore opens the state cfg names. With PostgreSQL it waits while the
// database cannot be reached (postgres.OpenWaiting), and keeps the
// replica's share, which tells the monitor what the replica holds at
// every round; with SQLite one machine sweeps everything.
func (b *Bot) openStore(ctx context.Context) error {
	if b.cfg.DatabaseURL == "" {
		s, err := sqlite.Open(ctx, b.cfg.DatabasePath)
		if err != nil {
			return err
		}
		b.store = s
		return nil
	}
	s, err := postgres.OpenWaiting(ctx, b.cfg.DatabaseURL, postgres.Options{Interval: b.cfg.TickInterval}, b.log, postgres.Waits{})
	if err != nil || s == nil {
		return err // nil: stopped while waiting for the database
	}
	b.store = s
	b.log.Info("state in PostgreSQL: the subscriptions are shared with the other replicas there",
		"db", config.RedactURL(b.cfg.DatabaseURL), "replica", s.Owner(), "lease", postgres.LeaseTicks*b.cfg.TickInterval)
	b.held = &heldCalendars{}
	b.share = func(ctx context.Context, subs []meetingbot.Subscription) ([]meetingbot.Subscription, error) {
		mine, err := s.Share(ctx, subs)
		ids := make([]string, len(mine))
		for i, sub := range mine {
			ids[i] = sub.ID
		}
		if err == nil || ctx.Err() == nil {
			b.mon.Leases(ids, len(subs), err)
		}
		return mine, err
	}
	return nil
}

// minQuotaShare is the least share of the project's Calendar quotas a
// replica spends: one that holds no subscription yet still syncs the
// calendars notifications name and opens the channels of those it comes to
// hold.
const minQuotaShare = 0.05

// replicaShare wraps share, a replica's share of the subscriptions, to
// tell the Calendar client what share of the project's quotas the replica
// spends (the share of the subscriptions it holds, at least minQuotaShare)
// and held which calendars it keeps push channels on.
func replicaShare(share shareFunc, quotas interface{ ShareQuotas(float64) }, held *heldCalendars) shareFunc {
	return func(ctx context.Context, subs []meetingbot.Subscription) ([]meetingbot.Subscription, error) {
		mine, err := share(ctx, subs)
		if err != nil {
			return mine, err
		}
		if len(subs) > 0 {
			quotas.ShareQuotas(max(minQuotaShare, float64(len(mine))/float64(len(subs))))
		}
		held.set(subs, mine)
		return mine, nil
	}
}

// heldCalendars are the calendars of the subscriptions a replica holds, as
// its last share said: it keeps the push channels of those
// (mirror.Options.Watch), and of the calendars no subscription shared
// names (another of the bot's readers', such as invitation notices'), so
// that replicas started together do not open a channel each on every
// calendar. Until the first share it keeps none; then first, if set, is
// called once (the mirror's MaintainNow).
type heldCalendars struct {
	mu     sync.Mutex
	known  bool
	held   map[string]bool
	shared map[string]bool
	first  func()
}

// watch reports whether the replica keeps calendarID's channel.
func (h *heldCalendars) watch(calendarID string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.known && (h.held[calendarID] || !h.shared[calendarID])
}

// onFirst registers f, called once the first share is known.
func (h *heldCalendars) onFirst(f func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.first = f
}

// set records the calendars of mine, out of those of subs.
func (h *heldCalendars) set(subs, mine []meetingbot.Subscription) {
	held, shared := map[string]bool{}, map[string]bool{}
	for _, s := range mine {
		held[s.CalendarID] = true
	}
	for _, s := range subs {
		shared[s.CalendarID] = true
	}
	h.mu.Lock()
	first := !h.known
	h.known, h.held, h.shared = true, held, shared
	call := h.first
	h.mu.Unlock()
	if first && call != nil {
		call()
	}
}

// claimLease is how long a claim on a reminder keeps other processes off
// its key when its owner cannot be told alive. With SQLite, where flock(2)
// tells it, the scheduler's default. With PostgreSQL a replica's claims
// are its own while its heartbeat is fresh (postgres.LeaseTicks ticks
// from its last beat), and Hold cuts a send the heartbeat no longer
// covers (scheduler.Holder), so the lease need only outlast a tick: a
// replica killed mid-send leaves its claims to the others as soon as its
// heartbeat runs out, within that span (looked up in Slack, then sent
// late if the meeting has not started), where a longer lease kept them
// off the key past the meeting's start.
func claimLease(cfg config.Config) time.Duration {
	if cfg.DatabaseURL == "" {
		return 0
	}
	return cfg.TickInterval
}
