// Package snooze is "Remind me at start" and "In 5 min" on a reminder: a
// click stores a durable timer (meetingbot.Timer, kind
// meetingbot.TimerKindSnooze) for the person who clicked, and the timer
// DMs them at the meeting's start or five minutes after the click.
//
// The click's side is Service (Click, Pending, Cancel), which self-service
// calls; the timer's side is Handler, which package timer calls when a
// snooze falls due. Before it sends, Handler checks the meeting (the
// mirror, then the calendar when in doubt): cancelled or declined, nothing
// goes out; moved, "at start" follows the new start under a new key, and
// "in 5 min" goes out as set, saying the new time; past the meeting's end,
// nothing goes out. The DM is claimed, sent and recorded in the ledger as
// a reminder is, so that a crash between Slack taking it and the ledger
// recording it is looked up in Slack before any resend.
package snooze

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/internal/clock"
	"github.com/meetingbot/meetingbot/timer"
)

// Options tune a Handler; the zero value of each field takes its default.
type Options struct {
	// Clock tells the time; clock.New() by default.
	Clock clock.Clock
	// Lease bounds a ledger claim of a process that cannot be told alive
	// or dead; 2 minutes by default.
	Lease time.Duration
	// CheckTimeout bounds the check of the meeting; 5 seconds by default.
	// Past it, the DM goes out on what the reminder showed.
	CheckTimeout time.Duration
	// SendTimeout bounds one DM, retries included; 1 minute by default.
	SendTimeout time.Duration
	// Logger receives the logs; discarded by default.
	Logger *slog.Logger
}

// Handler fires snooze timers: a timer.Handler.
type Handler struct {
	source Source
	notify Notifier
	ledger Ledger
	opts   Options
	clock  clock.Clock
	log    *slog.Logger
}

var _ timer.Handler = (*Handler)(nil)

// NewHandler returns a Handler; every dependency is required.
func NewHandler(source Source, notifier Notifier, ledger Ledger, opts Options) (*Handler, error) {
	if source == nil || notifier == nil || ledger == nil {
		return nil, errors.New("snooze: source, notifier and ledger are required")
	}
	if opts.Clock == nil {
		opts.Clock = clock.New()
	}
	opts.Lease = cmp.Or(opts.Lease, 2*time.Minute)
	opts.CheckTimeout = cmp.Or(opts.CheckTimeout, 5*time.Second)
	opts.SendTimeout = cmp.Or(opts.SendTimeout, time.Minute)
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Handler{source: source, notify: notifier, ledger: ledger, opts: opts, clock: opts.Clock, log: log}, nil
}

// lateAfter is how long after its instant a snooze's DM counts as late.
const lateAfter = meetingbot.LateSlack + 5*time.Second

// retryAfter is how long a snooze waits after a failure a retry may mend
// (the calendar or Slack unreachable, the ledger busy), growing with its
// attempts up to a minute.
func retryAfter(attempts int) time.Duration {
	return min(5*time.Second<<min(max(attempts-1, 0), 4), time.Minute)
}

// Fire does what the snooze t waits for; see the package comment.
func (h *Handler) Fire(ctx context.Context, t meetingbot.Timer) timer.Result {
	s, ok := meetingbot.ParseSnooze(t)
	if !ok {
		return timer.Result{State: meetingbot.TimerDone, Code: meetingbot.ReasonPermanent, Reason: "not a snooze's payload"}
	}
	log := h.log.With("timer", t.Key, "user", s.User)
	sub := meetingbot.SnoozeSubscription(s.User)
	retry := func(why string) timer.Result {
		return timer.Result{State: meetingbot.TimerPending, Reason: why, Retry: h.clock.Now().Add(retryAfter(t.Attempts))}
	}
	have, err := h.ledger.Entries(ctx, sub, []string{t.Key})
	if err != nil {
		log.Warn("read the ledger before a snooze", "err", err)
		return retry("the ledger could not be read: " + err.Error())
	}
	prev, claimed := have[t.Key]
	if claimed && prev.Final() {
		return ended(prev) // settled by a process that died before the timer was
	}

	m, outcome := h.check(ctx, s)
	now := h.clock.Now().UTC()
	end := t.Until
	if m.End.After(m.Start) && outcome != meetingbot.CheckUnknown {
		end = m.End
	}
	switch {
	case outcome == meetingbot.CheckCancelled:
		return h.nothing(ctx, log, t, s, prev, claimed, meetingbot.ReasonMeetingCancelled, "the meeting was cancelled or declined")
	case outcome == meetingbot.CheckMoved && s.Mode == meetingbot.SnoozeAtStart:
		why := "the meeting moved to " + m.Start.UTC().Format(time.RFC3339)
		if claimed {
			// A send a crash interrupted, for the old start: found in
			// Slack it stands, else the wait follows the meeting.
			if res := h.nothing(ctx, log, t, s, prev, claimed, meetingbot.ReasonMeetingMoved, why); res.Code != meetingbot.ReasonMeetingMoved {
				return res
			}
		}
		next := s
		next.Meeting = shownAs(s.Meeting, m)
		log.Info("the meeting moved; the snooze follows its start", "new_start", m.Start)
		return timer.Result{State: meetingbot.TimerMoved, Next: next.Timer(m.Start), Reason: why}
	case !now.Before(end):
		return h.nothing(ctx, log, t, s, prev, claimed, meetingbot.ReasonMeetingEnded, "the meeting had ended before the snooze could go out")
	}
	return h.deliver(ctx, log, t, s, m, outcome == meetingbot.CheckMoved)
}

// ended is the timer's end for a ledger entry already final.
func ended(e meetingbot.Entry) timer.Result {
	if e.Outcome == meetingbot.Sent {
		return timer.Result{State: meetingbot.TimerDone, Code: meetingbot.ReasonSent, Reason: cmp.Or(e.Reason, "sent")}
	}
	return timer.Result{State: meetingbot.TimerDone, Code: e.Code, Reason: e.Reason}
}

// shownAs is the meeting m as the reminder clicked could show it: a
// private one keeps what the click's snapshot showed (in a channel "Private
// meeting" and no join link, to its owner its title and link) and takes
// from the calendar its time, and its link only where the snapshot showed
// one.
func shownAs(snapshot, m meetingbot.Meeting) meetingbot.Meeting {
	if m.Private {
		shown := meetingbot.Meeting{ID: m.ID, Title: snapshot.Title, Start: m.Start, End: m.End, Private: true}
		if snapshot.JoinURL != "" {
			shown.JoinURL = m.JoinURL
		}
		return shown
	}
	return m
}

// reminder is the snooze's DM as a reminder: keyed by the timer, scoped by
// the person's pseudo-subscription, sent to them, of meeting m.
func reminder(t meetingbot.Timer, s meetingbot.Snooze, m meetingbot.Meeting, now time.Time) meetingbot.Reminder {
	return meetingbot.Reminder{
		Key:          t.Key,
		Subscription: meetingbot.Subscription{ID: meetingbot.SnoozeSubscription(s.User), Kind: meetingbot.KindSnooze, CalendarID: s.Calendar, Reader: s.Reader, Destination: s.User},
		Meeting:      m,
		Offset:       max(m.Start.Sub(t.FireAt), 0).Truncate(time.Second),
		TriggerAt:    t.FireAt,
		Late:         now.Sub(t.FireAt) > lateAfter,
	}
}

// entry is the snooze's ledger entry.
func entry(r meetingbot.Reminder) meetingbot.Entry {
	return meetingbot.Entry{
		Subscription: r.Subscription.ID, Kind: r.Subscription.Kind, Key: r.Key, EventID: r.Meeting.ID, Offset: r.Offset,
		Start: r.Meeting.Start.UTC(), TriggerAt: r.TriggerAt.UTC(), Late: r.Late,
	}
}

// nothing ends a snooze that sends nothing (its meeting cancelled, or
// ended), after settling a send a crash interrupted: found in Slack, the
// snooze went out after all.
func (h *Handler) nothing(ctx context.Context, log *slog.Logger, t meetingbot.Timer, s meetingbot.Snooze, prev meetingbot.Entry, claimed bool, code meetingbot.ReasonCode, why string) timer.Result {
	if !claimed {
		log.Info("snooze ends without a message", "code", code)
		return timer.Result{State: meetingbot.TimerDone, Code: code, Reason: why}
	}
	r := reminder(t, s, meetingbot.Meeting{ID: prev.EventID, Start: prev.Start}, h.clock.Now())
	e := entry(r)
	now := h.clock.Now().UTC()
	status, cur, err := h.ledger.Claim(ctx, e, now, now.Add(h.opts.Lease))
	switch {
	case err != nil:
		return timer.Result{State: meetingbot.TimerPending, Reason: "the ledger could not be claimed: " + err.Error(), Retry: now.Add(retryAfter(t.Attempts))}
	case status == meetingbot.Done:
		return ended(cur)
	case status == meetingbot.Busy:
		return timer.Result{State: meetingbot.TimerPending, Reason: "another process is sending it", Retry: now.Add(retryAfter(t.Attempts))}
	}
	if status == meetingbot.Orphaned {
		rc, found, err := h.lookUp(ctx, r)
		switch {
		case found:
			return h.record(ctx, log, sent(e, rc, meetingbot.ReasonInterruptedConfirmed, "confirmed in Slack after an interrupted send"))
		case err != nil && !errors.Is(err, meetingbot.ErrUnknown):
			h.release(ctx, log, e, "an interrupted send is not confirmed yet: "+err.Error())
			return timer.Result{State: meetingbot.TimerPending, Reason: "an interrupted send is not confirmed yet", Retry: now.Add(retryAfter(t.Attempts))}
		}
	}
	e.Outcome, e.Code, e.Reason = meetingbot.Skipped, code, why
	h.record(ctx, log, e)
	return timer.Result{State: meetingbot.TimerDone, Code: code, Reason: why}
}

// deliver claims the snooze's DM, sends it unless it went out already,
// and records what became of it.
func (h *Handler) deliver(ctx context.Context, log *slog.Logger, t meetingbot.Timer, s meetingbot.Snooze, m meetingbot.Meeting, moved bool) timer.Result {
	now := h.clock.Now().UTC()
	r := reminder(t, s, shownAs(s.Meeting, m), now)
	e := entry(r)
	again := func(why string) timer.Result {
		return timer.Result{State: meetingbot.TimerPending, Reason: why, Retry: h.clock.Now().Add(retryAfter(t.Attempts))}
	}
	status, prev, err := h.ledger.Claim(ctx, e, now, now.Add(h.opts.Lease))
	switch {
	case err != nil:
		log.Warn("claim a snooze", "err", err)
		return again("the ledger could not be claimed: " + err.Error())
	case status == meetingbot.Done:
		return ended(prev)
	case status == meetingbot.Busy:
		return again("another process is sending it")
	}
	resend := false
	if status == meetingbot.Orphaned {
		rc, found, err := h.lookUp(ctx, r)
		switch {
		case found:
			return h.record(ctx, log, sent(e, rc, meetingbot.ReasonInterruptedConfirmed, "confirmed in Slack after an interrupted send"))
		case err != nil && !errors.Is(err, meetingbot.ErrUnknown):
			log.Warn("check for an interrupted snooze", "err", err)
			h.release(ctx, log, e, "an interrupted send is not confirmed yet: "+err.Error())
			return again("an interrupted send is not confirmed yet")
		}
		resend = true
	}
	send, cancel := context.WithTimeout(ctx, h.opts.SendTimeout)
	rc, err := h.notify.NotifySnooze(send, r, s, moved)
	cut := send.Err() != nil
	cancel()
	switch {
	case err == nil && resend:
		return h.record(ctx, log, sent(e, rc, meetingbot.ReasonResent, "resent after an interrupted send"))
	case err == nil:
		log.Info("snooze sent", "late", r.Late, "moved", moved, "channel", rc.Channel, "ts", rc.TS)
		return h.record(ctx, log, sent(e, rc, "", ""))
	case cut || errors.Is(err, meetingbot.ErrUnconfirmed):
		log.Warn("snooze send unconfirmed; it is looked up in Slack before any retry", "err", err)
		h.release(ctx, log, e, "send unconfirmed: "+err.Error())
		return again("send unconfirmed")
	case meetingbot.IsPermanent(err):
		log.Error("snooze failed permanently", "err", err)
		e.Outcome, e.Code, e.Reason = meetingbot.Failed, meetingbot.ReasonPermanent, err.Error()
		h.record(ctx, log, e)
		return timer.Result{State: meetingbot.TimerDone, Code: meetingbot.ReasonPermanent, Reason: err.Error()}
	}
	log.Warn("snooze failed; retrying", "err", err)
	e.Outcome, e.Code, e.Reason, e.Retryable = meetingbot.Failed, meetingbot.ReasonTransient, err.Error(), true
	h.record(ctx, log, e)
	return again(err.Error())
}

func sent(e meetingbot.Entry, rc meetingbot.Receipt, code meetingbot.ReasonCode, reason string) meetingbot.Entry {
	e.Outcome, e.Channel, e.MessageTS, e.Code, e.Reason = meetingbot.Sent, rc.Channel, rc.TS, code, reason
	return e
}

// lookUp asks Slack whether r went out, within SendTimeout.
func (h *Handler) lookUp(ctx context.Context, r meetingbot.Reminder) (meetingbot.Receipt, bool, error) {
	ctx, cancel := context.WithTimeout(ctx, h.opts.SendTimeout)
	defer cancel()
	return h.notify.Delivered(ctx, r)
}

// recordTimeout bounds the ledger write that ends a claim; it is not cut
// short by shutdown, for an unrecorded send is the one way to a duplicate.
const recordTimeout = 10 * time.Second

// record ends e's claim in the ledger and returns the timer's end: done
// when e is final (and recorded), else tried again.
func (h *Handler) record(ctx context.Context, log *slog.Logger, e meetingbot.Entry) timer.Result {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	now := h.clock.Now().UTC()
	if err := h.ledger.Record(ctx, e, now); err != nil {
		log.Error("record a snooze", "outcome", e.Outcome, "err", err)
		return timer.Result{State: meetingbot.TimerPending, Reason: "not recorded: " + err.Error(), Retry: now.Add(retryAfter(1))}
	}
	e.RecordedAt = now
	if !e.Final() {
		return timer.Result{State: meetingbot.TimerPending, Reason: e.Reason, Retry: now.Add(retryAfter(e.Attempts))}
	}
	if e.Outcome == meetingbot.Sent {
		reason := cmp.Or(e.Reason, "sent")
		if e.Late {
			reason = "sent late: " + reason
		}
		return timer.Result{State: meetingbot.TimerDone, Code: meetingbot.ReasonSent, Reason: reason}
	}
	return timer.Result{State: meetingbot.TimerDone, Code: e.Code, Reason: e.Reason}
}

// release gives e's claim up in its "look in Slack first" state.
func (h *Handler) release(ctx context.Context, log *slog.Logger, e meetingbot.Entry, reason string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	if err := h.ledger.Release(ctx, e, reason); err != nil {
		log.Error("release an unconfirmed snooze", "err", err)
	}
}

// check reads the snooze's meeting: from the mirror when it shows the
// meeting at the start the click saw, else afresh from the calendar,
// which tells a move from a cancellation. When neither can answer the
// meeting is as the click saw it (CheckUnknown).
func (h *Handler) check(ctx context.Context, s meetingbot.Snooze) (meetingbot.Meeting, meetingbot.CheckOutcome) {
	ctx, cancel := context.WithTimeout(ctx, h.opts.CheckTimeout)
	defer cancel()
	sub := meetingbot.Subscription{ID: s.Subscription, CalendarID: s.Calendar, Reader: s.Reader}
	start := s.Meeting.Start
	if ms, err := h.source.Meetings(ctx, sub, start.Add(-time.Millisecond), start); err == nil {
		for _, m := range ms {
			if m.ID == s.Meeting.ID && m.Start.Equal(start) {
				return m, meetingbot.CheckConfirmed
			}
		}
	}
	m, err := h.source.Meeting(ctx, sub, s.Meeting.ID)
	switch {
	case errors.Is(err, meetingbot.ErrGone):
		return s.Meeting, meetingbot.CheckCancelled
	case err != nil:
		h.log.Debug("could not check a snoozed meeting; sending on what the reminder showed", "user", s.User, "event", s.Meeting.ID, "err", err)
		return s.Meeting, meetingbot.CheckUnknown
	case !m.Start.Equal(start):
		return m, meetingbot.CheckMoved
	}
	return m, meetingbot.CheckConfirmed
}
