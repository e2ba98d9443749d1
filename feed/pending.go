package feed

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/meetingbot/meetingbot"
)

// errWait is settlePending's word that another process is posting a
// notice of the channel: the pass leaves the channel to it.
var errWait = errors.New("feed: another process is posting a notice of this channel")

// settlePending settles the notices of f's channel whose outcome was not
// known when they were posted (a lost answer, a process killed after Slack
// stored them) before the pass compares: what the channel was told is what
// it knows. ms is the calendar as read now, seen what the channel was last
// known to know, which it updates. A notice whose change still stands is
// left to the pass, which finds the same key and looks it up as it
// claims it; one whose change no longer stands is looked up in Slack now:
// found, the channel knows its state; not found, it was never told, and
// is recorded so.
func (e *Engine) settlePending(ctx context.Context, f Followed, pseudo string, seen map[string]meetingbot.Meeting, ms []meetingbot.Meeting, now time.Time) error {
	pending, err := e.seen.FeedPending(ctx, pseudo)
	if err != nil || len(pending) == 0 {
		return err
	}
	current := make(map[string]meetingbot.Meeting, len(ms))
	for _, m := range ms {
		current[m.ID] = m
	}
	keys := make([]string, 0, len(pending))
	for _, p := range pending {
		keys = append(keys, p.Key)
	}
	entries, err := e.ledger.Entries(ctx, pseudo, keys)
	if err != nil {
		return err
	}
	var put []meetingbot.Meeting
	var drop, settled []string
	adopt := func(p meetingbot.FeedPending) {
		if p.Now.ID == "" {
			drop = append(drop, p.Event)
			delete(seen, p.Event)
		} else {
			put = append(put, p.Now)
			seen[p.Event] = p.Now
		}
	}
	var firstErr error
	for _, p := range pending {
		en, known := entries[p.Key]
		stands := false
		if !known || en.Outcome == meetingbot.Sending {
			if stands, err = e.stands(ctx, f, p, seen, current, now); err != nil {
				firstErr = err
				continue
			}
		}
		switch {
		case known && en.Outcome == meetingbot.Sent:
			adopt(p)
		case known && en.Outcome != meetingbot.Sending:
			// Failed or skipped: the channel was not told.
		case stands:
			continue // still the change to tell: the pass claims its key
		default:
			told, err := e.resolve(ctx, f, p, en, now)
			switch {
			case errors.Is(err, errWait):
				return err
			case err != nil:
				firstErr = err
				continue
			case told:
				adopt(p)
			}
		}
		settled = append(settled, p.Event)
	}
	if err := e.seen.PutFeedSeen(ctx, pseudo, time.Time{}, put, drop); err != nil {
		return err
	}
	slices.Sort(settled)
	if err := e.seen.DropFeedPending(ctx, pseudo, settled); err != nil {
		return err
	}
	return firstErr
}

// stands reports whether the change p tells still stands, so that the
// pass finds it again: the event is as p says in current (the calendar
// read from now to Ahead), or, for a notice of an event the channel still
// expects (seen) that moved out of that window (further out, or to a time
// past), as the calendar says when asked.
func (e *Engine) stands(ctx context.Context, f Followed, p meetingbot.FeedPending, seen, current map[string]meetingbot.Meeting, now time.Time) (bool, error) {
	m, read := current[p.Event]
	outside := !p.Now.Start.After(now) || p.Now.Start.After(now.Add(e.opts.Ahead))
	if !read && p.Now.ID != "" && outside && seen[p.Event].Start.After(now) {
		var err error
		m, err = e.source.Meeting(ctx, f.Subscription, p.Event)
		switch {
		case errors.Is(err, meetingbot.ErrGone):
			return false, nil
		case err != nil:
			return false, err
		}
	}
	return meetingbot.FeedState(m) == meetingbot.FeedState(p.Now), nil
}

// resolve looks up in Slack the interrupted notice p, whose change no
// longer stands, and records what it finds: told (sent) or not (skipped,
// no longer due).
func (e *Engine) resolve(ctx context.Context, f Followed, p meetingbot.FeedPending, prev meetingbot.Entry, now time.Time) (bool, error) {
	n := meetingbot.Notice{Key: p.Key, Subscription: f.Subscription, Now: p.Now, Was: meetingbot.Meeting{ID: p.Event, Start: prev.Start}, At: prev.TriggerAt}
	en := n.Entry()
	en.TriggerAt, en.Start = prev.TriggerAt, prev.Start
	status, cur, err := e.ledger.Claim(ctx, en, now, now.Add(e.opts.Lease))
	switch {
	case err != nil:
		return false, err
	case status == meetingbot.Busy:
		return false, errWait
	case status == meetingbot.Done:
		return cur.Outcome == meetingbot.Sent, nil
	}
	en.Attempts = cur.Attempts
	log := e.log.With("subscription", f.Subscription.ID, "key", p.Key)
	rc, found, err := e.notifier.Delivered(ctx, n.Reminder())
	switch {
	case err == nil && found:
		en.Outcome, en.Channel, en.MessageTS = meetingbot.Sent, rc.Channel, rc.TS
		en.Code, en.Reason = meetingbot.ReasonInterruptedConfirmed, "confirmed in Slack after an interrupted send"
	case err != nil && !errors.Is(err, meetingbot.ErrUnknown):
		e.release(ctx, log, en, "an interrupted send is not confirmed yet: "+err.Error())
		return false, err
	default:
		en.Outcome, en.Code, en.Reason = meetingbot.Skipped, meetingbot.ReasonNoLongerDue, "an interrupted notice whose change no longer stands; it was not found in Slack"
	}
	e.record(ctx, log, en)
	return en.Outcome == meetingbot.Sent, nil
}
