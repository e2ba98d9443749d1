package notify_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/notify"
	"github.com/meetingbot/meetingbot/notify/slacktest"
	"github.com/meetingbot/meetingbot/storage/sqlite"
)

// openNames opens a SQLite store for the channel names, as cmd/bot wires
// it, closed with the test.
func openNames(t *testing.T, path string) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func (e *env) lists() int { return len(e.srv.CallsTo("conversations.list")) }

// The names a listing found are kept in the store: a restart (a new
// notifier on the same database) finds #standup without listing.
func TestChannelNamesSurviveARestart(t *testing.T) {
	e := newEnv(t)
	path := filepath.Join(t.TempDir(), "bot.db")
	e.slack.KeepNames(openNames(t, path))
	if _, err := e.slack.Notify(context.Background(), reminder(sub("#standup"), meeting(), 10*time.Minute)); err != nil {
		t.Fatalf("Notify(#standup) = %v", err)
	}
	if n := e.lists(); n != 1 {
		t.Fatalf("conversations.list calls = %d, want 1", n)
	}
	kept, err := openNames(t, path).ChannelNames(context.Background())
	if err != nil || kept["standup"] != "C0STANDUP1" || kept["private"] != "G0PRIVATE1" || kept["old"] != "" {
		t.Errorf("names kept = %v, %v; want standup and private, not the archived old", kept, err)
	}

	restarted := notify.New(notify.Config{Token: slacktest.Token, APIURL: e.srv.URL(), Now: e.clock.Now, Sleep: e.clock.Sleep})
	restarted.KeepNames(openNames(t, path))
	if rc, err := restarted.Notify(context.Background(), reminder(sub("#standup"), meeting(), 10*time.Minute)); err != nil || rc.Channel != "C0STANDUP1" {
		t.Fatalf("Notify(#standup) after a restart = %+v, %v; want C0STANDUP1", rc, err)
	}
	if n := e.lists(); n != 1 {
		t.Errorf("conversations.list calls after the restart = %d, want still 1", n)
	}
}

// A name that is not there is not listed for again within ten minutes of
// the listing that missed it: a typo in CALENDARS lists once, not once a
// reminder.
func TestMissingNameIsNotListedForAgainAtOnce(t *testing.T) {
	e := newEnv(t)
	for range 3 {
		err := e.slack.LookUp(context.Background(), sub("#standpu"))
		if !meetingbot.IsPermanent(err) || !strings.Contains(err.Error(), "channel_not_found: no channel named #standpu") {
			t.Fatalf("LookUp(#standpu) = %v, want permanent channel_not_found", err)
		}
	}
	if n := e.lists(); n != 1 {
		t.Errorf("conversations.list calls for 3 lookups of a missing name = %d, want 1", n)
	}
	e.srv.AddChannel(slacktest.Channel{ID: "C0STANDPU1", Name: "standpu", Member: true})
	e.clock.Advance(10 * time.Minute)
	if err := e.slack.LookUp(context.Background(), sub("#standpu")); err != nil {
		t.Errorf("LookUp(#standpu) ten minutes on, once created = %v", err)
	}
	if n := e.lists(); n != 2 {
		t.Errorf("conversations.list calls = %d, want 2", n)
	}
}

// A lookup gets its channel from the page that has it, without waiting
// for the rest of a long listing.
func TestLookUpReturnsWithItsPage(t *testing.T) {
	e := newEnv(t)
	for i := range 1500 {
		e.srv.AddChannel(slacktest.Channel{ID: fmt.Sprintf("C1%08d", i), Name: fmt.Sprint("filler-", i)})
	}
	e.srv.Fail("conversations.list", "", slacktest.Fault{}, slacktest.Fault{Delay: 3 * time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := e.slack.LookUp(ctx, sub("#standup")); err != nil {
		t.Errorf("LookUp(#standup, on the first page) while the second page takes 3s = %v", err)
	}
}

// A name kept for a channel Slack no longer has at that ID is forgotten
// when a post there fails: the next reminder lists again and finds the
// channel now called so.
func TestStaleNameIsForgotten(t *testing.T) {
	e := newEnv(t)
	path := filepath.Join(t.TempDir(), "bot.db")
	st := openNames(t, path)
	if err := st.PutChannelNames(context.Background(), map[string]string{"standup": "C0GONE0001"}, e.clock.Now()); err != nil {
		t.Fatal(err)
	}
	e.slack.KeepNames(st)
	if _, err := e.slack.Notify(context.Background(), reminder(sub("#standup"), meeting(), 10*time.Minute)); !meetingbot.IsPermanent(err) {
		t.Fatalf("Notify(#standup) to the stale ID = %v, want a permanent error", err)
	}
	if rc, err := e.slack.Notify(context.Background(), reminder(sub("#standup"), meeting(), 5*time.Minute)); err != nil || rc.Channel != "C0STANDUP1" {
		t.Fatalf("the next Notify(#standup) = %+v, %v; want C0STANDUP1", rc, err)
	}
	if kept, _ := st.ChannelNames(context.Background()); kept["standup"] != "C0STANDUP1" {
		t.Errorf("name kept = %q, want C0STANDUP1", kept["standup"])
	}
}

// TestCloseEndsTheListingItStarted: a listing of the channels outlives
// the lookup that started it, but not the notifier: Close ends the
// listing in flight and waits for it, so that nothing is written to the
// store the bot closes next, and a lookup after Close starts none.
func TestCloseEndsTheListingItStarted(t *testing.T) {
	e := newEnv(t)
	e.slack.KeepNames(openNames(t, filepath.Join(t.TempDir(), "bot.db")))
	e.srv.SetLatency(time.Hour) // the listing is in flight until Close ends it
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := e.slack.Resolve(ctx, sub("#standup")); err == nil {
		t.Fatal("Resolve within 50ms of a listing that takes an hour: want its deadline")
	}
	closed := make(chan struct{})
	go func() {
		e.slack.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return with a listing in flight: it must end it")
	}
	e.srv.SetLatency(0)
	before := len(e.srv.CallsTo("conversations.list"))
	if err := e.slack.Resolve(context.Background(), sub("#random")); err == nil {
		t.Error("Resolve(#random) after Close = nil, want an error: no listing starts")
	}
	if n := len(e.srv.CallsTo("conversations.list")); n != before {
		t.Errorf("conversations.list calls after Close = %d, want still %d", n, before)
	}
}
