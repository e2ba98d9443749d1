package scheduler_test

import (
	"context"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/scheduler"
)

// named is a Notifier that answers with its name, and edits when it is an
// editor.
type named string

func (n named) Notify(context.Context, meetingbot.Reminder) (meetingbot.Receipt, error) {
	return meetingbot.Receipt{Channel: string(n)}, nil
}

func (n named) NotifyDigest(context.Context, []meetingbot.Reminder) (meetingbot.Receipt, error) {
	return meetingbot.Receipt{Channel: string(n) + " digest"}, nil
}

func (n named) Delivered(context.Context, meetingbot.Reminder) (meetingbot.Receipt, bool, error) {
	return meetingbot.Receipt{Channel: string(n)}, true, nil
}

// editing is a named Notifier that edits, and fails every edit.
type editing struct{ named }

func (editing) Edit(context.Context, meetingbot.Follow) error { return context.Canceled }

// ByKind hands each reminder to its kind's notifier, fails permanently for
// a kind it has none for, and has nothing to edit for a kind whose
// notifier does not edit.
func TestByKindRoutesByTheSubscriptionsKind(t *testing.T) {
	ctx := context.Background()
	n := scheduler.ByKind{meetingbot.KindReminder: editing{"slack"}, meetingbot.KindStatus: named("status")}
	rem := func(k meetingbot.Kind) meetingbot.Reminder {
		return meetingbot.Reminder{Key: "k", Subscription: meetingbot.Subscription{ID: "s", Kind: k}, TriggerAt: time.Now()}
	}
	for k, want := range map[meetingbot.Kind]string{meetingbot.KindReminder: "slack", meetingbot.KindStatus: "status"} {
		if got, err := n.Notify(ctx, rem(k)); err != nil || got.Channel != want {
			t.Errorf("Notify(kind %q) = %v, %v; want %s", k, got, err, want)
		}
		if got, err := n.NotifyDigest(ctx, []meetingbot.Reminder{rem(k)}); err != nil || got.Channel != want+" digest" {
			t.Errorf("NotifyDigest(kind %q) = %v, %v; want %s's digest", k, got, err, want)
		}
		if got, ok, err := n.Delivered(ctx, rem(k)); err != nil || !ok || got.Channel != want {
			t.Errorf("Delivered(kind %q) = %v, %v, %v; want %s's", k, got, ok, err, want)
		}
	}
	if _, err := n.Notify(ctx, rem(meetingbot.KindAgenda)); !meetingbot.IsPermanent(err) {
		t.Errorf("Notify(kind agenda) = %v, want a permanent error: no notifier for it", err)
	}
	if err := n.Edit(ctx, meetingbot.Follow{Reminder: rem(meetingbot.KindReminder)}); err != context.Canceled {
		t.Errorf("Edit(a reminder) = %v, want the editor's answer", err)
	}
	if err := n.Edit(ctx, meetingbot.Follow{Reminder: rem(meetingbot.KindStatus)}); err != nil {
		t.Errorf("Edit(a status, whose notifier does not edit) = %v, want nil", err)
	}
	if err := n.LookUp(ctx, rem(meetingbot.KindStatus).Subscription); err != nil {
		t.Errorf("LookUp(a status) = %v, want nil: nothing to look up", err)
	}
	if err := n.Pace(ctx, rem(meetingbot.KindReminder)); err != nil {
		t.Errorf("Pace(a reminder) = %v, want nil: no pace of its own", err)
	}
}
