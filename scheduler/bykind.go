package scheduler

import (
	"context"
	"fmt"

	"github.com/meetingbot/meetingbot"
)

// ByKind is the Notifier that hands each reminder to the notifier of its
// subscription's Kind (meetingbot.Subscription.Kind): Slack for reminders,
// the status setter for statuses. It is made once, where the engines are
// built; a reminder of a kind it has no notifier for fails permanently.
// A kind's notifier that is not an Editor, a DestinationLookup or a Pacer
// has nothing to edit, look up or wait for.
type ByKind map[meetingbot.Kind]Notifier

var (
	_ Notifier          = ByKind{}
	_ Editor            = ByKind{}
	_ DestinationLookup = ByKind{}
	_ Pacer             = ByKind{}
)

func (b ByKind) of(k meetingbot.Kind) (Notifier, error) {
	if n, ok := b[k]; ok {
		return n, nil
	}
	return nil, meetingbot.Permanent(fmt.Errorf("no notifier for subscriptions of kind %q", k))
}

// Notify delivers r with its kind's notifier.
func (b ByKind) Notify(ctx context.Context, r meetingbot.Reminder) (meetingbot.Receipt, error) {
	n, err := b.of(r.Subscription.Kind)
	if err != nil {
		return meetingbot.Receipt{}, err
	}
	return n.Notify(ctx, r)
}

// NotifyDigest delivers rs, of one subscription, with its kind's notifier.
func (b ByKind) NotifyDigest(ctx context.Context, rs []meetingbot.Reminder) (meetingbot.Receipt, error) {
	n, err := b.of(rs[0].Subscription.Kind)
	if err != nil {
		return meetingbot.Receipt{}, err
	}
	return n.NotifyDigest(ctx, rs)
}

// Delivered asks r's kind's notifier.
func (b ByKind) Delivered(ctx context.Context, r meetingbot.Reminder) (meetingbot.Receipt, bool, error) {
	n, err := b.of(r.Subscription.Kind)
	if err != nil {
		return meetingbot.Receipt{}, false, err
	}
	return n.Delivered(ctx, r)
}

// Edit edits f's reminder with its kind's notifier, when that edits.
func (b ByKind) Edit(ctx context.Context, f meetingbot.Follow) error {
	if e, ok := b[f.Reminder.Subscription.Kind].(Editor); ok {
		return e.Edit(ctx, f)
	}
	return nil
}

// LookUp looks sub's destination up with its kind's notifier, when that
// looks destinations up.
func (b ByKind) LookUp(ctx context.Context, sub meetingbot.Subscription) error {
	if l, ok := b[sub.Kind].(DestinationLookup); ok {
		return l.LookUp(ctx, sub)
	}
	return nil
}

// Pace waits for r's turn with its kind's notifier, when that keeps a
// pace of its own.
func (b ByKind) Pace(ctx context.Context, r meetingbot.Reminder) error {
	if p, ok := b[r.Subscription.Kind].(Pacer); ok {
		return p.Pace(ctx, r)
	}
	return nil
}
