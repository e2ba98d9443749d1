package agenda

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/meetingbot/meetingbot"
)

// lateAfter is how long after its time an agenda counts as late: a pass
// that finds it due within one interval (a restart at the minute) is on
// time.
func (e *Engine) lateAfter() time.Duration { return e.opts.Interval + meetingbot.LateSlack }

// begin marks key as being sent by this process, unless it already is.
func (e *Engine) begin(key string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stopped || e.inFlight[key] {
		return false
	}
	e.inFlight[key] = true
	e.work.Add(1)
	return true
}

func (e *Engine) end(key string) {
	e.mu.Lock()
	delete(e.inFlight, key)
	e.mu.Unlock()
	e.work.Done()
}

// deliver claims p's key at now and settles it: sent, skipped (too late,
// no meetings, the agenda turned off since) or failed. A claim another
// live process holds, or a key already settled, is left alone; an
// interrupted send is looked up in Slack before any resend.
func (e *Engine) deliver(parent context.Context, p plan, now time.Time) {
	if !e.begin(p.key()) {
		return
	}
	defer e.end(p.key())
	// The send outlives a stop by ShutdownGrace, so that what Slack took
	// is recorded.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(parent), e.opts.SendTimeout)
	defer cancel()
	defer context.AfterFunc(parent, func() {
		t := time.AfterFunc(e.opts.ShutdownGrace, cancel)
		context.AfterFunc(ctx, func() { t.Stop() })
	})()
	log := e.log.With("user", p.user, "key", p.key())

	set, ok, err := e.settings.SlackSettingsOf(ctx, p.user)
	switch {
	case err != nil:
		log.Warn("agenda settings not read; retrying at the next pass", "err", err)
		return
	case !ok || set.Agenda != p.hhmm:
		return // turned off or moved since it was planned
	}
	late := now.Sub(p.at) > e.lateAfter()
	en := p.entry(late)
	status, prev, err := e.ledger.Claim(ctx, en, now, now.Add(e.opts.Lease))
	if err != nil {
		log.Warn("agenda not claimed; retrying at the next pass", "err", err)
		return
	}
	switch status {
	case meetingbot.Busy, meetingbot.Done:
		return
	case meetingbot.Orphaned:
		en.Attempts = prev.Attempts
		if done := e.lookUp(ctx, log, p, &en); done {
			return
		}
	}
	if !now.Before(p.deadline) {
		en.Outcome, en.Code = meetingbot.Skipped, meetingbot.ReasonAfterNoon
		en.Reason = "not sent: the bot was down or stalled from " + p.at.In(p.zone).Format("15:04") + " until past " + p.deadline.In(p.zone).Format("15:04") + " " + p.zone.String()
		e.record(ctx, log, en)
		return
	}
	a, err := e.read(ctx, p, late)
	if err != nil {
		e.fail(ctx, log, en, err)
		return
	}
	if len(a.Meetings) == 0 {
		en.Outcome, en.Code, en.Reason = meetingbot.Skipped, meetingbot.ReasonNoMeetings, "no meetings that day"
		e.record(ctx, log, en)
		return
	}
	if err := e.ledger.Renew(ctx, en, e.clock.Now().Add(e.opts.Lease)); err != nil {
		log.Info("agenda claim lost before sending; leaving it to its new holder", "err", err)
		return
	}
	rc, err := e.notifier.NotifyAgenda(ctx, a)
	if err != nil {
		e.fail(ctx, log, en, err)
		return
	}
	en.Outcome, en.Channel, en.MessageTS = meetingbot.Sent, rc.Channel, rc.TS
	e.record(ctx, log, en)
	log.Info("agenda sent", "meetings", len(a.Meetings), "late", late, "channel", rc.Channel, "ts", rc.TS)
}

// lookUp finds out whether an interrupted send of p reached Slack. It
// reports true when the key is settled (found and recorded sent) or left
// for later (Slack could not tell now), false when the caller may send.
func (e *Engine) lookUp(ctx context.Context, log *slog.Logger, p plan, en *meetingbot.Entry) bool {
	r := meetingbot.Reminder{Key: en.Key, Subscription: meetingbot.Subscription{ID: en.Subscription, Kind: meetingbot.KindAgenda, Destination: p.user, CalendarID: p.calendar, Reader: p.user}, TriggerAt: p.at}
	rc, found, err := e.notifier.Delivered(ctx, r)
	switch {
	case err == nil && found:
		en.Outcome, en.Channel, en.MessageTS = meetingbot.Sent, rc.Channel, rc.TS
		en.Code, en.Reason = meetingbot.ReasonInterruptedConfirmed, "confirmed in Slack after an interrupted send"
		e.record(ctx, log, *en)
		return true
	case err != nil && !errors.Is(err, meetingbot.ErrUnknown):
		log.Warn("interrupted agenda send not confirmed yet", "err", err)
		if err := e.ledger.Release(ctx, *en, "an interrupted send is not confirmed yet: "+err.Error()); err != nil {
			log.Warn("agenda claim not released", "err", err)
		}
		return true
	case err != nil:
		en.Code, en.Reason = meetingbot.ReasonResent, "resent: Slack cannot tell whether an interrupted send went out"
	}
	return false
}

// read builds p's agenda from the calendar: that local day's meetings and
// its all-day events.
func (e *Engine) read(ctx context.Context, p plan, late bool) (meetingbot.Agenda, error) {
	a := meetingbot.Agenda{User: p.user, Calendar: p.calendar, Date: p.date, Zone: p.zone, At: p.at, Late: late}
	if a.Calendar == "" {
		who, err := e.people.Person(ctx, p.user)
		if err != nil {
			return a, err
		}
		if who.Email == "" {
			return a, meetingbot.Permanent(errors.New("the Slack profile shows no email, so the bot cannot tell which calendar is theirs (users:read.email)"))
		}
		a.Calendar = who.Email
	}
	// Meetings starts after from and up to to: the day is [start, end).
	day, err := e.cal.Day(ctx, a.Subscription(), p.dayStart.Add(-time.Nanosecond), p.dayEnd.Add(-time.Nanosecond))
	if err != nil {
		return a, err
	}
	a.Meetings = day.Meetings
	for _, ev := range day.AllDay {
		if ev.On(p.date) {
			a.AllDay = append(a.AllDay, ev)
		}
	}
	return a, nil
}

// fail settles a failed read or send: unconfirmed sends are released for
// a lookup, permanent failures recorded for the day, others retried at
// the next pass.
func (e *Engine) fail(ctx context.Context, log *slog.Logger, en meetingbot.Entry, err error) {
	switch {
	case errors.Is(err, meetingbot.ErrUnconfirmed):
		log.Warn("agenda send unconfirmed; looking it up before any resend", "err", err)
		if err := e.ledger.Release(ctx, en, "unconfirmed: "+err.Error()); err != nil {
			log.Warn("agenda claim not released", "err", err)
		}
		return
	case meetingbot.IsPermanent(err):
		en.Outcome, en.Code, en.Reason = meetingbot.Failed, meetingbot.ReasonPermanent, err.Error()
		log.Error("agenda not sent", "err", err)
	case ctx.Err() != nil:
		en.Outcome, en.Retryable, en.Code, en.Reason = meetingbot.Failed, true, meetingbot.ReasonStopped, "stopped before sending"
	default:
		en.Outcome, en.Retryable, en.Code, en.Reason = meetingbot.Failed, true, meetingbot.ReasonTransient, err.Error()
		log.Warn("agenda not sent; retrying at the next pass", "err", err)
	}
	e.record(ctx, log, en)
}

// record ends the claim with en's outcome.
func (e *Engine) record(ctx context.Context, log *slog.Logger, en meetingbot.Entry) {
	at := e.clock.Now()
	if ctx.Err() != nil {
		// Recording must not be lost to the send's deadline.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
	}
	if err := e.ledger.Record(ctx, en, at); err != nil {
		log.Error("agenda outcome not recorded", "outcome", en.Outcome, "err", err)
		return
	}
	en.RecordedAt = at
	if e.opts.Observer != nil {
		e.opts.Observer.RecordedAgenda(en)
	}
}

// settleOrphans settles the interrupted agenda sends of keys no pass
// plans any more (the agenda turned off or moved, its day past): found
// in Slack, they are recorded sent; else skipped.
func (e *Engine) settleOrphans(ctx context.Context, planned map[string]bool, now time.Time) error {
	orphans, err := e.ledger.Orphans(ctx, "", now)
	if err != nil {
		return err
	}
	for _, en := range orphans {
		if en.Kind != meetingbot.KindAgenda || planned[en.Key] || !e.begin(en.Key) {
			continue
		}
		func() {
			defer e.end(en.Key)
			log := e.log.With("key", en.Key)
			status, _, err := e.ledger.Claim(ctx, en, now, now.Add(e.opts.Lease))
			if err != nil || status != meetingbot.Orphaned {
				return
			}
			user := en.Subscription[len(meetingbot.AgendaSubscription("")):]
			p := plan{user: user, at: en.TriggerAt}
			if e.lookUp(ctx, log, p, &en) {
				return
			}
			en.Outcome, en.Code, en.Reason = meetingbot.Skipped, meetingbot.ReasonAgendaOff, "agenda turned off or moved since an interrupted send, which was not found in Slack"
			e.record(ctx, log, en)
		}()
	}
	return nil
}
