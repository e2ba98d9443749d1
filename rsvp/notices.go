package rsvp

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/internal/clock"
)

// Options configure an Engine; the zero value of each field takes its
// default.
type Options struct {
	// Interval is how often Run looks for new invitations;
	// meetingbot.DefaultTickInterval by default.
	Interval time.Duration
	// Ahead is how far ahead invitations are looked for: within the
	// mirror's window (a week and a day), so that a pass costs no
	// Calendar call the mirror does not make anyway; 7 days by default.
	// An invitation further ahead gets its notice when it comes within.
	Ahead time.Duration
	// DigestAt is how many invitations found together go out as one
	// digest; meetingbot.InviteDigestAt by default.
	DigestAt int
	// Lease bounds a ledger claim of a process that cannot be told alive
	// or dead; 2 minutes by default.
	Lease time.Duration
	// SendTimeout bounds one notice's post; 1 minute by default.
	SendTimeout time.Duration
	// ShutdownGrace is how long a send in flight when Run's context ends
	// may go on to finish and be recorded; 5 seconds by default.
	ShutdownGrace time.Duration
	// Clock tells the time; clock.New() by default.
	Clock clock.Clock
	// Logger receives the logs; discarded by default.
	Logger *slog.Logger
}

// Connections are people's own connected accounts; *connect.Accounts
// provides them.
type Connections interface {
	Connection(ctx context.Context, provider meetingbot.Provider, userID string) (meetingbot.Connection, bool, error)
}

// Engine sends the notices of new invitations. Create it with New.
type Engine struct {
	settings Settings
	people   Connections
	source   Source
	notifier Notifier
	ledger   Ledger
	opts     Options
	clock    clock.Clock
	log      *slog.Logger

	mu       sync.Mutex
	inFlight map[string]bool // keys being sent by this process
	stopped  bool
	work     sync.WaitGroup
}

// maxConcurrent bounds the people a pass reads and notifies at once.
const maxConcurrent = 8

// New returns an Engine; every dependency is required.
func New(settings Settings, people Connections, source Source, notifier Notifier, ledger Ledger, opts Options) (*Engine, error) {
	if settings == nil || people == nil || source == nil || notifier == nil || ledger == nil {
		return nil, errors.New("rsvp: settings, connections, source, notifier and ledger are required")
	}
	opts.Interval = cmp.Or(opts.Interval, meetingbot.DefaultTickInterval)
	opts.Ahead = cmp.Or(opts.Ahead, 7*24*time.Hour)
	opts.DigestAt = cmp.Or(opts.DigestAt, meetingbot.InviteDigestAt)
	opts.Lease = cmp.Or(opts.Lease, 2*time.Minute)
	opts.SendTimeout = cmp.Or(opts.SendTimeout, time.Minute)
	opts.ShutdownGrace = cmp.Or(opts.ShutdownGrace, 5*time.Second)
	if opts.Clock == nil {
		opts.Clock = clock.New()
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Engine{settings: settings, people: people, source: source, notifier: notifier, ledger: ledger,
		opts: opts, clock: opts.Clock, log: log, inFlight: map[string]bool{}}, nil
}

// Run looks for new invitations at once and then every Interval until ctx
// ends; then it lets a send in flight finish (ShutdownGrace at most) and
// returns nil. A failed pass is logged and retried at the next.
func (e *Engine) Run(ctx context.Context) error {
	clock.Every(ctx, e.clock, e.opts.Interval, func() {
		if err := e.Tick(ctx); err != nil && ctx.Err() == nil {
			e.log.Warn("invitation notices pass failed; retrying at the next", "err", err)
		}
	})
	e.mu.Lock()
	e.stopped = true
	e.mu.Unlock()
	e.work.Wait()
	return nil
}

// Calendars returns the calendars of the people whose notices are on and
// whose Google account is connected: the mirror keeps them (and their
// push channels) as it keeps the subscribed ones.
func (e *Engine) Calendars(ctx context.Context) ([]string, error) {
	return Calendars(e.settings, e.people)(ctx)
}

// Calendars lists the calendars whose notices settings and people say are
// on, as Engine.Calendars does, for the mirror, which is made before the
// Engine that reads through it.
func Calendars(settings Settings, people Connections) func(ctx context.Context) ([]string, error) {
	return func(ctx context.Context) ([]string, error) {
		return calendarsOn(ctx, settings, people)
	}
}

func calendarsOn(ctx context.Context, settings Settings, people Connections) ([]string, error) {
	sets, err := settings.InviteSettingsOn(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, set := range sets {
		c, ok, err := people.Connection(ctx, meetingbot.ProviderGoogle, set.UserID)
		if err != nil {
			return nil, err
		}
		if ok && c.State == meetingbot.ConnectionActive {
			out = append(out, meetingbot.ReadAs(c.Account, set.UserID))
		}
	}
	return out, nil
}

// Tick is one pass at the clock's now: for each person whose notices are
// on, it reads their calendar's invitations ahead and settles each new
// one once (sent, alone or in a digest; or skipped, made before they
// turned notices on), and it settles the interrupted sends of notices no
// pass finds any more. It returns the first error that kept it from
// looking at someone; one person's failure does not stop the others.
func (e *Engine) Tick(ctx context.Context) error {
	now := e.clock.Now().UTC()
	sets, err := e.settings.InviteSettingsOn(ctx)
	if err != nil {
		return fmt.Errorf("rsvp: notices on: %w", err)
	}
	var mu sync.Mutex
	var firstErr error
	found := map[string]bool{}   // the keys of the invitations found
	settled := map[string]bool{} // the people whose invitations were all looked at
	var wg sync.WaitGroup
	sem := make(chan struct{}, maxConcurrent)
	for _, set := range sets {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			keys, err := e.person(ctx, set, now)
			mu.Lock()
			defer mu.Unlock()
			for _, k := range keys {
				found[k] = true
			}
			if err == nil {
				settled[meetingbot.InviteSubscription(set.UserID)] = true
			}
			var stale *meetingbot.StaleReading
			switch {
			case errors.As(err, &stale):
				// The calendar cannot answer now, which the mirror and the
				// sweep say already: the next pass reads it again.
				e.log.Debug("invitation notices wait for a fresh reading of the calendar", "user", set.UserID, "err", err)
			case err != nil:
				e.log.Warn("invitation notices of a person failed; retrying at the next pass", "user", set.UserID, "err", err)
				firstErr = cmp.Or(firstErr, err)
			}
		})
	}
	wg.Wait()
	if err := e.settleOrphans(ctx, sets, settled, found, now); err != nil {
		firstErr = cmp.Or(firstErr, err)
	}
	return firstErr
}

// invitations returns the invitations among ms that deserve a notice at
// now: the person is an invited attendee who has not answered
// (ResponseNeedsAction, which package calendar says only of an event
// someone else organises), the meeting has not started, and a series is
// one invitation, at its next occurrence.
func invitations(user, calendarID string, ms []meetingbot.Meeting, now time.Time) []meetingbot.Invitation {
	ms = slices.Clone(ms)
	slices.SortStableFunc(ms, func(a, b meetingbot.Meeting) int { return a.Start.Compare(b.Start) })
	seen := map[string]bool{}
	var out []meetingbot.Invitation
	for _, m := range ms {
		if m.Response != meetingbot.ResponseNeedsAction || !m.Start.After(now) {
			continue
		}
		event := cmp.Or(m.RecurringEventID, m.ID)
		if seen[event] {
			continue
		}
		seen[event] = true
		out = append(out, meetingbot.Invitation{Key: meetingbot.InviteKey(user, event), User: user, Calendar: calendarID,
			Event: event, Meeting: m, Series: m.RecurringEventID != "", At: now})
	}
	return out
}

// person settles set's person's invitations at now and returns their
// keys.
func (e *Engine) person(ctx context.Context, set meetingbot.InviteSettings, now time.Time) ([]string, error) {
	c, ok, err := e.people.Connection(ctx, meetingbot.ProviderGoogle, set.UserID)
	if err != nil {
		return nil, err
	}
	if !ok || c.State != meetingbot.ConnectionActive {
		return nil, nil // no calendar of theirs to read: /meetingbot invites on says so
	}
	sub := meetingbot.Subscription{ID: meetingbot.InviteSubscription(set.UserID), Kind: meetingbot.KindInvite, CalendarID: c.Account, Reader: set.UserID, Destination: set.UserID}
	ms, err := e.source.Meetings(ctx, sub, now, now.Add(e.opts.Ahead))
	if err != nil {
		return nil, err // an old reading too: an answer since would make its notice wrong
	}
	invs := invitations(set.UserID, c.Account, ms, now)
	keys := make([]string, len(invs))
	for i, inv := range invs {
		keys[i] = inv.Key
	}
	if len(invs) == 0 {
		return nil, nil
	}
	have, err := e.ledger.Entries(ctx, sub.ID, keys)
	if err != nil {
		return keys, err
	}
	var fresh, interrupted []meetingbot.Invitation
	open := 0
	for _, inv := range invs {
		prev, known := have[inv.Key]
		switch {
		case known && prev.Final():
			continue
		case known && prev.Outcome == meetingbot.Sending:
			// In flight, or interrupted: its own send looks in Slack
			// first.
			inv.At = prev.TriggerAt
			interrupted = append(interrupted, inv)
		case known:
			inv.At = prev.TriggerAt // a failure to retry
			fresh = append(fresh, inv)
		case !inv.Meeting.Updated.IsZero() && inv.Meeting.Updated.Before(set.Since):
			e.skip(ctx, inv, now, meetingbot.ReasonInvitedBefore, "on the calendar, unchanged, before invitation notices were turned on")
			continue
		default:
			fresh = append(fresh, inv)
		}
		open++
	}
	for _, inv := range interrupted {
		e.deliver(ctx, []meetingbot.Invitation{inv}, now)
	}
	if open >= e.opts.DigestAt {
		// Found together, they go out together: a mailing list's 40
		// events are one message, in as few as Slack's limits allow.
		for chunk := range slices.Chunk(fresh, meetingbot.MaxDigest) {
			e.deliver(ctx, chunk, now)
		}
		return keys, nil
	}
	for _, inv := range fresh {
		e.deliver(ctx, []meetingbot.Invitation{inv}, now)
	}
	return keys, nil
}

// entry is inv's ledger entry.
func entry(inv meetingbot.Invitation) meetingbot.Entry {
	return meetingbot.Entry{Subscription: meetingbot.InviteSubscription(inv.User), Kind: meetingbot.KindInvite, Key: inv.Key, EventID: inv.Event,
		Start: inv.Meeting.Start.UTC(), TriggerAt: inv.At.UTC()}
}

// begin marks keys as being sent by this process; false when one of them
// already is, or Run stopped.
func (e *Engine) begin(keys []string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stopped {
		return false
	}
	for _, k := range keys {
		if e.inFlight[k] {
			return false
		}
	}
	for _, k := range keys {
		e.inFlight[k] = true
	}
	e.work.Add(1)
	return true
}

func (e *Engine) end(keys []string) {
	e.mu.Lock()
	for _, k := range keys {
		delete(e.inFlight, k)
	}
	e.mu.Unlock()
	e.work.Done()
}

// skip settles inv as skipped for code, unless it is settled already.
func (e *Engine) skip(ctx context.Context, inv meetingbot.Invitation, now time.Time, code meetingbot.ReasonCode, why string) {
	en := entry(inv)
	status, _, err := e.ledger.Claim(ctx, en, now, now.Add(e.opts.Lease))
	if err != nil || status != meetingbot.Claimed {
		return // the next pass sees it again
	}
	en.Outcome, en.Code, en.Reason = meetingbot.Skipped, code, why
	e.record(ctx, e.log.With("key", inv.Key), en)
}

// deliver claims the notices of invs (in order, stopping at the first
// another live process holds: it is sending them, likely together), and
// sends those claimed as one message (a digest when more than one), then
// records what became of them. An interrupted send is looked up in Slack
// before any resend.
func (e *Engine) deliver(parent context.Context, invs []meetingbot.Invitation, now time.Time) {
	keys := make([]string, len(invs))
	for i, inv := range invs {
		keys[i] = inv.Key
	}
	if !e.begin(keys) {
		return
	}
	defer e.end(keys)
	// The send outlives a stop by ShutdownGrace, so that what Slack took
	// is recorded.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(parent), e.opts.SendTimeout)
	defer cancel()
	defer context.AfterFunc(parent, func() {
		t := time.AfterFunc(e.opts.ShutdownGrace, cancel)
		context.AfterFunc(ctx, func() { t.Stop() })
	})()

	claimed, entries, resend := e.claimAll(ctx, invs, now)
	if len(claimed) == 0 {
		return
	}
	log := e.log.With("user", claimed[0].User, "notices", len(claimed))
	var rc meetingbot.Receipt
	var err error
	if len(claimed) == 1 {
		rc, err = e.notifier.NotifyInvite(ctx, claimed[0])
	} else {
		rc, err = e.notifier.NotifyInviteDigest(ctx, claimed)
	}
	e.settle(ctx, log, entries, rc, err, resend)
}

// claimAll claims the notices of invs in order, stopping at the first
// another live process holds, and returns those to send with their
// entries: an interrupted send found in Slack, or one whose meeting has
// started, is settled here. resend says one was interrupted before.
func (e *Engine) claimAll(ctx context.Context, invs []meetingbot.Invitation, now time.Time) (claimed []meetingbot.Invitation, entries []meetingbot.Entry, resend bool) {
	for _, inv := range invs {
		log := e.log.With("user", inv.User, "key", inv.Key)
		en := entry(inv)
		status, prev, err := e.ledger.Claim(ctx, en, now, now.Add(e.opts.Lease))
		if err != nil {
			log.Warn("notice not claimed; retrying at the next pass", "err", err)
			break
		}
		if status == meetingbot.Busy {
			break // another process is sending these
		}
		if status == meetingbot.Done {
			continue
		}
		if status == meetingbot.Orphaned {
			inv.At = prev.TriggerAt
			en.TriggerAt, en.Attempts = prev.TriggerAt, prev.Attempts
			if done := e.lookUp(ctx, log, inv, &en); done {
				continue
			}
			resend = true
		}
		if !inv.Meeting.Start.After(e.clock.Now()) {
			en.Outcome, en.Code, en.Reason = meetingbot.Skipped, meetingbot.ReasonStarted, "the meeting had started before its notice could go out"
			e.record(ctx, log, en)
			continue
		}
		claimed, entries = append(claimed, inv), append(entries, en)
	}
	return claimed, entries, resend
}

// settle records what became of the send of entries: sent (in one
// message, rc), unconfirmed (released, to be looked up before any
// retry), or failed for good or for now.
func (e *Engine) settle(ctx context.Context, log *slog.Logger, entries []meetingbot.Entry, rc meetingbot.Receipt, err error, resend bool) {
	cut := ctx.Err() != nil
	switch {
	case err == nil:
		log.Info("invitation notice sent", "channel", rc.Channel, "ts", rc.TS)
		for _, en := range entries {
			en.Outcome, en.Channel, en.MessageTS = meetingbot.Sent, rc.Channel, rc.TS
			switch {
			case len(entries) > 1:
				en.Code, en.Reason = meetingbot.ReasonDigest, fmt.Sprintf("sent in one message with the %d invitations found together", len(entries))
			case resend && en.Code == "":
				en.Code, en.Reason = meetingbot.ReasonResent, "resent after an interrupted send"
			}
			e.record(ctx, log, en)
		}
	case cut || errors.Is(err, meetingbot.ErrUnconfirmed):
		log.Warn("notice send unconfirmed; it is looked up in Slack before any retry", "err", err)
		for _, en := range entries {
			e.release(ctx, log, en, "send unconfirmed: "+err.Error())
		}
	case meetingbot.IsPermanent(err):
		log.Error("invitation notice failed permanently", "err", err)
		for _, en := range entries {
			en.Outcome, en.Code, en.Reason = meetingbot.Failed, meetingbot.ReasonPermanent, err.Error()
			e.record(ctx, log, en)
		}
	default:
		log.Warn("invitation notice failed; retrying at the next pass", "err", err)
		for _, en := range entries {
			en.Outcome, en.Retryable, en.Code, en.Reason = meetingbot.Failed, true, meetingbot.ReasonTransient, err.Error()
			e.record(ctx, log, en)
		}
	}
}

// lookUp finds out whether an interrupted send of inv reached Slack. It
// reports true when the key is settled (found, and recorded sent) or left
// for later (Slack cannot tell now), false when the caller may send.
func (e *Engine) lookUp(ctx context.Context, log *slog.Logger, inv meetingbot.Invitation, en *meetingbot.Entry) bool {
	rc, found, err := e.notifier.Delivered(ctx, inv.Reminder())
	switch {
	case err == nil && found:
		en.Outcome, en.Channel, en.MessageTS = meetingbot.Sent, rc.Channel, rc.TS
		en.Code, en.Reason = meetingbot.ReasonInterruptedConfirmed, "confirmed in Slack after an interrupted send"
		e.record(ctx, log, *en)
		return true
	case err != nil && !errors.Is(err, meetingbot.ErrUnknown):
		log.Warn("interrupted notice not confirmed yet", "err", err)
		e.release(ctx, log, *en, "an interrupted send is not confirmed yet: "+err.Error())
		return true
	case err != nil:
		en.Code, en.Reason = meetingbot.ReasonResent, "resent: Slack cannot tell whether an interrupted send went out"
	}
	return false
}

// recordTimeout bounds the ledger write that ends a claim; it is not cut
// short by shutdown, for an unrecorded send is the one way to a duplicate.
const recordTimeout = 10 * time.Second

// record ends en's claim with its outcome.
func (e *Engine) record(ctx context.Context, log *slog.Logger, en meetingbot.Entry) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	if err := e.ledger.Record(ctx, en, e.clock.Now().UTC()); err != nil {
		log.Error("notice outcome not recorded", "key", en.Key, "outcome", en.Outcome, "err", err)
	}
}

// release gives en's claim up in its "look in Slack first" state.
func (e *Engine) release(ctx context.Context, log *slog.Logger, en meetingbot.Entry, reason string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	if err := e.ledger.Release(ctx, en, reason); err != nil {
		log.Error("notice claim not released", "key", en.Key, "err", err)
	}
}

// settleOrphans settles the interrupted notices that no pass finds any
// more (the invitation answered or gone, its meeting started, notices
// turned off): found in Slack, they are recorded sent; else skipped, with
// ReasonInvitesOff when their person turned notices off. The notices of a
// person with notices on whose pass failed (settled says who did not)
// wait for a pass that reads their calendar.
func (e *Engine) settleOrphans(ctx context.Context, sets []meetingbot.InviteSettings, settled, found map[string]bool, now time.Time) error {
	orphans, err := e.ledger.Orphans(ctx, "", now)
	if err != nil {
		return err
	}
	on := map[string]bool{}
	for _, set := range sets {
		on[meetingbot.InviteSubscription(set.UserID)] = true
	}
	for _, en := range orphans {
		if en.Kind != meetingbot.KindInvite || found[en.Key] || (on[en.Subscription] && !settled[en.Subscription]) {
			continue
		}
		user := strings.TrimPrefix(en.Subscription, meetingbot.InviteSubscription(""))
		if !e.begin([]string{en.Key}) {
			continue
		}
		func() {
			defer e.end([]string{en.Key})
			log := e.log.With("user", user, "key", en.Key)
			status, prev, err := e.ledger.Claim(ctx, en, now, now.Add(e.opts.Lease))
			if err != nil || status != meetingbot.Orphaned {
				return
			}
			en.Attempts = prev.Attempts
			inv := meetingbot.Invitation{Key: en.Key, User: user, Event: en.EventID, Meeting: meetingbot.Meeting{ID: en.EventID, Start: en.Start}, At: en.TriggerAt}
			if e.lookUp(ctx, log, inv, &en) {
				return
			}
			en.Outcome, en.Code, en.Reason = meetingbot.Skipped, meetingbot.ReasonNoLongerDue, "invitation answered, gone or started since an interrupted send, which was not found in Slack"
			if !on[en.Subscription] {
				en.Code, en.Reason = meetingbot.ReasonInvitesOff, "invitation notices turned off since an interrupted send, which was not found in Slack"
			}
			e.record(ctx, log, en)
		}()
	}
	return nil
}
