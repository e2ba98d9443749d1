package notify_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/notify"
	"github.com/meetingbot/meetingbot/notify/slacktest"
)

// userToken is srv's user token for userID, the test failing without one.
func userToken(t *testing.T, srv *slacktest.Server, userID string) string {
	t.Helper()
	tok, err := srv.UserToken(t.Context(), userID)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func TestStatusSetKeptAndRevoked(t *testing.T) {
	srv := slacktest.NewServer()
	defer srv.Close()
	tok := userToken(t, srv, "U1")
	var revoked []string
	set := notify.NewStatus(notify.StatusConfig{
		APIURL:  srv.URL(),
		Token:   func(context.Context, string) (string, error) { return tok, nil },
		Revoked: func(_ context.Context, user string, _ error) { revoked = append(revoked, user) },
	})
	start := time.Now().Truncate(time.Second)
	m := meetingbot.Meeting{ID: "m", Start: start, End: start.Add(30 * time.Minute)}
	sub := meetingbot.Subscription{ID: "status:U1", Kind: meetingbot.KindStatus, Destination: meetingbot.StatusDestination("U1"), Offsets: []time.Duration{0}}
	r := meetingbot.Reminder{Key: "m:0s", Subscription: sub, Meeting: m}

	if _, ok, err := set.Delivered(t.Context(), r); ok || err != nil {
		t.Errorf("Delivered before Notify = %v, %v; want false", ok, err)
	}
	receipt, err := set.Notify(t.Context(), r)
	if err != nil {
		t.Fatal(err)
	}
	if got := srv.StatusOf("U1"); got.Text != notify.StatusText || got.Emoji != notify.StatusEmoji || !got.Expiration.Equal(m.End) {
		t.Errorf("status = %+v, want In a meeting until %v", got, m.End)
	}
	if _, ok, err := set.Delivered(t.Context(), r); !ok || err != nil {
		t.Errorf("Delivered after Notify = %v, %v; want true (a crash before the ledger's record resends nothing)", ok, err)
	}
	if err := set.Edit(t.Context(), meetingbot.Follow{Reminder: r, Message: receipt, Kind: meetingbot.EditCancelled}); err != nil {
		t.Fatal(err)
	}
	if got := srv.StatusOf("U1"); got != (slacktest.Status{}) {
		t.Errorf("status after its meeting was cancelled = %+v, want cleared", got)
	}

	own := slacktest.Status{Text: "Dentist", Emoji: ":tooth:"}
	srv.SetStatus("U1", own)
	if rc, err := set.Notify(t.Context(), r); err != nil || rc.TS == "" {
		t.Fatalf("Notify over the person's own status = %v, %v", rc, err)
	}
	if got := srv.StatusOf("U1"); got != own {
		t.Errorf("the person's own status became %+v", got)
	}
	if err := set.Edit(t.Context(), meetingbot.Follow{Reminder: r, Message: receipt, Kind: meetingbot.EditCancelled}); err != nil || srv.StatusOf("U1") != own {
		t.Errorf("Edit cleared the person's own status (%v)", err)
	}

	srv.RevokeUserTokens("U1")
	srv.SetStatus("U1", slacktest.Status{})
	_, err = set.Notify(t.Context(), r)
	if !meetingbot.IsPermanent(err) || len(revoked) != 1 {
		t.Errorf("Notify with a revoked token: %v (revoked %v), want permanent and the connection stopped", err, revoked)
	}
	if errors.Is(err, meetingbot.ErrUnconfirmed) {
		t.Errorf("a refused token is not an unconfirmed send")
	}
}

// With titles chosen, the status is the meeting's title; a private
// meeting's is "In a meeting".
func TestStatusTitles(t *testing.T) {
	srv := slacktest.NewServer()
	defer srv.Close()
	tok := userToken(t, srv, "U1")
	set := notify.NewStatus(notify.StatusConfig{
		APIURL: srv.URL(),
		Token:  func(context.Context, string) (string, error) { return tok, nil },
		Titles: func(context.Context, string) bool { return true },
	})
	start := time.Now().Truncate(time.Second)
	sub := meetingbot.Subscription{ID: "status:U1", Kind: meetingbot.KindStatus, Destination: meetingbot.StatusDestination("U1"), Offsets: []time.Duration{0}}
	for _, tt := range []struct {
		m    meetingbot.Meeting
		want string
	}{
		{meetingbot.Meeting{ID: "a", Title: "Budget review", Start: start, End: start.Add(time.Minute)}, "Budget review"},
		{meetingbot.Meeting{ID: "b", Title: "Interview: Jane", Private: true, Start: start, End: start.Add(2 * time.Minute)}, notify.StatusText},
		// Cleaned as reminders' titles are: no bidi override reverses
		// what others read, no line break, no invisible character.
		{meetingbot.Meeting{ID: "c", Title: "Resigning today \u202egnitirw ni\u202c\n - call\t+1 555\u200b 0100", Start: start, End: start.Add(3 * time.Minute)},
			"Resigning today gnitirw ni - call +1 555 0100"},
	} {
		srv.SetStatus("U1", slacktest.Status{})
		if _, err := set.Notify(t.Context(), meetingbot.Reminder{Key: tt.m.ID, Subscription: sub, Meeting: tt.m}); err != nil {
			t.Fatal(err)
		}
		if got := srv.StatusOf("U1").Text; got != tt.want {
			t.Errorf("status of %q (private %v) = %q, want %q", tt.m.Title, tt.m.Private, got, tt.want)
		}
	}
}

// Many people's meetings starting at once are set at users.profile.set's
// pace, none refused with 429.
func TestStatusPaced(t *testing.T) {
	srv := slacktest.NewServer()
	defer srv.Close()
	// Slack's limit scaled from a minute to half a second: 10 calls in
	// each, against a pace of 600 a minute, 5 at once then evenly (at
	// most 5 + 5 in any half second).
	const people, perMinute = 30, 600
	srv.SetStatusRateLimit(10, 500*time.Millisecond)
	tokens := map[string]string{}
	for i := range people {
		u := "U" + string(rune('A'+i/26)) + string(rune('A'+i%26))
		tokens[u] = userToken(t, srv, u)
	}
	set := notify.NewStatus(notify.StatusConfig{
		APIURL: srv.URL(), PerMinute: perMinute,
		Token: func(_ context.Context, u string) (string, error) { return tokens[u], nil },
	})
	start := time.Now().Truncate(time.Second)
	done := make(chan error, people)
	for u := range tokens {
		go func() {
			sub := meetingbot.Subscription{ID: "status:" + u, Kind: meetingbot.KindStatus, Destination: meetingbot.StatusDestination(u), Offsets: []time.Duration{0}}
			_, err := set.Notify(t.Context(), meetingbot.Reminder{Key: "m", Subscription: sub, Meeting: meetingbot.Meeting{ID: "m", Start: start, End: start.Add(time.Hour)}})
			done <- err
		}()
	}
	for range people {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
	if n := srv.StatusRateLimited(); n != 0 {
		t.Errorf("users.profile.set refused %d times with 429, want 0 at the pace", n)
	}
	if n := len(srv.StatusSets()); n != people {
		t.Errorf("statuses set = %d, want %d", n, people)
	}
}

// With token rotation a person's access token expires after 12 hours;
// Slack answering token_expired is not a revocation: the token is renewed
// once and the call made again, and the connection goes on.
func TestStatusRenewsAnExpiredToken(t *testing.T) {
	srv := slacktest.NewServer()
	defer srv.Close()
	now := time.Now().Truncate(time.Second)
	srv.SetClock(func() time.Time { return now })
	srv.SetTokenRotation(12 * time.Hour)
	tok := srv.GrantUserToken("U1")
	now = now.Add(13 * time.Hour) // the token expired at Slack
	var revoked, renewed []string
	set := notify.NewStatus(notify.StatusConfig{
		APIURL:  srv.URL(),
		Token:   func(context.Context, string) (string, error) { return tok, nil },
		Renew:   func(_ context.Context, user string) { renewed = append(renewed, user); tok = srv.GrantUserToken(user) },
		Revoked: func(_ context.Context, user string, _ error) { revoked = append(revoked, user) },
	})
	m := meetingbot.Meeting{ID: "m", Start: now, End: now.Add(30 * time.Minute)}
	sub := meetingbot.Subscription{ID: "status:U1", Kind: meetingbot.KindStatus, Destination: meetingbot.StatusDestination("U1"), Offsets: []time.Duration{0}}
	if _, err := set.Notify(t.Context(), meetingbot.Reminder{Key: "m:0s", Subscription: sub, Meeting: m}); err != nil {
		t.Fatalf("Notify with an expired token = %v, want it renewed and the status set", err)
	}
	if got := srv.StatusOf("U1"); got.Text != notify.StatusText {
		t.Errorf("status = %+v, want In a meeting", got)
	}
	if len(renewed) != 1 || len(revoked) != 0 {
		t.Errorf("renewed %v, revoked %v; want one renewal and no revocation", renewed, revoked)
	}
}
