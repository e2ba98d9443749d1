package main

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/config"
	"github.com/meetingbot/meetingbot/connect"
	"github.com/meetingbot/meetingbot/notify"
	"github.com/meetingbot/meetingbot/outbound"
	"github.com/meetingbot/meetingbot/scheduler"
)

// Slack status during meetings, as the bot wires it: one subscription per
// person who connected their Slack user, destination
// notify.StatusDestination(user), offset 0, swept by the scheduler with
// the reminders; the notifier routes its reminders to notify.Status.

// The router provides what the scheduler consumes.
var (
	_ scheduler.Notifier          = routed{}
	_ scheduler.Editor            = routed{}
	_ scheduler.DestinationLookup = routed{}
)

// routed sends status subscriptions' reminders to the status setter and
// every other reminder to Slack.
type routed struct {
	slack  *notify.Slack
	status *notify.Status
}

func isStatus(sub meetingbot.Subscription) bool {
	_, ok := notify.IsStatus(sub)
	return ok
}

func (r routed) Notify(ctx context.Context, rem meetingbot.Reminder) (meetingbot.Receipt, error) {
	if isStatus(rem.Subscription) {
		return r.status.Notify(ctx, rem)
	}
	return r.slack.Notify(ctx, rem)
}

func (r routed) NotifyDigest(ctx context.Context, rs []meetingbot.Reminder) (meetingbot.Receipt, error) {
	if isStatus(rs[0].Subscription) {
		return r.status.NotifyDigest(ctx, rs)
	}
	return r.slack.NotifyDigest(ctx, rs)
}

func (r routed) Delivered(ctx context.Context, rem meetingbot.Reminder) (meetingbot.Receipt, bool, error) {
	if isStatus(rem.Subscription) {
		return r.status.Delivered(ctx, rem)
	}
	return r.slack.Delivered(ctx, rem)
}

func (r routed) Edit(ctx context.Context, f meetingbot.Follow) error {
	if isStatus(f.Reminder.Subscription) {
		return r.status.Edit(ctx, f)
	}
	return r.slack.Edit(ctx, f)
}

func (r routed) LookUp(ctx context.Context, sub meetingbot.Subscription) error {
	if isStatus(sub) {
		return nil // a person's own token needs no lookup
	}
	return r.slack.LookUp(ctx, sub)
}

// statuses is the status subscriptions of the people who connected their
// Slack user, each reading the calendar of their Slack profile email.
type statuses struct {
	accounts *connect.Accounts
	store    interface {
		Connections(ctx context.Context) ([]meetingbot.Connection, error)
	}
	api *slack.Client
	log *slog.Logger

	mu     sync.Mutex
	emails map[string]cachedEmail
}

type cachedEmail struct {
	email string
	at    time.Time
}

// emailTTL is how long a person's Slack profile email is reused.
const emailTTL = 10 * time.Minute

// newStatuses returns the status subscriptions' source and the status
// setter for cfg, or nils when people cannot connect their Slack user.
func newStatuses(cfg config.Config, conns *connections, source func(ctx context.Context, sub meetingbot.Subscription, from, to time.Time) ([]meetingbot.Meeting, error), log *slog.Logger) (*statuses, *notify.Status) {
	if conns == nil || !cfg.SlackConnect() {
		return nil, nil
	}
	a := conns.accounts
	set := notify.NewStatus(notify.StatusConfig{
		APIURL: cfg.SlackAPIURL,
		Token: func(ctx context.Context, userID string) (string, error) {
			ts, _, err := a.UserToken(ctx, meetingbot.ProviderSlack, userID)
			if err != nil {
				return "", err
			}
			tok, err := ts.Token()
			if err != nil {
				return "", err
			}
			return tok.AccessToken, nil
		},
		Meetings: source,
		Titles: func(ctx context.Context, userID string) bool {
			ss, ok := conns.store.(interface {
				StatusSettingsOf(ctx context.Context, userID string) (meetingbot.StatusSettings, bool, error)
			})
			if !ok {
				return false
			}
			set, _, err := ss.StatusSettingsOf(ctx, userID)
			return err == nil && set.Titles
		},
		Revoked: func(ctx context.Context, userID string, err error) {
			a.Stop(ctx, meetingbot.ProviderSlack, userID)
		},
		Logger: log,
	})
	api := slack.New(cfg.SlackToken, slack.OptionAPIURL(cfg.SlackAPIURL), slack.OptionHTTPClient(outbound.Client(&http.Client{Timeout: slackCallTimeout})))
	return &statuses{accounts: a, store: conns.store, api: api, log: log, emails: map[string]cachedEmail{}}, set
}

// subscriptions returns one status subscription per active Slack
// connection whose person's email is known.
func (s *statuses) subscriptions(ctx context.Context) ([]meetingbot.Subscription, error) {
	cs, err := s.store.Connections(ctx)
	if err != nil {
		return nil, err
	}
	var out []meetingbot.Subscription
	for _, c := range cs {
		if c.Provider != meetingbot.ProviderSlack || c.State != meetingbot.ConnectionActive {
			continue
		}
		email := s.email(ctx, c.UserID)
		if email == "" {
			continue
		}
		out = append(out, meetingbot.Subscription{
			ID: "status:" + c.UserID, CalendarID: email, Destination: notify.StatusDestination(c.UserID),
			Offsets: []time.Duration{0},
		})
	}
	return out, nil
}

// calendars lists the calendars of the status subscriptions, for the
// mirror.
func (s *statuses) calendars(ctx context.Context) ([]string, error) {
	subs, err := s.subscriptions(ctx)
	out := make([]string, len(subs))
	for i, sub := range subs {
		out[i] = sub.CalendarID
	}
	return out, err
}

// email returns userID's Slack profile email, from users.info, reused for
// emailTTL; "" when it cannot be read.
func (s *statuses) email(ctx context.Context, userID string) string {
	s.mu.Lock()
	c, ok := s.emails[userID]
	s.mu.Unlock()
	if ok && time.Since(c.at) < emailTTL {
		return c.email
	}
	u, err := s.api.GetUserInfoContext(ctx, userID)
	if err != nil {
		s.log.Warn("cannot read the email of a person whose status the bot sets", "user", userID, "err", err)
		return c.email
	}
	email := strings.ToLower(u.Profile.Email)
	s.mu.Lock()
	s.emails[userID] = cachedEmail{email: email, at: time.Now()}
	s.mu.Unlock()
	return email
}

// keepInterval is how often the statuses shown are checked against their
// meetings.
const keepInterval = 5 * time.Second

// keep checks, every keepInterval until ctx ends, each status the bot set
// that may still show against its meeting in the mirror: cancelled,
// declined, moved or cut short, the status follows (status.Reconsider).
func (s *statuses) keep(ctx context.Context, ledger interface {
	Range(ctx context.Context, subscription string, from, to time.Time) ([]meetingbot.Entry, error)
}, meetings func(ctx context.Context, sub meetingbot.Subscription, from, to time.Time) ([]meetingbot.Meeting, error), set *notify.Status) {
	t := time.NewTicker(keepInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now := time.Now()
		subs, err := s.subscriptions(ctx)
		if err != nil {
			continue
		}
		for _, sub := range subs {
			entries, err := ledger.Range(ctx, sub.ID, now.Add(-24*time.Hour), now.Add(time.Second))
			if err != nil {
				continue
			}
			for _, e := range entries {
				if !notify.Showing(e, now) || s.stillThere(ctx, meetings, sub, e, now) {
					continue
				}
				if _, err := set.Reconsider(ctx, sub, now); err != nil {
					s.log.Warn("cannot make a status follow its meetings; tried again shortly", "subscription", sub.ID, "err", err)
				}
				break // one look at the calendar settles every entry of the person
			}
		}
	}
}

// stillThere reports whether e's meeting is in the mirror as it was when
// its status was set: same start, ending at or after the status's
// expiration's meeting end.
func (s *statuses) stillThere(ctx context.Context, meetings func(ctx context.Context, sub meetingbot.Subscription, from, to time.Time) ([]meetingbot.Meeting, error), sub meetingbot.Subscription, e meetingbot.Entry, now time.Time) bool {
	ms, err := meetings(ctx, sub, e.Start.Add(-time.Millisecond), e.Start)
	if err != nil {
		return true // not known now: left as it is
	}
	for _, m := range ms {
		if m.ID == e.EventID && m.Start.Equal(e.Start) && m.End.After(now) {
			exp, _ := strconv.ParseInt(e.MessageTS, 10, 64)
			return m.End.Unix() >= exp || s.chained(ctx, meetings, sub, m, exp)
		}
	}
	return false
}

// chained reports whether meetings after m carry the status on to exp.
func (s *statuses) chained(ctx context.Context, meetings func(ctx context.Context, sub meetingbot.Subscription, from, to time.Time) ([]meetingbot.Meeting, error), sub meetingbot.Subscription, m meetingbot.Meeting, exp int64) bool {
	ms, err := meetings(ctx, sub, m.Start.Add(-time.Millisecond), time.Unix(exp, 0))
	if err != nil {
		return true
	}
	for _, o := range ms {
		if o.End.Unix() >= exp {
			return true
		}
	}
	return false
}
