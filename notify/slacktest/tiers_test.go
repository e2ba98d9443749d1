package slacktest_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/slack-go/slack"

	"github.com/meetingbot/meetingbot/internal/clock"
	"github.com/meetingbot/meetingbot/notify/slacktest"
)

// conversations.list is Tier 2: 20 requests in a minute pass, the 21st is
// answered 429 with Retry-After until the first of them is a minute old.
func TestConversationsListIsTier2(t *testing.T) {
	s := seeded(t)
	c := clock.NewFake(time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC))
	s.SetClock(c.Now)
	api := slack.New(slacktest.Token, slack.OptionAPIURL(s.URL()))
	list := func() error {
		_, _, err := api.GetConversationsContext(context.Background(), &slack.GetConversationsParameters{})
		return err
	}
	for i := range 20 {
		if err := list(); err != nil {
			t.Fatalf("conversations.list #%d = %v", i+1, err)
		}
		c.Advance(time.Second)
	}
	var rl *slack.RateLimitedError
	if err := list(); !errors.As(err, &rl) || rl.RetryAfter != 40*time.Second {
		t.Fatalf("conversations.list #21 in a minute = %v, want 429 with Retry-After 40s", err)
	}
	c.Advance(40 * time.Second)
	if err := list(); err != nil {
		t.Errorf("conversations.list a minute after the first = %v, want it answered", err)
	}
	if _, err := api.AuthTestContext(context.Background()); err != nil {
		t.Errorf("auth.test, of another tier, while conversations.list is limited = %v", err)
	}
}

// A page is cut from every channel of the workspace, then filtered: pages
// hold fewer channels than asked for, some none, before the end.
func TestConversationsListPagesDiminish(t *testing.T) {
	s := slacktest.NewServer()
	t.Cleanup(s.Close)
	for i := range 30 {
		s.AddChannel(slacktest.Channel{ID: fmt.Sprintf("C0ARCH%04d", i), Name: fmt.Sprint("archived-", i), Archived: true})
	}
	s.AddChannel(slacktest.Channel{ID: "C0LIVE0001", Name: "live"})
	api := slack.New(slacktest.Token, slack.OptionAPIURL(s.URL()))
	var sizes []int
	var names []string
	cursor := ""
	for {
		chans, next, err := api.GetConversationsContext(context.Background(), &slack.GetConversationsParameters{Cursor: cursor, Limit: 10, ExcludeArchived: true})
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, len(chans))
		for _, ch := range chans {
			names = append(names, ch.Name)
		}
		if cursor = next; cursor == "" {
			break
		}
	}
	if fmt.Sprint(sizes) != "[0 0 0 1]" || fmt.Sprint(names) != "[live]" {
		t.Errorf("pages of 10 over 30 archived channels and one live = sizes %v, names %v; want [0 0 0 1], [live]", sizes, names)
	}
}
