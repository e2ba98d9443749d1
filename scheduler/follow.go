package scheduler

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/meetingbot/meetingbot"
)

// A reminder follows its meeting (docs/design.md): when the meeting of a
// reminder already sent moves before it starts, is cancelled, or moves
// back, the message is edited to say so. The moved meeting's own reminder
// is a new key, sent by the sweep as any other.
//
// Seeing it costs no Calendar call while nothing changes: each sweep lists
// its window anyway, and every sent reminder whose meeting has not started
// falls inside it (it started at most its offset after the reminder, and
// the window reaches the largest offset ahead). A reminder whose instance
// is listed at another start moved there. One whose instance is no longer
// listed was cancelled, declined, or moved out of the window: one
// events.get on the instance tells which, once, for the answer is recorded
// with the edit. When it says the instance is gone, one listing of the week
// ahead looks for the occurrence under another id before the message says
// "cancelled": a series split by "this and following events" and moved
// gives its occurrences new ids. When the calendar's owner declined the
// meeting, the message says "You declined" instead (they answered No, from
// Slack or anywhere else), and keeps the answer buttons. A message that
// says "cancelled" or "You declined" is not asked about again:
// a meeting brought back at its time is listed. A message that says
// "moved" to a start beyond the window is asked about again now and then
// (recheckEvery), so that a second move or a cancel shows long before that
// start comes into the window.

// follow compares sub's sent reminders whose meeting is still ahead with
// the calendar as this sweep read it, listed being every meeting that
// starts in (from, to], muted ones included, and edits each message that no
// longer says what the calendar says. Failures are logged and retried on
// the next sweep; they never hold the sweep's cursor.
func (s *Scheduler) follow(ctx context.Context, sub meetingbot.Subscription, listed []meetingbot.Meeting, from, to, now time.Time) {
	ed, ok := s.notify.(Editor)
	if !ok || ctx.Err() != nil {
		return
	}
	sent, err := s.ledger.Followed(ctx, sub.ID, now)
	if err != nil {
		if ctx.Err() == nil {
			s.ledgerFailed(err)
			s.log.Error("read the sent reminders to follow", "subscription", sub.ID, "err", err)
		}
		return
	}
	// When each meeting moved beyond the window was last read, kept for
	// the reminders still followed.
	s.mu.Lock()
	p := followPass{s: s, sub: sub, from: from, to: to, now: now, lastAsked: s.asked[sub.ID],
		nextAsked: map[string]time.Time{}, asked: map[string]answer{}}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.asked == nil {
			s.asked = map[string]map[string]time.Time{}
		}
		s.asked[sub.ID] = p.nextAsked
		if len(p.nextAsked) == 0 {
			delete(s.asked, sub.ID)
		}
	}()
	if len(sent) == 0 {
		return
	}
	byID := make(map[string]meetingbot.Meeting, len(listed))
	for _, m := range listed {
		byID[m.KeyID()] = m
	}
	sentAt := make(map[string]time.Time, len(sent))
	for _, e := range sent {
		sentAt[e.Key] = e.RecordedAt
	}
	for _, e := range sent {
		if ctx.Err() != nil {
			return
		}
		id, ok := keyID(e)
		if !ok || e.MessageTS == "" || e.Edit.Code == meetingbot.ReasonPermanent {
			continue
		}
		m, seen := byID[id]
		if !seen {
			var known bool
			if m, seen, known = p.unlisted(ctx, e, id); !known {
				continue
			}
		}
		f := p.followOf(e, id, m, seen, sentAt)
		if says(e.Edit, f) {
			continue
		}
		s.edit(ctx, ed, e, f)
	}
}

// followPass is one sweep's following of a subscription's sent
// reminders: its window, and the meetings asked about.
type followPass struct {
	s         *Scheduler
	sub       meetingbot.Subscription
	from, to  time.Time
	now       time.Time
	lastAsked map[string]time.Time // by key: when its meeting was last asked about, beyond the window
	nextAsked map[string]time.Time // the same, for the next sweep
	asked     map[string]answer    // by event ID: one events.get per instance and sweep
}

// unlisted tells what became of the meeting of e, which the sweep's
// listing lacks: the meeting as the calendar gives it now (seen false
// when gone), or known false when there is nothing to do: a message that
// says "cancelled", one whose meeting is beyond the window and was asked
// about recently, or a calendar that cannot tell now.
func (p *followPass) unlisted(ctx context.Context, e meetingbot.Entry, id string) (m meetingbot.Meeting, seen, known bool) {
	named := e.Start
	if e.Edit.Kind == meetingbot.EditMoved {
		named = e.Edit.MovedTo
	}
	inWindow := named.After(p.from) && !named.After(p.to)
	last, askedBefore := p.lastAsked[e.Key]
	if askedBefore {
		p.nextAsked[e.Key] = last
	}
	switch {
	case e.Edit.Kind.Gone():
		return m, false, false // brought back at its time, it would be listed
	case !inWindow && e.Edit.Kind != meetingbot.EditMoved:
		return m, false, false // the listing cannot say more than the message says
	case !inWindow && askedBefore && p.now.Sub(last) < recheckEvery(named, p.now):
		return m, false, false
	}
	a, done := p.asked[e.EventID]
	if !done {
		a = p.s.ask(ctx, p.sub, e.EventID, id, p.now)
		p.asked[e.EventID] = a
	}
	if a.err != nil {
		return m, false, false // the calendar cannot tell now; the next sweep asks again
	}
	p.nextAsked[e.Key] = p.now
	return a.m, !a.gone, true
}

// followOf is what the message of e should say of its meeting m (seen
// false: gone): declined, cancelled, back at its time, or moved, and then
// whether the moved meeting gets a reminder of its own (sentAt: when each
// key was sent).
func (p *followPass) followOf(e meetingbot.Entry, id string, m meetingbot.Meeting, seen bool, sentAt map[string]time.Time) meetingbot.Follow {
	f := meetingbot.Follow{Reminder: reminderOf(p.sub, e, m), Message: meetingbot.Receipt{Channel: e.Channel, TS: e.MessageTS}, SentAt: e.RecordedAt}
	switch {
	case !seen && p.asked[e.EventID].declined:
		f.Kind = meetingbot.EditDeclined // "You declined", not "Cancelled"
	case !seen:
		f.Kind = meetingbot.EditCancelled
	case m.Start.Equal(e.Start):
		f.Kind = meetingbot.EditRestored
	default:
		f.Kind, f.MovedTo = meetingbot.EditMoved, m.Start.UTC()
		before, reminded := sentAt[meetingbot.Key(id, e.Offset, m.Start)]
		f.Follows = m.Start.After(p.now) && !p.sub.Mutes(m) && !(reminded && before.Before(e.RecordedAt))
	}
	return f
}

// Bounds of recheckEvery.
const (
	minRecheck = 5 * time.Minute
	maxRecheck = time.Hour
)

// recheckEvery is how long a message that says its meeting moved to named,
// beyond the sweep's window, waits between two reads of the meeting: a
// tenth of the time left until named, within [minRecheck, maxRecheck], so
// that the message is fresher the nearer the meeting. A meeting moved an
// hour later costs about ten events.get until its new start comes into
// the window; one moved a week later, about one an hour.
func recheckEvery(named, now time.Time) time.Duration {
	return min(max(named.Sub(now)/10, minRecheck), maxRecheck)
}

// answer is what events.get said of an instance no longer listed.
type answer struct {
	m    meetingbot.Meeting
	gone bool // cancelled, deleted, declined, or no longer a meeting
	// declined says gone is the calendar's owner declining it
	// (meetingbot.ErrDeclined): its messages say "You declined".
	declined bool
	err      error
}

// searchAhead is how far ahead follow looks for an occurrence whose id
// events.get no longer knows.
const searchAhead = 7 * 24 * time.Hour

// ask reads the instance eventID, named id in ledger keys, afresh; when it
// is gone, it looks for an occurrence named id in the week after now. It
// is one of at most MaxReads reads in flight, within ReadTimeout.
func (s *Scheduler) ask(ctx context.Context, sub meetingbot.Subscription, eventID, id string, now time.Time) answer {
	select {
	case s.reads <- struct{}{}:
	case <-ctx.Done():
		return answer{err: ctx.Err()}
	}
	s.reading(+1)
	defer func() {
		<-s.reads
		s.reading(-1)
	}()
	ctx, cancel := context.WithTimeout(ctx, s.opts.ReadTimeout)
	defer cancel()
	m, err := s.source.Meeting(ctx, sub, eventID)
	if errors.Is(err, meetingbot.ErrGone) {
		declined := errors.Is(err, meetingbot.ErrDeclined)
		var ahead []meetingbot.Meeting
		if ahead, err = s.source.Meetings(ctx, sub, now, now.Add(searchAhead)); err == nil {
			for _, m := range ahead {
				if m.KeyID() == id {
					return answer{m: m}
				}
			}
			return answer{gone: true, declined: declined}
		}
	}
	if err != nil {
		s.log.Debug("could not read a reminded meeting no longer listed; asking again next sweep",
			"subscription", sub.ID, "event", eventID, "err", err)
		return answer{err: err}
	}
	return answer{m: m}
}

// keyID returns the instance name a sent entry's key holds (see
// meetingbot.KeyID), which a listed meeting's KeyID matches whatever its
// start now.
func keyID(e meetingbot.Entry) (string, bool) {
	return strings.CutSuffix(e.Key, ":"+meetingbot.FormatOffset(e.Offset)+":"+e.Start.UTC().Format(time.RFC3339))
}

// reminderOf rebuilds the reminder e was sent as, with the latest details
// of its meeting m (none when m is zero) at the start e was sent for.
func reminderOf(sub meetingbot.Subscription, e meetingbot.Entry, m meetingbot.Meeting) meetingbot.Reminder {
	shown := m
	if m.ID == "" {
		shown = meetingbot.Meeting{ID: e.EventID}
	}
	shown.Start = e.Start
	if !m.End.IsZero() {
		shown.End = e.Start.Add(m.End.Sub(m.Start))
	}
	return meetingbot.Reminder{Key: e.Key, Subscription: sub, Meeting: shown, Offset: e.Offset, TriggerAt: e.TriggerAt, Late: e.Late}
}

// says reports whether a message whose edits are cur already says what f
// would make it say.
func says(cur meetingbot.Edit, f meetingbot.Follow) bool {
	switch f.Kind {
	case meetingbot.EditMoved:
		return cur.Kind == meetingbot.EditMoved && cur.MovedTo.Equal(f.MovedTo)
	case meetingbot.EditCancelled, meetingbot.EditDeclined:
		return cur.Kind == f.Kind
	}
	return !cur.Kind.Changed()
}

// edit claims the edit of e's message, makes it unless another process
// made it meanwhile, and records what the message says now, or why the
// edit failed: a permanent failure is logged once and the message left as
// it is; any other is retried by the next sweep.
func (s *Scheduler) edit(ctx context.Context, ed Editor, e meetingbot.Entry, f meetingbot.Follow) {
	log := s.log.With("subscription", e.Subscription, "key", e.Key)
	claimed := s.clock.Now().UTC()
	status, cur, err := s.ledger.ClaimEdit(ctx, e, claimed, claimed.Add(s.opts.Lease))
	if err != nil {
		if ctx.Err() == nil {
			s.ledgerFailed(err)
			log.Error("claim the edit of a reminder", "err", err)
		}
		return
	}
	if status != meetingbot.Claimed {
		return // another process is editing it, or its edits were given up
	}
	next := cur
	if says(cur.Edit, f) {
		s.recordEdit(ctx, log, next) // done meanwhile by another process: give the claim back
		return
	}
	// One of at most MaxSends Slack calls in flight.
	select {
	case s.sends <- struct{}{}:
		defer func() { <-s.sends }()
	case <-ctx.Done():
		s.recordEdit(ctx, log, next)
		return
	}
	work, cancel := s.workContext(ctx, s.opts.SendTimeout)
	err = ed.Edit(work, f)
	cancel()
	switch {
	case err == nil:
		next.Edit.Kind, next.Edit.MovedTo = f.Kind, f.MovedTo
		next.Edit.Count++
		next.Edit.At = s.clock.Now().UTC()
		next.Edit.Code, next.Edit.Reason = "", ""
		if f.Kind == meetingbot.EditMoved {
			log.Info("reminder edited: its meeting changed", "edit", f.Kind, "moved_to", f.MovedTo)
		} else {
			log.Info("reminder edited: its meeting changed", "edit", f.Kind)
		}
	case meetingbot.IsPermanent(err):
		next.Edit.Code, next.Edit.Reason = meetingbot.ReasonPermanent, err.Error()
		log.Error("reminder cannot be edited; it is left as it is", "edit", f.Kind, "err", err)
	default:
		if cur.Edit.Code != meetingbot.ReasonTransient && ctx.Err() == nil {
			log.Warn("reminder edit failed; retrying next sweep", "edit", f.Kind, "err", err)
		} else {
			log.Debug("reminder edit failed again; retrying next sweep", "edit", f.Kind, "err", err)
		}
		next.Edit.Code, next.Edit.Reason = meetingbot.ReasonTransient, err.Error()
	}
	if s.recordEdit(ctx, log, next) && err == nil && s.opts.Observer != nil {
		s.opts.Observer.Edited(next)
	}
}

// recordEdit ends the claim on e's edit with e.Edit; it is not cut short
// by shutdown, so that the edit is not made again.
func (s *Scheduler) recordEdit(ctx context.Context, log *slog.Logger, e meetingbot.Entry) bool {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ledgerWriteTimeout)
	defer cancel()
	if err := s.ledger.RecordEdit(ctx, e); err != nil {
		log.Error("record the edit of a reminder", "edit", e.Edit.Kind, "err", err)
		return false
	}
	return true
}
