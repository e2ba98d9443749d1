package main

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/config"
	"github.com/meetingbot/meetingbot/internal/outbound"
	"github.com/meetingbot/meetingbot/notify"
	"github.com/meetingbot/meetingbot/scheduler"
)

// Slack status during meetings, as the bot wires it: one subscription per
// person who connected their Slack user, destination
// notify.StatusDestination(user), offset 0, swept by the scheduler with
// the reminders; the notifier routes its reminders to notify.Status.

// The router provides what the scheduler consumes.
var (
	_ scheduler.Notifier          = routed{}
	_ scheduler.Editor            = routed{}
	_ scheduler.DestinationLookup = routed{}
)

// routed sends status subscriptions' reminders to the status setter and
// every other reminder to Slack.
type routed struct {
	slack  *notify.Slack
	status *notify.Status
}

func isStatus(sub meetingbot.Subscription) bool { return sub.Kind == meetingbot.KindStatus }

func (r routed) Notify(ctx context.Context, rem meetingbot.Reminder) (meetingbot.Receipt, error) {
	if isStatus(rem.Subscription) {
		return r.status.Notify(ctx, rem)
	}
	return r.slack.Notify(ctx, rem)
}

func (r routed) NotifyDigest(ctx context.Context, rs []meetingbot.Reminder) (meetingbot.Receipt, error) {
	if isStatus(rs[0].Subscription) {
		return r.status.NotifyDigest(ctx, rs)
	}
	return r.slack.NotifyDigest(ctx, rs)
}

func (r routed) Delivered(ctx context.Context, rem meetingbot.Reminder) (meetingbot.Receipt, bool, error) {
	if isStatus(rem.Subscription) {
		return r.status.Delivered(ctx, rem)
	}
	return r.slack.Delivered(ctx, rem)
}

func (r routed) Edit(ctx context.Context, f meetingbot.Follow) error {
	if isStatus(f.Reminder.Subscription) {
		return r.status.Edit(ctx, f)
	}
	return r.slack.Edit(ctx, f)
}

func (r routed) LookUp(ctx context.Context, sub meetingbot.Subscription) error {
	if isStatus(sub) {
		return nil // a person's own token needs no lookup
	}
	return r.slack.LookUp(ctx, sub)
}

// Pace waits for a status's turn at users.profile.set's pace; the other
// reminders have none to wait for here (Slack's pace of a channel is
// kept inside the send).
func (r routed) Pace(ctx context.Context, rem meetingbot.Reminder) error {
	if isStatus(rem.Subscription) {
		return r.status.Pace(ctx, rem)
	}
	return nil
}

// statuses is the status subscriptions of the people who connected their
// Slack user, each reading the calendar of their Slack profile email.
type statuses struct {
	store interface {
		Connections(ctx context.Context) ([]meetingbot.Connection, error)
	}
	settings func(ctx context.Context, userID string) meetingbot.StatusSettings
	// email returns a Slack user's profile email.
	lookup func(ctx context.Context, userID string) (string, error)
	now    func() time.Time
	log    *slog.Logger

	mu     sync.Mutex
	emails map[string]cachedEmail
	// kept is, by subscription, what the last Reconsider found of the
	// status an entry set, so that a status Slack shows as the calendar
	// says, or that is not the bot's, is not read again every keepInterval.
	kept map[string]keptStatus
}

type cachedEmail struct {
	email string
	at    time.Time
}

// keptStatus is what Reconsider found for the entry that set a status
// until entry: the status shown expires at now, or is the person's own
// (left).
type keptStatus struct {
	entry, now time.Time
	left       bool
}

// emailTTL is how long a person's Slack profile email is reused.
const emailTTL = 10 * time.Minute

// statusSettings returns a reader of people's status settings from st, or
// one that reads none.
func statusSettings(st any) func(ctx context.Context, userID string) meetingbot.StatusSettings {
	ss, ok := st.(interface {
		StatusSettingsOf(ctx context.Context, userID string) (meetingbot.StatusSettings, bool, error)
	})
	return func(ctx context.Context, userID string) meetingbot.StatusSettings {
		if !ok {
			return meetingbot.StatusSettings{UserID: userID}
		}
		set, _, err := ss.StatusSettingsOf(ctx, userID)
		if err != nil {
			return meetingbot.StatusSettings{UserID: userID}
		}
		return set
	}
}

// newStatuses returns the status subscriptions' source and the status
// setter for cfg, or nils when people cannot connect their Slack user.
// ledger is the bot's: the statuses it recorded setting.
func newStatuses(cfg config.Config, conns *connections, ledger notify.StatusLedger, source func(ctx context.Context, sub meetingbot.Subscription, from, to time.Time) ([]meetingbot.Meeting, error), log *slog.Logger) (*statuses, *notify.Status) {
	if conns == nil || !cfg.SlackConnect() {
		return nil, nil
	}
	a := conns.accounts
	settings := statusSettings(conns.store)
	set := notify.NewStatus(notify.StatusConfig{
		APIURL: cfg.SlackAPIURL,
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
		Meetings: source,
		Titles:   func(ctx context.Context, userID string) bool { return settings(ctx, userID).Titles },
		Ledger:   ledger,
		Revoked: func(ctx context.Context, userID string, err error) {
			a.Stop(ctx, meetingbot.ProviderSlack, userID)
		},
		Logger: log,
	})
	api := slack.New(cfg.SlackToken, slack.OptionAPIURL(cfg.SlackAPIURL), slack.OptionHTTPClient(outbound.Client(&http.Client{Timeout: slackCallTimeout})))
	lookup := func(ctx context.Context, userID string) (string, error) {
		u, err := api.GetUserInfoContext(ctx, userID)
		if err != nil {
			return "", err
		}
		return u.Profile.Email, nil
	}
	return newStatusSubscriptions(conns.store, settings, lookup, time.Now, log), set
}

// newStatusSubscriptions returns the status subscriptions of the Slack
// connections in st.
func newStatusSubscriptions(st interface {
	Connections(ctx context.Context) ([]meetingbot.Connection, error)
}, settings func(ctx context.Context, userID string) meetingbot.StatusSettings, lookup func(ctx context.Context, userID string) (string, error), now func() time.Time, log *slog.Logger) *statuses {
	return &statuses{store: st, settings: settings, lookup: lookup, now: now, log: log, emails: map[string]cachedEmail{}, kept: map[string]keptStatus{}}
}

// subscriptions returns one status subscription per active Slack
// connection whose person's email is known; it asks for the calendar's
// out-of-office events when its person turned them on.
func (s *statuses) subscriptions(ctx context.Context) ([]meetingbot.Subscription, error) {
	cs, err := s.store.Connections(ctx)
	if err != nil {
		return nil, err
	}
	var out []meetingbot.Subscription
	for _, c := range cs {
		if c.Provider != meetingbot.ProviderSlack || c.State != meetingbot.ConnectionActive {
			continue
		}
		email := s.email(ctx, c.UserID)
		if email == "" {
			continue
		}
		out = append(out, meetingbot.Subscription{
			ID: meetingbot.StatusSubscription(c.UserID), Kind: meetingbot.KindStatus, CalendarID: email, Destination: notify.StatusDestination(c.UserID),
			Offsets: []time.Duration{0}, OutOfOffice: s.settings(ctx, c.UserID).OutOfOffice,
		})
	}
	return out, nil
}

// calendars lists the calendars of the status subscriptions, for the
// mirror.
func (s *statuses) calendars(ctx context.Context) ([]string, error) {
	subs, err := s.subscriptions(ctx)
	out := make([]string, len(subs))
	for i, sub := range subs {
		out[i] = sub.CalendarID
	}
	return out, err
}

// email returns userID's Slack profile email, from users.info, reused for
// emailTTL; "" when it cannot be read.
func (s *statuses) email(ctx context.Context, userID string) string {
	s.mu.Lock()
	c, ok := s.emails[userID]
	s.mu.Unlock()
	if ok && s.now().Sub(c.at) < emailTTL {
		return c.email
	}
	email, err := s.lookup(ctx, userID)
	if err != nil {
		s.log.Warn("cannot read the email of a person whose status the bot sets", "user", userID, "err", err)
		return c.email
	}
	email = strings.ToLower(email)
	s.mu.Lock()
	s.emails[userID] = cachedEmail{email: email, at: s.now()}
	s.mu.Unlock()
	return email
}

// keepInterval is how often the statuses shown are checked against their
// meetings.
const keepInterval = 5 * time.Second

// statusKeeper is what keep needs of the status setter.
type statusKeeper interface {
	Want(ctx context.Context, sub meetingbot.Subscription, now time.Time) (notify.Wanted, error)
	Reconsider(ctx context.Context, sub meetingbot.Subscription, now time.Time) (string, time.Time, error)
}

// keepLedger is what keep reads and writes of the ledger: the statuses
// set, and each one moved.
type keepLedger interface {
	notify.StatusLedger
	Claim(ctx context.Context, e meetingbot.Entry, now, leaseUntil time.Time) (meetingbot.ClaimStatus, meetingbot.Entry, error)
	Record(ctx context.Context, e meetingbot.Entry, now time.Time) error
}

// movedKey is the ledger key of a status moved to expire at until: the
// record that the status is the bot's, for whichever replica looks next.
func movedKey(until time.Time) string { return "moved:" + strconv.FormatInt(until.Unix(), 10) }

// keep checks the statuses shown against their meetings every
// keepInterval until ctx ends (keepTick).
func (s *statuses) keep(ctx context.Context, ledger keepLedger, set statusKeeper) {
	t := time.NewTicker(keepInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.keepTick(ctx, ledger, set, s.now())
		}
	}
}

// keepTick checks, at now, each status the bot set that may still show
// against the meetings in the mirror (Want, no call to Slack): one whose
// meeting was cancelled, declined, moved, cut short or extended is made
// what the calendar says (Reconsider). What Reconsider found is kept, so
// that a status is read from Slack again only when the calendar changes
// what it calls for.
func (s *statuses) keepTick(ctx context.Context, ledger keepLedger, set statusKeeper, now time.Time) {
	subs, err := s.subscriptions(ctx)
	if err != nil {
		return
	}
	for _, sub := range subs {
		entries, err := ledger.Range(ctx, sub.ID, now.Add(-24*time.Hour), now.Add(time.Second))
		if err != nil {
			continue
		}
		var until time.Time // the latest status the entries set that may still show
		for _, e := range entries {
			if exp, ok := notify.Showing(e, now); ok && exp.After(until) {
				until = exp
			}
		}
		s.mu.Lock()
		k, seen := s.kept[sub.ID]
		if !until.After(now) {
			delete(s.kept, sub.ID)
		}
		s.mu.Unlock()
		if until.IsZero() {
			continue
		}
		shows := until
		if seen && k.entry.Equal(until) {
			if k.left || !k.now.After(now) {
				continue // the person's own status, or cleared
			}
			shows = k.now
		}
		w, err := set.Want(ctx, sub, now)
		if err != nil || w.Allows(shows) {
			continue
		}
		what, exp, err := set.Reconsider(ctx, sub, now)
		if err != nil {
			s.log.Warn("cannot make a status follow its meetings; tried again shortly", "subscription", sub.ID, "err", err)
			continue
		}
		if what == notify.Moved {
			s.recordMove(ctx, ledger, sub, exp, now)
		}
		s.mu.Lock()
		s.kept[sub.ID] = keptStatus{entry: until, now: exp, left: what == notify.Left}
		s.mu.Unlock()
	}
}

// recordMove records in the ledger that sub's status was moved to expire
// at until, as a status sent: the bot's own from then on (notify's ours),
// on every replica.
func (s *statuses) recordMove(ctx context.Context, ledger keepLedger, sub meetingbot.Subscription, until, now time.Time) {
	e := meetingbot.Entry{Subscription: sub.ID, Kind: sub.Kind, Key: movedKey(until), Start: now, TriggerAt: now}
	st, _, err := ledger.Claim(ctx, e, now, now.Add(time.Minute))
	if err != nil || st != meetingbot.Claimed {
		if err != nil {
			s.log.Warn("cannot record a status moved", "subscription", sub.ID, "err", err)
		}
		return
	}
	e.Outcome, e.Channel, e.MessageTS = meetingbot.Sent, sub.Destination, strconv.FormatInt(until.Unix(), 10)
	e.Reason = "moved to follow its meetings"
	if err := ledger.Record(ctx, e, now); err != nil {
		s.log.Warn("cannot record a status moved", "subscription", sub.ID, "err", err)
	}
}
