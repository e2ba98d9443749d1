package notify_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/notify"
	"github.com/meetingbot/meetingbot/notify/slacktest"
)

// TestResolveFindsWhatWouldLoseAReminder checks each destination the way
// start-up does, against the Slack emulator: what a reminder could reach
// passes; what an operator must fix is permanent and says the fix; a
// failure that may pass is not permanent.
func TestResolveFindsWhatWouldLoseAReminder(t *testing.T) {
	tests := []struct {
		name, dest string
		fault      *slacktest.Fault // on the first call of method
		method     string
		permanent  bool
		want       string // in the error; "" for none
	}{
		{name: "channel by name", dest: "#standup"},
		{name: "channel by ID", dest: "C0STANDUP1"},
		{name: "private channel the bot is in", dest: "G0PRIVATE1"},
		{name: "user by email", dest: "alice@example.com"},
		{name: "user by ID", dest: "U0ALICE001"},
		{name: "no such channel name", dest: "#engineering", permanent: true,
			want: "channel_not_found: no channel named #engineering is visible to the bot: check the name in CALENDARS; for a private channel, /invite @meetingbot there first"},
		{name: "no such channel ID", dest: "C0NOSUCH01", permanent: true, want: "conversations.info to channel C0NOSUCH01: channel_not_found: check the channel ID in CALENDARS"},
		{name: "bot not in channel", dest: "#random", permanent: true, want: "not_in_channel: invite the bot to #random: /invite @meetingbot"},
		{name: "bot not in channel by ID", dest: "C0RANDOM01", permanent: true, want: "not_in_channel: invite the bot to channel C0RANDOM01"},
		{name: "archived channel", dest: "C0OLD00001", permanent: true, want: "is_archived: channel C0OLD00001 is archived: unarchive it or set another destination in CALENDARS"},
		{name: "archived channel by name", dest: "#old", permanent: true, want: "channel_not_found: no channel named #old"},
		{name: "email not in Slack", dest: "nobody@example.com", permanent: true,
			want: "users_not_found: no active Slack user has the email nobody@example.com (not in the workspace, or deactivated)"},
		{name: "person who left, by email", dest: "carol@example.com", permanent: true, want: "users_not_found: no active Slack user has the email carol@example.com"},
		{name: "person who left, by ID", dest: "U0CAROL001", permanent: true, want: "users.info to DM to U0CAROL001: user_disabled: the Slack account U0CAROL001 is deactivated"},
		{name: "no such user ID", dest: "U0NOBODY01", permanent: true, want: "user_not_found: no Slack user U0NOBODY01: check the user ID in CALENDARS"},
		{name: "missing scope", dest: "C0STANDUP1", method: "conversations.info", fault: &slacktest.Fault{Error: "missing_scope"}, permanent: true,
			want: "add the channels:read and groups:read scope and reinstall the app"},
		{name: "Slack down", dest: "#standup", method: "conversations.list", fault: &slacktest.Fault{Status: 503}, want: "conversations.list"},
		{name: "rate limited", dest: "alice@example.com", method: "users.lookupByEmail", fault: &slacktest.Fault{Status: 429, RetryAfter: 1}, want: "users.lookupByEmail"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, func(c *notify.Config) { c.Retry.MaxAttempts = 1 })
			e.srv.AddUser(slacktest.User{ID: "U0CAROL001", Name: "carol", Email: "carol@example.com", Deactivated: true})
			if tt.fault != nil {
				e.srv.Fail(tt.method, "", *tt.fault)
			}
			err := e.slack.Resolve(context.Background(), sub(tt.dest))
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Resolve(%s) = %v, want nil", tt.dest, err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("Resolve(%s) = %v, want an error containing %q", tt.dest, err, tt.want)
			case err != nil && meetingbot.IsPermanent(err) != tt.permanent:
				t.Errorf("Resolve(%s) = %v, permanent %v, want %v", tt.dest, err, meetingbot.IsPermanent(err), tt.permanent)
			}
			if len(e.srv.CallsTo("chat.postMessage")) > 0 {
				t.Errorf("Resolve(%s) posted a message", tt.dest)
			}
		})
	}
}

// TestResolveSeesAChangeAndNotifyFollowsIt checks a channel before and
// after the bot is invited, then after it is archived: each check asks
// Slack afresh, and a reminder after a good check uses what it found.
func TestResolveSeesAChangeAndNotifyFollowsIt(t *testing.T) {
	e := newEnv(t)
	later := slacktest.Channel{ID: "C0LATER001", Name: "later"}
	e.srv.AddChannel(later)
	s := sub("#later")
	if err := e.slack.Resolve(context.Background(), s); !meetingbot.IsPermanent(err) || !strings.Contains(err.Error(), "not_in_channel") {
		t.Fatalf("Resolve(#later) before the invite = %v, want permanent not_in_channel", err)
	}
	later.Member = true // /invite @meetingbot
	e.srv.UpdateChannel(later)
	if err := e.slack.Resolve(context.Background(), s); err != nil {
		t.Fatalf("Resolve(#later) after the invite = %v, want nil", err)
	}
	lists := len(e.srv.CallsTo("conversations.list"))
	if _, err := e.slack.Notify(context.Background(), reminder(s, meeting(), 0)); err != nil {
		t.Errorf("Notify() after Resolve = %v, want nil", err)
	}
	if n := len(e.srv.CallsTo("conversations.list")); n != lists {
		t.Errorf("Notify() listed channels again (%d calls, want %d): it should use what Resolve found", n, lists)
	}
	later.Archived = true
	e.srv.UpdateChannel(later)
	if err := e.slack.Resolve(context.Background(), s); !meetingbot.IsPermanent(err) || !strings.Contains(err.Error(), "is_archived: #later is archived") {
		t.Errorf("Resolve(#later) after archiving = %v, want permanent is_archived", err)
	}
}

// TestLookUpKeepsTheDestinationForNotify looks a DM by email up ahead of
// its reminder, as the scheduler does a second before the trigger: the
// lookups happen then, once, and the reminder itself costs one post.
func TestLookUpKeepsTheDestinationForNotify(t *testing.T) {
	e := newEnv(t)
	s := sub("alice@example.com")
	calls := func() (lookups, opens, posts int) {
		return len(e.srv.CallsTo("users.lookupByEmail")), len(e.srv.CallsTo("conversations.open")), len(e.srv.CallsTo("chat.postMessage"))
	}
	for range 2 {
		if err := e.slack.LookUp(context.Background(), s); err != nil {
			t.Fatalf("LookUp(alice@example.com) = %v", err)
		}
	}
	if l, o, p := calls(); l != 1 || o != 1 || p != 0 {
		t.Fatalf("after two lookups: users.lookupByEmail %d, conversations.open %d, chat.postMessage %d; want 1, 1, 0", l, o, p)
	}
	if _, err := e.slack.Notify(context.Background(), reminder(s, meeting(), 10*time.Minute)); err != nil {
		t.Fatalf("Notify = %v", err)
	}
	if l, o, p := calls(); l != 1 || o != 1 || p != 1 {
		t.Errorf("after the reminder: users.lookupByEmail %d, conversations.open %d, chat.postMessage %d; want 1, 1, 1", l, o, p)
	}

	if err := e.slack.LookUp(context.Background(), sub("nobody@example.com")); !meetingbot.IsPermanent(err) {
		t.Errorf("LookUp(nobody@example.com) = %v, want a permanent error", err)
	}
}

// TestLookUpsOfChannelNamesShareOneListing looks up ten channels by name at
// once, before any name is known, while Slack takes 500ms to list them:
// one conversations.list for all. One caller that stops waiting early gets
// its context's error; the others still get their channel.
func TestLookUpsOfChannelNamesShareOneListing(t *testing.T) {
	e := newEnv(t)
	for i := range 10 {
		e.srv.AddChannel(slacktest.Channel{ID: fmt.Sprintf("C0TEAM%04d", i), Name: fmt.Sprint("team-", i), Member: true})
	}
	e.srv.Fail("conversations.list", "", slacktest.Fault{Delay: 500 * time.Millisecond})
	var wg sync.WaitGroup
	errs := make([]error, 10)
	for i := range 10 {
		wg.Go(func() { errs[i] = e.slack.LookUp(context.Background(), sub(fmt.Sprint("#team-", i))) })
	}
	hurried, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := e.slack.LookUp(hurried, sub("#standup")); err == nil || !errors.Is(err, context.DeadlineExceeded) && !strings.Contains(err.Error(), "deadline") {
		t.Errorf("LookUp with 50ms while the listing takes 500ms = %v, want its deadline", err)
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("LookUp(#team-%d) = %v", i, err)
		}
	}
	if n := len(e.srv.CallsTo("conversations.list")); n != 1 {
		t.Errorf("conversations.list calls = %d, want 1 for 11 lookups at once", n)
	}
}
