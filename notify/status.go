package notify

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/slack-go/slack"
	"golang.org/x/time/rate"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/outbound"
)

// People's Slack status during their meetings (docs/design.md, "Slack
// status during meetings"), set with each person's own user token (a bot token
// cannot: users.profile.set takes a user token with users.profile:write).
// A status is one more kind of reminder: a subscription per person whose
// destination is StatusDestination(user), offset 0, so that it goes
// through the scheduler's timers, claims and ledger, exactly once through
// crashes and replicas, and at most meetingbot.StartGrace late.

// The status the bot sets.
const (
	StatusEmoji = ":spiral_calendar_pad:"
	StatusText  = "In a meeting"
)

// statusPrefix starts the destination of a status subscription.
const statusPrefix = "status:"

// StatusDestination is the destination of userID's status subscription.
func StatusDestination(userID string) string { return statusPrefix + userID }

// IsStatus reports whether sub is a status subscription, and whose.
func IsStatus(sub meetingbot.Subscription) (userID string, ok bool) {
	return strings.CutPrefix(sub.Destination, statusPrefix)
}

// ownStatus is the receipt of a status left alone: the person had set one
// themselves, which the bot never replaces.
const ownStatus = "own-status-kept"

// StatusConfig configures Status.
type StatusConfig struct {
	// APIURL is SLACK_API_URL.
	APIURL string
	// Token returns userID's own user token; an error matching
	// meetingbot.ErrNotConnected when they have none in use.
	Token func(ctx context.Context, userID string) (string, error)
	// Meetings reads the meetings of sub's calendar starting in (from,
	// to], to chain back-to-back and overlapping ones.
	Meetings func(ctx context.Context, sub meetingbot.Subscription, from, to time.Time) ([]meetingbot.Meeting, error)
	// Titles, when set, reports whether userID chose to show the meeting's
	// title (never for a private event).
	Titles func(ctx context.Context, userID string) bool
	// Revoked is told that Slack refused userID's token (token_revoked,
	// invalid_auth): their connection stops.
	Revoked func(ctx context.Context, userID string, err error)
	// PerMinute paces users.profile.set, a Tier 3 method ("50+ per
	// minute", per app and workspace, https://docs.slack.dev/apis/web-api/rate-limits):
	// a company's 09:00 starts go out at that pace rather than in a burst
	// answered 429. DefaultStatusPerMinute by default.
	PerMinute  int
	HTTPClient *http.Client
	Logger     *slog.Logger
}

// DefaultStatusPerMinute is Tier 3's pace.
const DefaultStatusPerMinute = 50

// Status sets and clears people's status; it provides the scheduler's
// Notifier and Editor for status subscriptions.
type Status struct {
	cfg  StatusConfig
	http *http.Client
	log  *slog.Logger
	pace *rate.Limiter
}

// NewStatus returns a Status.
func NewStatus(cfg StatusConfig) *Status {
	n := cmp.Or(max(cfg.PerMinute, 0), DefaultStatusPerMinute)
	return &Status{
		cfg:  cfg,
		http: outbound.Client(cmp.Or(cfg.HTTPClient, &http.Client{Timeout: 30 * time.Second})),
		log:  cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler)),
		// Evenly, one at a time: a burst at 09:00 is what Slack refuses.
		pace: rate.NewLimiter(rate.Limit(float64(n)/60), 1),
	}
}

// set calls users.profile.set at the pace, once more after a 429's
// Retry-After when ctx allows it.
func (s *Status) set(ctx context.Context, api *slack.Client, user, text, emoji string, exp int64) error {
	for attempt := 1; ; attempt++ {
		if err := s.pace.Wait(ctx); err != nil {
			return fmt.Errorf("status of %s: waiting for users.profile.set's pace: %w", user, err)
		}
		err := api.SetUserCustomStatusContext(ctx, text, emoji, exp)
		var rl *slack.RateLimitedError
		if !errors.As(err, &rl) || attempt == 2 {
			if err != nil {
				return s.classify(ctx, user, "users.profile.set", err)
			}
			return nil
		}
		s.log.Warn("users.profile.set rate limited; waiting as Slack asks", "user", user, "retry_after", rl.RetryAfter)
		t := time.NewTimer(rl.RetryAfter)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("status of %s: users.profile.set rate limited: %w", user, ctx.Err())
		case <-t.C:
		}
	}
}

// api returns a client acting as userID.
func (s *Status) api(ctx context.Context, userID string) (*slack.Client, error) {
	tok, err := s.cfg.Token(ctx, userID)
	if errors.Is(err, meetingbot.ErrNotConnected) {
		return nil, meetingbot.Permanent(fmt.Errorf("status of %s: %w", userID, err))
	}
	if err != nil {
		return nil, fmt.Errorf("status of %s: %w", userID, err)
	}
	return slack.New(tok, slack.OptionAPIURL(s.cfg.APIURL), slack.OptionHTTPClient(s.http)), nil
}

// classify words a Slack failure: a refused token stops the connection
// and is permanent; a rate limit or a network error is retried.
func (s *Status) classify(ctx context.Context, userID, call string, err error) error {
	var se slack.SlackErrorResponse
	if errors.As(err, &se) {
		switch se.Err {
		case "token_revoked", "invalid_auth", "account_inactive", "token_expired", "not_authed":
			if s.cfg.Revoked != nil {
				s.cfg.Revoked(ctx, userID, err)
			}
			return meetingbot.Permanent(fmt.Errorf("status of %s: %s: Slack refused the person's token (%s): they allow it again with /meetingbot status on", userID, call, se.Err))
		}
		return meetingbot.Permanent(fmt.Errorf("status of %s: %s: %s", userID, call, se.Err))
	}
	return fmt.Errorf("status of %s: %s: %w", userID, call, err) // rate limited, network: the next sweep retries within the grace
}

// ours reports whether a status is one the bot sets: its emoji, with "In
// a meeting" or a meeting's title.
func ours(_, emoji string) bool { return emoji == StatusEmoji }

// text is the status shown for m: its title when userID chose titles and
// m is not private, else StatusText. Slack keeps at most 100 characters.
func (s *Status) text(ctx context.Context, userID string, m meetingbot.Meeting) string {
	if m.Private || m.Title == "" || s.cfg.Titles == nil || !s.cfg.Titles(ctx, userID) {
		return StatusText
	}
	if r := []rune(m.Title); len(r) > 100 {
		return string(r[:99]) + "…"
	}
	return m.Title
}

// Notify sets the person's status for r's meeting, until the end of the
// meetings that follow on from it without a gap (back-to-back or
// overlapping: the latest end wins, and Slack clears it then, even with
// the bot down). A status the person set themselves is left alone; the
// receipt says so.
func (s *Status) Notify(ctx context.Context, r meetingbot.Reminder) (meetingbot.Receipt, error) {
	return s.NotifyDigest(ctx, []meetingbot.Reminder{r})
}

// NotifyDigest sets one status for meetings starting at one instant.
func (s *Status) NotifyDigest(ctx context.Context, rs []meetingbot.Reminder) (meetingbot.Receipt, error) {
	r := rs[0]
	user, ok := IsStatus(r.Subscription)
	if !ok {
		return meetingbot.Receipt{}, meetingbot.Permanent(fmt.Errorf("status: subscription %s is not a status", r.Subscription.ID))
	}
	end := r.Meeting.End
	for _, o := range rs[1:] {
		end = later(end, o.Meeting.End)
	}
	end = s.chain(ctx, r.Subscription, r.Meeting.Start, end)
	api, err := s.api(ctx, user)
	if err != nil {
		return meetingbot.Receipt{}, err
	}
	p, err := api.GetUserProfileContext(ctx, &slack.GetUserProfileParameters{})
	if err != nil {
		return meetingbot.Receipt{}, s.classify(ctx, user, "users.profile.get", err)
	}
	receipt := meetingbot.Receipt{Channel: StatusDestination(user)}
	if p.StatusText != "" || p.StatusEmoji != "" {
		if !ours(p.StatusText, p.StatusEmoji) {
			s.log.Info("status left alone: the person set their own", "user", user, "key", r.Key)
			receipt.TS = ownStatus
			return receipt, nil
		}
		if p.StatusExpiration > 0 {
			current := time.Unix(int64(p.StatusExpiration), 0)
			if !current.Before(end) {
				// Set already until then (a back-to-back meeting before
				// this one): nothing to change, no flicker.
				receipt.TS = strconv.FormatInt(current.Unix(), 10)
				return receipt, nil
			}
			end = later(end, current)
		}
	}
	if err := s.set(ctx, api, user, s.text(ctx, user, r.Meeting), StatusEmoji, end.Unix()); err != nil {
		return meetingbot.Receipt{}, err
	}
	receipt.TS = strconv.FormatInt(end.Unix(), 10)
	s.log.Debug("status set", "user", user, "key", r.Key, "until", end)
	return receipt, nil
}

// chain extends end over the meetings that start before it and end after
// it, so that back-to-back and overlapping meetings show one status.
func (s *Status) chain(ctx context.Context, sub meetingbot.Subscription, start, end time.Time) time.Time {
	if s.cfg.Meetings == nil {
		return end
	}
	for range 20 {
		ms, err := s.cfg.Meetings(ctx, sub, start.Add(-time.Millisecond), end)
		if err != nil {
			return end
		}
		next := end
		for _, m := range ms {
			next = later(next, m.End)
		}
		if !next.After(end) {
			return end
		}
		end = next
	}
	return end
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// Delivered reports whether r's status is set: the person's status is the
// bot's, until at least r's meeting's end (after a crash between Slack
// taking it and the ledger's record).
func (s *Status) Delivered(ctx context.Context, r meetingbot.Reminder) (meetingbot.Receipt, bool, error) {
	user, ok := IsStatus(r.Subscription)
	if !ok {
		return meetingbot.Receipt{}, false, meetingbot.ErrUnknown
	}
	api, err := s.api(ctx, user)
	if err != nil {
		return meetingbot.Receipt{}, false, err
	}
	p, err := api.GetUserProfileContext(ctx, &slack.GetUserProfileParameters{})
	if err != nil {
		return meetingbot.Receipt{}, false, s.classify(ctx, user, "users.profile.get", err)
	}
	if ours(p.StatusText, p.StatusEmoji) && int64(p.StatusExpiration) >= r.Meeting.End.Unix() {
		return meetingbot.Receipt{Channel: StatusDestination(user), TS: strconv.FormatInt(int64(p.StatusExpiration), 10)}, true, nil
	}
	return meetingbot.Receipt{}, false, nil
}

// Edit clears the bot's own status when its meeting was cancelled or
// moved; a status the person set since is left alone.
func (s *Status) Edit(ctx context.Context, f meetingbot.Follow) error {
	user, ok := IsStatus(f.Reminder.Subscription)
	if !ok || f.Message.TS == ownStatus || f.Kind == meetingbot.EditRestored {
		return nil
	}
	api, err := s.api(ctx, user)
	if err != nil {
		return err
	}
	p, err := api.GetUserProfileContext(ctx, &slack.GetUserProfileParameters{})
	if err != nil {
		return s.classify(ctx, user, "users.profile.get", err)
	}
	if !ours(p.StatusText, p.StatusEmoji) {
		return nil
	}
	if err := s.set(ctx, api, user, "", "", 0); err != nil {
		return err
	}
	s.log.Info("status cleared: its meeting changed", "user", user, "key", f.Reminder.Key, "kind", f.Kind)
	return nil
}

// Reconsider makes userID's status what sub's calendar says at now, when
// a meeting the bot set it for was cancelled, declined, moved or cut
// short while it showed: until the end of the meetings in progress, or
// cleared when there are none. A status that is not the bot's is left
// alone. It reports what it did: "kept", "moved" or "cleared".
func (s *Status) Reconsider(ctx context.Context, sub meetingbot.Subscription, now time.Time) (string, error) {
	user, ok := IsStatus(sub)
	if !ok || s.cfg.Meetings == nil {
		return "kept", nil
	}
	ms, err := s.cfg.Meetings(ctx, sub, now.Add(-24*time.Hour), now)
	if err != nil {
		return "kept", err
	}
	var end time.Time
	var current meetingbot.Meeting
	start := now
	for _, m := range ms {
		if m.End.After(now) {
			end, start = later(end, m.End), earlier(start, m.Start)
			current = m
		}
	}
	if !end.IsZero() {
		end = s.chain(ctx, sub, start, end)
	}
	api, err := s.api(ctx, user)
	if err != nil {
		return "kept", err
	}
	p, err := api.GetUserProfileContext(ctx, &slack.GetUserProfileParameters{})
	if err != nil {
		return "kept", s.classify(ctx, user, "users.profile.get", err)
	}
	if !ours(p.StatusText, p.StatusEmoji) || int64(p.StatusExpiration) == end.Unix() {
		return "kept", nil
	}
	what, text, emoji, exp := "moved", s.text(ctx, user, current), StatusEmoji, end.Unix()
	if end.IsZero() {
		what, text, emoji, exp = "cleared", "", "", 0
	}
	if err := s.set(ctx, api, user, text, emoji, exp); err != nil {
		return "kept", err
	}
	s.log.Info("status follows its meetings", "user", user, "did", what, "until", end)
	return what, nil
}

func earlier(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// Showing reports whether e, a status subscription's ledger entry, set a
// status that may still show at now (its expiration, the receipt's TS,
// is after now).
func Showing(e meetingbot.Entry, now time.Time) bool {
	if e.Outcome != meetingbot.Sent || e.MessageTS == ownStatus {
		return false
	}
	exp, err := strconv.ParseInt(e.MessageTS, 10, 64)
	return err == nil && exp > now.Unix()
}
