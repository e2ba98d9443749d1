package feed

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/meetingbot/meetingbot"
)

// recordTimeout bounds the ledger write that ends a claim; it is not cut
// short by shutdown, for an unrecorded send is the one way to a duplicate.
const recordTimeout = 10 * time.Second

// deliver claims the notices of ns, all of one channel, and posts those
// claimed as one message (a digest when more than one), then records
// what became of them. It returns the notices whose outcome is final
// (sent, found sent, failed for good, or settled before): the channel
// knows them, or never will. An interrupted send is looked up in Slack
// before any resend.
func (e *Engine) deliver(parent context.Context, ns []meetingbot.Notice, now time.Time) []meetingbot.Notice {
	// The send outlives a stop, so that what Slack took is recorded.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(parent), e.opts.SendTimeout)
	defer cancel()
	log := e.log.With("subscription", ns[0].Subscription.ID)
	told, claimed, entries, resend := e.claim(ctx, log, ns, now)
	if len(claimed) == 0 {
		return told
	}
	// Until its outcome is known the channel may have been told what a
	// notice says: the next pass asks before it compares (settlePending).
	pending := make([]meetingbot.FeedPending, len(claimed))
	for i, n := range claimed {
		pending[i] = meetingbot.FeedPending{Event: n.Meeting().ID, Key: n.Key, Now: n.Now}
	}
	if err := e.seen.PutFeedPending(ctx, meetingbot.FeedSubscription(claimed[0].Subscription.ID), pending); err != nil {
		log.Warn("change notices not marked as being posted; retrying at the next pass", "err", err)
		for _, en := range entries {
			en.Outcome, en.Retryable, en.Code, en.Reason = meetingbot.Failed, true, meetingbot.ReasonTransient, err.Error()
			e.record(ctx, log, en)
		}
		return told
	}
	var rc meetingbot.Receipt
	var err error
	if len(claimed) == 1 {
		rc, err = e.notifier.NotifyChange(ctx, claimed[0])
	} else {
		rc, err = e.notifier.NotifyChanges(ctx, claimed)
	}
	if e.settle(ctx, log, entries, rc, err, resend) {
		told = append(told, claimed...)
	}
	return told
}

// claim claims the notices of ns in the order of their keys, and stops
// at the first that another process is sending: that process found the
// same changes together and posts them in one message, which a claim of
// the rest here would split in two (two processes on one database, each
// taking every other notice of a flood). Processes claim in one order, so
// the first key two of them contend for goes to one, and the other leaves
// the rest to it; the next pass finds them done. It returns the notices
// whose outcome is final (told), and those claimed, in the order of ns,
// with their entries and whether one is an interrupted send found not to
// have reached Slack (resend).
func (e *Engine) claim(ctx context.Context, log *slog.Logger, ns []meetingbot.Notice, now time.Time) (told, claimed []meetingbot.Notice, entries []meetingbot.Entry, resend bool) {
	order := make([]int, len(ns))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(ns[a].Key, ns[b].Key) })
	type held struct {
		i  int
		n  meetingbot.Notice
		en meetingbot.Entry
	}
	var mine []held
claiming:
	for _, i := range order {
		n := ns[i]
		en := n.Entry()
		status, prev, err := e.ledger.Claim(ctx, en, now, now.Add(e.opts.Lease))
		switch {
		case err != nil:
			log.Warn("change notice not claimed; retrying at the next pass", "key", n.Key, "err", err)
			continue
		case status == meetingbot.Busy:
			break claiming // another process is sending it, with the rest
		case status == meetingbot.Done:
			told = append(told, n)
			continue
		case status == meetingbot.Orphaned:
			n.At = prev.TriggerAt
			en.TriggerAt, en.Attempts = prev.TriggerAt, prev.Attempts
			switch e.lookUp(ctx, log, n, &en) {
			case lookedFound:
				told = append(told, n)
				continue
			case lookedLater:
				continue
			}
			resend = true
		}
		mine = append(mine, held{i, n, en})
	}
	slices.SortFunc(mine, func(a, b held) int { return a.i - b.i })
	for _, h := range mine {
		claimed, entries = append(claimed, h.n), append(entries, h.en)
	}
	return told, claimed, entries, resend
}

// settle records what became of the send of entries, and reports whether
// it is final: sent (in one message, rc) or failed for good, rather than
// unconfirmed (released, to be looked up before any retry) or failed for
// now.
func (e *Engine) settle(ctx context.Context, log *slog.Logger, entries []meetingbot.Entry, rc meetingbot.Receipt, err error, resend bool) bool {
	switch {
	case err == nil:
		log.Info("change notice sent", "notices", len(entries), "channel", rc.Channel, "ts", rc.TS)
		for _, en := range entries {
			en.Outcome, en.Channel, en.MessageTS = meetingbot.Sent, rc.Channel, rc.TS
			switch {
			case len(entries) > 1:
				en.Code, en.Reason = meetingbot.ReasonDigest, fmt.Sprintf("sent in one message with the %d changes found together", len(entries))
			case resend && en.Code == "":
				en.Code, en.Reason = meetingbot.ReasonResent, "resent after an interrupted send"
			}
			e.record(ctx, log, en)
		}
		return true
	case errors.Is(err, meetingbot.ErrUnconfirmed) || ctx.Err() != nil:
		log.Warn("change notice send unconfirmed; it is looked up in Slack before any retry", "err", err)
		for _, en := range entries {
			e.release(ctx, log, en, "send unconfirmed: "+err.Error())
		}
	case meetingbot.IsPermanent(err):
		log.Error("change notice failed permanently", "err", err)
		for _, en := range entries {
			en.Outcome, en.Code, en.Reason = meetingbot.Failed, meetingbot.ReasonPermanent, err.Error()
			e.record(ctx, log, en)
		}
		return true
	default:
		log.Warn("change notice failed; retrying at the next pass", "err", err)
		for _, en := range entries {
			en.Outcome, en.Retryable, en.Code, en.Reason = meetingbot.Failed, true, meetingbot.ReasonTransient, err.Error()
			e.record(ctx, log, en)
		}
	}
	return false
}

// looked is what a look in Slack for an interrupted send found.
type looked int

const (
	lookedSend  looked = iota // not there, or Slack can never tell: send
	lookedFound               // there: recorded sent
	lookedLater               // Slack cannot tell now: released, for a later pass
)

// lookUp finds out whether an interrupted send of n reached Slack.
func (e *Engine) lookUp(ctx context.Context, log *slog.Logger, n meetingbot.Notice, en *meetingbot.Entry) looked {
	rc, found, err := e.notifier.Delivered(ctx, n.Reminder())
	switch {
	case err == nil && found:
		en.Outcome, en.Channel, en.MessageTS = meetingbot.Sent, rc.Channel, rc.TS
		en.Code, en.Reason = meetingbot.ReasonInterruptedConfirmed, "confirmed in Slack after an interrupted send"
		e.record(ctx, log, *en)
		return lookedFound
	case err != nil && !errors.Is(err, meetingbot.ErrUnknown):
		log.Warn("interrupted change notice not confirmed yet", "key", n.Key, "err", err)
		e.release(ctx, log, *en, "an interrupted send is not confirmed yet: "+err.Error())
		return lookedLater
	case err != nil:
		en.Code, en.Reason = meetingbot.ReasonResent, "resent: Slack cannot tell whether an interrupted send went out"
	}
	return lookedSend
}

// record ends en's claim with its outcome.
func (e *Engine) record(ctx context.Context, log *slog.Logger, en meetingbot.Entry) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	if err := e.ledger.Record(ctx, en, e.clock.Now().UTC()); err != nil {
		log.Error("change notice outcome not recorded", "key", en.Key, "outcome", en.Outcome, "err", err)
	}
}

// release gives en's claim up in its "look in Slack first" state.
func (e *Engine) release(ctx context.Context, log *slog.Logger, en meetingbot.Entry, reason string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	if err := e.ledger.Release(ctx, en, reason); err != nil {
		log.Error("change notice claim not released", "key", en.Key, "err", err)
	}
}
