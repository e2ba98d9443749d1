package scheduler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/meetingbot/meetingbot"
)

// claim is a reminder whose claim this process holds, ready to send.
type claim struct {
	r      meetingbot.Reminder
	e      meetingbot.Entry
	lease  time.Time
	resend bool // an interrupted send that Slack could not confirm or deny
	log    *slog.Logger
}

// remind claims r, sends it (or records why not), and records the outcome.
// It reports whether r's outcome is final.
func (s *Scheduler) remind(ctx context.Context, r meetingbot.Reminder) bool {
	if !s.begin(r.Subscription.ID, r.Key) {
		// Being worked on in this process (a timer's send and a sweep
		// meeting at its trigger): that path records it, and the cursor
		// may move, for a reminder not yet final stays in every later
		// sweep's window until its meeting starts.
		return true
	}
	defer s.end(r.Subscription.ID, r.Key)
	c, ok, final := s.prepare(ctx, r)
	if !ok {
		return final
	}
	return s.post(ctx, []claim{c})
}

// remindAll does what remind does for reminders of one subscription due
// at one instant: when more than DigestAbove of them are to be sent, they
// go out as digests (at most meetingbot.MaxDigest reminders each), else
// one by one. It reports whether every outcome is final.
func (s *Scheduler) remindAll(ctx context.Context, rs []meetingbot.Reminder) bool {
	if len(rs) <= s.opts.DigestAbove {
		all := true
		for _, r := range rs {
			if ctx.Err() != nil {
				return false
			}
			all = s.remind(ctx, r) && all
		}
		return all
	}
	all := true
	var ready []claim
	for _, r := range rs {
		if !s.begin(r.Subscription.ID, r.Key) {
			continue // being worked on in this process; see remind
		}
		defer s.end(r.Subscription.ID, r.Key)
		c, ok, final := s.prepare(ctx, r)
		if ok {
			ready = append(ready, c)
		} else {
			all = all && final
		}
	}
	if len(ready) <= s.opts.DigestAbove {
		for _, c := range ready {
			all = s.post(ctx, []claim{c}) && all
		}
		return all
	}
	for batch := range slices.Chunk(ready, meetingbot.MaxDigest) {
		all = s.post(ctx, batch) && all
	}
	return all
}

// prepare claims r and settles what needs no send: a key already final or
// claimed by another live process, an interrupted send found in Slack, a
// meeting started. It returns the claim to send (ok), or whether r's
// outcome is final.
func (s *Scheduler) prepare(ctx context.Context, r meetingbot.Reminder) (c claim, ok, final bool) {
	log := s.log.With("subscription", r.Subscription.ID, "key", r.Key)
	e := entryOf(r)
	// The lease starts now, when the claim is made, not when the sweep
	// began: earlier reads and sends may have taken a while.
	claimed := s.clock.Now().UTC()
	lease := claimed.Add(s.opts.Lease)
	status, prev, err := s.ledger.Claim(ctx, e, claimed, lease)
	if err != nil {
		if ctx.Err() == nil { // stopping: nothing was claimed
			s.ledgerFailed(err)
			log.Error("claim reminder", "err", err)
		}
		return c, false, false
	}
	switch status {
	case meetingbot.Done:
		return c, false, true
	case meetingbot.Busy:
		log.Debug("reminder claimed by another process", "owner", prev.Owner, "free_from", prev.LeaseUntil)
		s.resweep(ctx, r.Subscription, prev.LeaseUntil, false)
		return c, false, false
	}

	// The claim is ours. Finish what it guards even if ctx ends now: an
	// unrecorded send is the one way to a duplicate.
	var resend bool
	if status == meetingbot.Orphaned {
		look, cancel := s.workContext(ctx, s.opts.SendTimeout)
		receipt, found, err := s.notify.Delivered(look, r)
		cancel()
		switch {
		case found:
			e.Outcome, e.Channel, e.MessageTS = meetingbot.Sent, receipt.Channel, receipt.TS
			e.Code, e.Reason = meetingbot.ReasonInterruptedConfirmed, "confirmed in Slack after an interrupted send"
			e.Late = prev.Late
			return c, false, s.record(ctx, log, e)
		case err != nil && !errors.Is(err, meetingbot.ErrUnknown):
			// Could not ask: the claim keeps its "look first" state.
			log.Warn("check for an interrupted send", "err", err)
			s.release(ctx, log, e, "an interrupted send is not confirmed yet: "+err.Error())
			return c, false, false
		}
		resend = true
	}
	if started(r, s.clock.Now().UTC()) { // a fresh reading: the lookup may have taken a while
		e.Outcome, e.Code, e.Reason = meetingbot.Skipped, meetingbot.ReasonStarted, "started"
		if resend {
			e.Reason = "started; an interrupted send was not confirmed"
		}
		return c, false, s.record(ctx, log, e)
	}
	return claim{r: r, e: e, lease: lease, resend: resend, log: log}, true, false
}

// post sends the claimed reminders, one with Notify or several as one
// digest with NotifyDigest, and records each outcome. It reports whether
// every outcome is final.
func (s *Scheduler) post(ctx context.Context, cs []claim) bool {
	// A send that keeps to a pace of its own waits for its turn before
	// taking a slot: the wait holds none.
	if p, ok := s.notify.(Pacer); ok && ctx.Err() == nil {
		if err := p.Pace(ctx, cs[0].r); errors.Is(err, meetingbot.ErrPastGrace) {
			all := true
			for _, c := range cs {
				c.e.Outcome, c.e.Code, c.e.Reason = meetingbot.Skipped, meetingbot.ReasonRateLimited, err.Error()
				c.log.Warn("skipped: its turn at the rate limit comes too late", "err", err)
				all = s.record(ctx, c.log, c.e) && all
			}
			return all
		}
	}
	// One of at most MaxSends deliveries in flight; a stop while waiting
	// is recorded below.
	select {
	case s.sends <- struct{}{}:
		defer func() { <-s.sends }()
	case <-ctx.Done():
	}
	now := s.clock.Now().UTC()
	if ctx.Err() != nil {
		// Shutting down: no send starts after the signal.
		for _, c := range cs {
			c.e.Outcome, c.e.Code, c.e.Reason, c.e.Retryable = meetingbot.Failed, meetingbot.ReasonStopped, "stopped before sending", true
			s.record(ctx, c.log, c.e)
		}
		return false
	}
	if h, ok := s.ledger.(Holder); ok {
		return s.postHeld(ctx, h, cs)
	}
	// The lease must cover the whole send and a margin, or another
	// process could take a key over while Slack has the message: one that
	// judges the lease a moment late, or on a clock a little ahead.
	all := true
	margin := s.leaseMargin()
	lease := now.Add(s.opts.Lease)
	kept := cs[:0:0]
	for _, c := range cs {
		if c.lease.Sub(now) < s.opts.SendTimeout+margin {
			c.lease = now.Add(s.opts.Lease)
			if err := s.ledger.Renew(ctx, c.e, c.lease); err != nil {
				c.log.Warn("renew claim before sending", "err", err)
				all = false
				continue
			}
		}
		lease = earlier(lease, c.lease)
		kept = append(kept, c)
	}
	if len(kept) == 0 {
		return false
	}
	send, cancel := s.workContext(ctx, min(s.opts.SendTimeout, lease.Sub(now)-margin))
	defer cancel()
	return s.send(ctx, send, kept) && all
}

// postHeld sends the claims cs over a Holder's ledger: the heartbeat keeps
// them this process's for as long as the send takes, up to SendTimeout,
// and Hold cuts the send should the heartbeat lapse first.
func (s *Scheduler) postHeld(ctx context.Context, h Holder, cs []claim) bool {
	work, cancel := s.workContext(ctx, s.opts.SendTimeout)
	defer cancel()
	held, release := h.Hold(work)
	defer release()
	return s.send(ctx, held, cs)
}

// send delivers the claims cs with the context send, one with Notify or
// several as one digest, and records each outcome; it reports whether
// every outcome is final.
func (s *Scheduler) send(ctx, send context.Context, kept []claim) bool {
	// Slack's pace of a channel, and the workspace's posting budget, serve
	// the reminder whose deadline comes soonest first (see notify's pacer
	// and budget): its meeting's start, after which it is not sent.
	first := deadline(kept[0].r)
	for _, c := range kept[1:] {
		first = earlier(first, deadline(c.r))
	}
	send = meetingbot.WithUrgency(send, first)
	var receipt meetingbot.Receipt
	var err error
	if len(kept) == 1 {
		receipt, err = s.notify.Notify(send, kept[0].r)
	} else {
		rs := make([]meetingbot.Reminder, len(kept))
		for i, c := range kept {
			rs[i] = c.r
		}
		receipt, err = s.notify.NotifyDigest(send, rs)
	}
	cut := send.Err() != nil
	all := true
	for _, c := range kept {
		all = s.finish(ctx, c, len(kept), receipt, err, cut) && all
	}
	return all
}

// finish records what became of claim c, sent alone (n == 1) or in a
// digest of n, and reports whether its outcome is final.
func (s *Scheduler) finish(ctx context.Context, c claim, n int, receipt meetingbot.Receipt, err error, cut bool) bool {
	e, log := c.e, c.log
	switch {
	case err == nil:
		e.Outcome, e.Channel, e.MessageTS = meetingbot.Sent, receipt.Channel, receipt.TS
		switch {
		case c.resend:
			e.Code, e.Reason = meetingbot.ReasonResent, "resent after an interrupted send"
		case n > 1:
			e.Code, e.Reason = meetingbot.ReasonDigest, fmt.Sprintf("sent in one message with %d reminders due at the same instant", n)
		}
	case cut || errors.Is(err, meetingbot.ErrUnconfirmed):
		// Cut off mid-send (shutdown, the send timeout) or an answer lost:
		// Slack may have the message. The claim is released in its "look
		// first" state, and the next sweep, here or in another process,
		// looks for the message before sending again.
		log.Warn("send unconfirmed; it is looked up in Slack before any retry", "err", err)
		s.release(ctx, log, e, "send unconfirmed: "+err.Error())
		return false
	case meetingbot.IsPermanent(err):
		e.Outcome, e.Code, e.Reason = meetingbot.Failed, meetingbot.ReasonPermanent, err.Error()
		log.Error("reminder failed permanently", "err", err)
	default:
		e.Outcome, e.Code, e.Reason, e.Retryable = meetingbot.Failed, meetingbot.ReasonTransient, err.Error(), true
		log.Warn("reminder failed; retrying next sweep", "err", err)
	}
	return s.record(ctx, log, e) && !e.Retryable
}

// resweep sweeps sub again just after at, the instant a claim another
// process holds may be free (its owner's heartbeat or the claim's lease
// ending), when that comes before the subscription's next sweep: a
// replica that died mid-send leaves a reminder that must go out before
// its meeting starts, not a tick later. One re-sweep per subscription is
// armed at a time, the earliest; it reports whether this call armed it.
// A claim whose free instant has passed is left to the next sweep (its
// owner lives on: asked at once, it would be Busy again, in a loop),
// unless rescue is set (see rescueStalled): its owner missed its
// heartbeat, and it is swept at once, whether or not this process sweeps
// its subscription.
func (s *Scheduler) resweep(ctx context.Context, sub meetingbot.Subscription, at time.Time, rescue bool) bool {
	now := s.clock.Now()
	d := at.Sub(now) + resweepSlack
	if rescue {
		// Free already, or since the round that saw it: sweep at once.
		d = max(d, 0)
	}
	if d <= 0 && !rescue || d > s.opts.Interval {
		return false
	}
	s.mu.Lock()
	if due, ok := s.resweeps[sub.ID]; ok && !due.After(now.Add(d)) {
		s.mu.Unlock()
		return false
	}
	s.resweeps[sub.ID] = now.Add(d)
	s.mu.Unlock()
	s.after(d, func() {
		s.mu.Lock()
		delete(s.resweeps, sub.ID)
		mine := rescue || !s.shared || slices.ContainsFunc(s.mine, func(m meetingbot.Subscription) bool { return m.ID == sub.ID })
		s.mu.Unlock()
		if mine && ctx.Err() == nil {
			s.sweepOne(ctx, sub)
		}
	})
	return true
}

// resweepSlack is how long after a claim may be free it is asked for
// again: the other process's clock and the database's may differ a
// little.
const resweepSlack = 100 * time.Millisecond

// leaseMargin is how long before its claim's lease ends a send must have
// ended: a quarter of the lease. SendTimeout is at most half of it, so a
// claim renewed just before its send keeps at least this margin, and one
// whose lease has less left is renewed first.
func (s *Scheduler) leaseMargin() time.Duration { return s.opts.Lease / 4 }

func earlier(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// begin marks a key as worked on by this process and reports whether it
// was free; end frees it. They keep two paths of one process (a tick and
// a leftover claim of its own) off one key.
func (s *Scheduler) begin(sub, key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.inflight[sub+"|"+key] {
		return false
	}
	s.inflight[sub+"|"+key] = true
	return true
}

func (s *Scheduler) end(sub, key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.inflight, sub+"|"+key)
}

// workContext returns the context for a call a claim guards: it outlives
// ctx by up to ShutdownGrace, so a call in flight at shutdown can finish,
// and it ends after timeout in any case.
func (s *Scheduler) workContext(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	work, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	stop := context.AfterFunc(ctx, func() { time.AfterFunc(s.opts.ShutdownGrace, cancel) })
	return work, func() { stop(); cancel() }
}

// ledgerWriteTimeout bounds the ledger write that records a claim's end;
// it is not cut short by shutdown, for an unrecorded send is the one way
// to a duplicate.
const ledgerWriteTimeout = 10 * time.Second

// record settles e in the ledger and tells the observer.
func (s *Scheduler) record(ctx context.Context, log *slog.Logger, e meetingbot.Entry) bool {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ledgerWriteTimeout)
	defer cancel()
	recordedAt := s.clock.Now().UTC()
	if err := s.ledger.Record(ctx, e, recordedAt); err != nil {
		log.Error("record reminder", "outcome", e.Outcome, "err", err)
		return false
	}
	e.RecordedAt = recordedAt
	if e.Final() {
		s.noteSettled(e)
	}
	if s.opts.Observer != nil {
		s.opts.Observer.Recorded(e)
	}
	return true
}

// noteSettled remembers that e has its final outcome in the ledger, which
// never changes: the sweeps that list the reminder as due until its
// meeting starts need not ask the ledger about it again.
func (s *Scheduler) noteSettled(e meetingbot.Entry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.settledLocked(e.Subscription)[e.Key] = e.Start
}

// settledLocked returns sub's settled keys (see noteSettled), made if
// none; s.mu is held.
func (s *Scheduler) settledLocked(sub string) map[string]time.Time {
	known := s.settled[sub]
	if known == nil {
		known = map[string]time.Time{}
		s.settled[sub] = known
	}
	return known
}

// release gives e's claim up in its "look in Slack first" state.
func (s *Scheduler) release(ctx context.Context, log *slog.Logger, e meetingbot.Entry, reason string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ledgerWriteTimeout)
	defer cancel()
	if err := s.ledger.Release(ctx, e, reason); err != nil {
		log.Error("release unconfirmed claim", "err", err)
	}
}

// resolveOrphan settles a claim interrupted by a crash whose meeting is no
// longer due (moved, cancelled or out of the window): it was delivered or it
// was not, and either way nothing more is sent.
func (s *Scheduler) resolveOrphan(ctx context.Context, sub meetingbot.Subscription, e meetingbot.Entry) {
	if !s.begin(sub.ID, e.Key) {
		return
	}
	defer s.end(sub.ID, e.Key)
	log := s.log.With("subscription", sub.ID, "key", e.Key)
	claimed := s.clock.Now().UTC()
	status, prev, err := s.ledger.Claim(ctx, e, claimed, claimed.Add(s.opts.Lease))
	if err != nil || status != meetingbot.Orphaned {
		if err != nil && ctx.Err() == nil {
			log.Error("claim interrupted reminder", "err", err)
		}
		return
	}
	look, cancel := s.workContext(ctx, s.opts.SendTimeout)
	defer cancel()
	r := meetingbot.Reminder{Key: e.Key, Subscription: sub, Meeting: meetingbot.Meeting{ID: e.EventID, Start: e.Start}, Offset: e.Offset, TriggerAt: e.TriggerAt}
	receipt, ok, err := s.notify.Delivered(look, r)
	e = prev
	switch {
	case ok:
		e.Outcome, e.Channel, e.MessageTS = meetingbot.Sent, receipt.Channel, receipt.TS
		e.Code, e.Reason = meetingbot.ReasonInterruptedConfirmed, "confirmed in Slack after an interrupted send"
	case err != nil && !errors.Is(err, meetingbot.ErrUnknown):
		log.Warn("check for an interrupted send", "err", err)
		s.release(ctx, log, e, "an interrupted send is not confirmed yet: "+err.Error())
		return
	default:
		e.Outcome, e.Code, e.Reason = meetingbot.Skipped, meetingbot.ReasonNoLongerDue, "meeting no longer due; an interrupted send was not confirmed"
	}
	s.record(ctx, log, e)
}

// dropRemoved settles the interrupted claims of subscriptions that are not
// among all (removed from the configuration or from Slack since): nobody
// can look them up any more, and nothing more will be sent for them. And
// it hands over this process's own claims of subscriptions it no longer
// sweeps (another replica's share now): released, they are the new
// holder's to look up, where held they would keep it off the key for as
// long as this process lives.
func (s *Scheduler) dropRemoved(ctx context.Context, all, mine []meetingbot.Subscription, now time.Time) error {
	orphans, err := s.ledger.Orphans(ctx, "", now)
	if err != nil {
		return err
	}
	known := make(map[string]bool, len(all))
	for _, sub := range all {
		known[sub.ID] = true
	}
	held := make(map[string]bool, len(mine))
	for _, sub := range mine {
		held[sub.ID] = true
	}
	for _, e := range orphans {
		switch {
		case e.Kind != meetingbot.KindReminder && e.Kind != meetingbot.KindStatus:
			// Another engine's (an agenda, a snooze timer, an
			// invitation notice, a channel's change notice or agenda),
			// which looks it up itself.
		case !known[e.Subscription]:
			s.dropClaim(ctx, e)
		case !held[e.Subscription] && s.ownClaim(e):
			s.handOver(ctx, e)
		}
	}
	return nil
}

// rescueStalled arms, for each claim of another replica that may be free
// before this process's next round (that replica missed its heartbeat:
// killed mid-send, or cut off from the database), a sweep of its
// subscription at the instant it may be free, or at once when it is: the
// claim is then Orphaned, looked up in Slack, and sent if Slack has no
// such message, while the subscription's lease, still the dead
// replica's, would reach a live replica only at that one's next round.
// Only a subscription of all is swept; a sweep of one another replica
// holds too is safe, for a key is claimed by one process at a time.
func (s *Scheduler) rescueStalled(ctx context.Context, all []meetingbot.Subscription, now time.Time) error {
	st, ok := s.ledger.(Stalls)
	if !ok || !s.shared {
		return nil
	}
	stalled, err := st.Stalled(ctx, s.opts.Interval, now)
	if err != nil || len(stalled) == 0 {
		return err
	}
	byID := make(map[string]meetingbot.Subscription, len(all))
	for _, sub := range all {
		byID[sub.ID] = sub
	}
	for _, e := range stalled {
		if sub, ok := byID[e.Subscription]; ok && s.resweep(ctx, sub, e.LeaseUntil, true) {
			s.log.Info("another replica missed its heartbeat with a send in flight; asking for it when it may be free",
				"subscription", sub.ID, "key", e.Key, "owner", e.Owner, "free_from", e.LeaseUntil)
		}
	}
	return nil
}

// dropClaim settles an interrupted claim of a subscription removed.
func (s *Scheduler) dropClaim(ctx context.Context, e meetingbot.Entry) {
	log := s.log.With("subscription", e.Subscription, "key", e.Key)
	claimed := s.clock.Now().UTC()
	status, _, err := s.ledger.Claim(ctx, e, claimed, claimed.Add(s.opts.Lease))
	if err != nil || status != meetingbot.Orphaned {
		return
	}
	e.Outcome, e.Code, e.Reason = meetingbot.Skipped, meetingbot.ReasonSubscriptionRemoved, "subscription removed; an interrupted send was not confirmed"
	s.record(ctx, log, e)
}

// ownClaim reports whether e is a claim of this process's ledger, when the
// ledger names its owner.
func (s *Scheduler) ownClaim(e meetingbot.Entry) bool {
	o, ok := s.ledger.(interface{ Owner() string })
	return ok && e.Owner != "" && e.Owner == o.Owner()
}

// handOver releases a claim of this process on a subscription another
// replica sweeps now, unless this process is still working on it.
func (s *Scheduler) handOver(ctx context.Context, e meetingbot.Entry) {
	if !s.begin(e.Subscription, e.Key) {
		return
	}
	defer s.end(e.Subscription, e.Key)
	log := s.log.With("subscription", e.Subscription, "key", e.Key)
	log.Info("handing an interrupted send over to the replica that sweeps its subscription now")
	s.release(ctx, log, e, "handed over with its subscription; not confirmed yet")
}

// deadline is the last instant r may go out: its meeting's start, or
// StartGrace after it for a "starting now" reminder.
func deadline(r meetingbot.Reminder) time.Time {
	if r.Offset == 0 {
		return r.Meeting.Start.Add(meetingbot.StartGrace)
	}
	return r.Meeting.Start
}
