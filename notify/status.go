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
	"sync"
	"time"

	"github.com/slack-go/slack"
	"golang.org/x/time/rate"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/internal/outbound"
	"github.com/meetingbot/meetingbot/internal/retry"
)

// People's Slack status during their meetings (docs/design.md, "Slack
// status during meetings"), set with each person's own user token (a bot
// token cannot: users.profile.set takes a user token with
// users.profile:write). A status is one more kind of reminder: a
// subscription per person whose destination is
// meetingbot.StatusDestination(user),
// offset 0, so that it goes through the scheduler's timers, claims and
// ledger, exactly once through crashes and replicas, and at most
// meetingbot.StartGrace late.

// The statuses the bot sets: during a meeting, and during an
// out-of-office event for a person who turned that on.
const (
	StatusEmoji      = ":spiral_calendar_pad:"
	StatusText       = "In a meeting"
	OutOfOfficeEmoji = ":palm_tree:"
	OutOfOfficeText  = "Out of office"
)

// StatusUser reports whether sub is a status subscription (its Kind says
// so), and whose: the user its destination, StatusDestination(user), names.
func StatusUser(sub meetingbot.Subscription) (userID string, ok bool) {
	if sub.Kind != meetingbot.KindStatus {
		return "", false
	}
	return strings.TrimPrefix(sub.Destination, meetingbot.StatusDestination("")), true
}

// ownStatus is the receipt of a status left alone: the person had set one
// themselves, which the bot never replaces.
const ownStatus = "own-status-kept"

// recordedSpan is how far back the ledger is read for the statuses the
// bot set that may still show.
const recordedSpan = 24 * time.Hour

// StatusLedger reads back the ledger's entries of a status subscription
// (sqlite.Store and postgres.Store provide it).
type StatusLedger interface {
	Range(ctx context.Context, subscription string, from, to time.Time) ([]meetingbot.Entry, error)
	// Claim and Record write the entry of a status moved to follow its
	// meetings (Keep).
	Claim(ctx context.Context, e meetingbot.Entry, now, leaseUntil time.Time) (meetingbot.ClaimStatus, meetingbot.Entry, error)
	Record(ctx context.Context, e meetingbot.Entry, now time.Time) error
}

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
	// Ledger, when set, says which statuses the bot set (the expiration
	// of each, its receipt): a status is the bot's only when its emoji and
	// text are the bot's and its expiration is one the bot set or would
	// set now (a meeting's end). Slack's own "In a meeting" preset has the
	// bot's emoji and text, so without its expiration a status the person
	// set themselves would be taken for the bot's, replaced and cleared.
	Ledger StatusLedger
	// Revoked is told that Slack refused userID's token (token_revoked,
	// invalid_auth): their connection stops.
	Revoked func(ctx context.Context, userID string, err error)
	// Renew is told that Slack answered token_expired for the token Token
	// gave (with token rotation an access token lasts 12 hours, "Using
	// token rotation"): the next Token is a refreshed one. The call is
	// made once more with it; nil: an expired token counts as refused.
	Renew func(ctx context.Context, userID string)
	// PerMinute paces users.profile.set, a Tier 3 method ("50+ per
	// minute", per app and workspace, https://docs.slack.dev/apis/web-api/rate-limits):
	// a company's 09:00 starts go out at that pace rather than in a burst
	// answered 429. At most PerMinute calls in any minute: a few at once
	// (statusBurst; a few people whose meetings start together, one of
	// whom may need no call at all, are not a second apart), the others
	// evenly.
	// DefaultStatusPerMinute by default. The pace is this process's:
	// several replicas each keep it.
	PerMinute int
	// Now and Sleep are the clock; time.Now and a real wait by default.
	// Sleep waits d or until ctx is done, returning ctx.Err() then.
	Now        func() time.Time
	Sleep      func(ctx context.Context, d time.Duration) error
	HTTPClient *http.Client
	Logger     *slog.Logger
}

// DefaultStatusPerMinute is Tier 3's pace.
const DefaultStatusPerMinute = 50

// statusBurst is how many users.profile.set calls may go at once, out of
// PerMinute.
const statusBurst = 5

// Status sets and clears people's status; it provides the scheduler's
// Notifier, Pacer and Editor for status subscriptions.
type Status struct {
	cfg  StatusConfig
	http *http.Client
	log  *slog.Logger
	pace *rate.Limiter

	mu sync.Mutex
	// turns are the reminders whose users.profile.set Pace waited for
	// already, by subscription and key, and when: a turn not used within
	// pacedFor (the send stopped) is forgotten.
	turns map[string]time.Time
	// kept is, by subscription, what the last Reconsider of Keep found of
	// the status an entry set, so that a status Slack shows as the
	// calendar says, or that is not the bot's, is not read again at every
	// Keep.
	kept map[string]keptStatus
}

// pacedFor is how long a turn Pace waited for is kept for its send.
const pacedFor = 2 * time.Minute

// NewStatus returns a Status.
func NewStatus(cfg StatusConfig) *Status {
	n := cmp.Or(max(cfg.PerMinute, 0), DefaultStatusPerMinute)
	// A bucket of burst turns refilled at n-burst a minute allows at most
	// n in any minute.
	burst := min(max(n/10, 1), statusBurst)
	every := rate.Limit(float64(max(n-burst, 1)) / 60)
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Sleep == nil {
		cfg.Sleep = retry.Sleep
	}
	return &Status{
		cfg:   cfg,
		http:  outbound.Client(cmp.Or(cfg.HTTPClient, &http.Client{Timeout: 30 * time.Second})),
		log:   cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler)),
		pace:  rate.NewLimiter(every, burst),
		turns: map[string]time.Time{},
		kept:  map[string]keptStatus{},
	}
}

// Pace waits for r's turn at users.profile.set's pace, before the
// scheduler takes a send slot for it: a company's 09:00 statuses queue
// here, not in the slots the 09:00 reminders need. A turn that comes more
// than meetingbot.StartGrace after r's meeting's start is not waited for:
// the error matches meetingbot.ErrPastGrace, and the status is skipped.
func (s *Status) Pace(ctx context.Context, r meetingbot.Reminder) error {
	now := s.cfg.Now()
	last := r.Meeting.Start.Add(meetingbot.StartGrace)
	res := s.pace.ReserveN(now, 1)
	at := now.Add(res.DelayFrom(now))
	if !res.OK() || at.After(last) {
		res.CancelAt(now)
		return fmt.Errorf("status of %s: users.profile.set's pace (%d a minute) has a turn for it at %s, past %s, a minute after its meeting's start: %w",
			r.Subscription.ID, cmp.Or(max(s.cfg.PerMinute, 0), DefaultStatusPerMinute), at.UTC().Format(time.TimeOnly), last.UTC().Format(time.TimeOnly), meetingbot.ErrPastGrace)
	}
	if err := s.cfg.Sleep(ctx, at.Sub(now)); err != nil {
		res.CancelAt(s.cfg.Now())
		return err
	}
	now = s.cfg.Now()
	s.mu.Lock()
	for k, at := range s.turns {
		if now.Sub(at) > pacedFor {
			delete(s.turns, k)
		}
	}
	s.turns[r.Subscription.ID+"|"+r.Key] = now
	s.mu.Unlock()
	return nil
}

// paced reports whether Pace waited for the turn of one of rs, and
// forgets it: the turn is used once.
func (s *Status) paced(rs []meetingbot.Reminder) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	found := false
	for _, r := range rs {
		k := r.Subscription.ID + "|" + r.Key
		if _, ok := s.turns[k]; ok {
			found = true
			delete(s.turns, k)
		}
	}
	return found
}

// turn waits for a turn at the pace.
func (s *Status) turn(ctx context.Context) error {
	now := s.cfg.Now()
	res := s.pace.ReserveN(now, 1)
	if !res.OK() {
		return errors.New("users.profile.set's pace allows no call")
	}
	if err := s.cfg.Sleep(ctx, res.DelayFrom(now)); err != nil {
		res.CancelAt(s.cfg.Now())
		return err
	}
	return nil
}

// set calls users.profile.set at the pace (the turn Pace waited for
// already, when paced), once more after a 429's Retry-After when ctx
// allows it.
func (s *Status) set(ctx context.Context, user string, paced bool, st slackStatus) error {
	for attempt := 1; ; attempt++ {
		if !paced || attempt > 1 { // a retry waits for a turn of its own
			if err := s.turn(ctx); err != nil {
				return fmt.Errorf("status of %s: waiting for users.profile.set's pace: %w", user, err)
			}
		}
		fromSlack, err := s.do(ctx, user, func(api *slack.Client) error {
			return api.SetUserCustomStatusContext(ctx, st.text, st.emoji, st.exp())
		})
		var rl *slack.RateLimitedError
		switch {
		case err != nil && !fromSlack:
			return err // the token's
		case !errors.As(err, &rl) || attempt == 2:
			if err != nil {
				return s.classify(ctx, user, "users.profile.set", err)
			}
			return nil
		}
		s.log.Warn("users.profile.set rate limited; waiting as Slack asks", "user", user, "retry_after", rl.RetryAfter)
		if err := s.cfg.Sleep(ctx, rl.RetryAfter); err != nil {
			return fmt.Errorf("status of %s: users.profile.set rate limited: %w", user, err)
		}
	}
}

// do runs fn with a client acting as userID. When Slack answers
// token_expired, the token is renewed (Renew) and fn runs once more with
// the refreshed one. Its error is fn's (fromSlack: Slack's answer, for
// classify), or the token's.
func (s *Status) do(ctx context.Context, userID string, fn func(api *slack.Client) error) (fromSlack bool, err error) {
	api, err := s.api(ctx, userID)
	if err != nil {
		return false, err
	}
	err = fn(api)
	var se slack.SlackErrorResponse
	if !errors.As(err, &se) || se.Err != "token_expired" || s.cfg.Renew == nil {
		return err != nil, err
	}
	s.log.Info("Slack said a person's token expired; renewing it", "user", userID)
	s.cfg.Renew(ctx, userID)
	if api, err = s.api(ctx, userID); err != nil {
		return false, err
	}
	err = fn(api)
	return err != nil, err
}

// profile reads userID's profile (users.profile.get). A failure of
// Slack's is worded by classify; one of the token's is returned as it is.
func (s *Status) profile(ctx context.Context, userID string) (*slack.UserProfile, error) {
	var p *slack.UserProfile
	fromSlack, err := s.do(ctx, userID, func(api *slack.Client) error {
		var err error
		p, err = api.GetUserProfileContext(ctx, &slack.GetUserProfileParameters{})
		return err
	})
	if fromSlack {
		return nil, s.classify(ctx, userID, "users.profile.get", err)
	}
	return p, err
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

// slackStatus is a status as Slack shows it: text, emoji, and the instant Slack
// clears it (zero: never, or no status).
type slackStatus struct {
	text, emoji string
	until       time.Time
}

func (st slackStatus) exp() int64 {
	if st.until.IsZero() {
		return 0
	}
	return st.until.Unix()
}

func profileStatus(p *slack.UserProfile) slackStatus {
	st := slackStatus{text: p.StatusText, emoji: p.StatusEmoji}
	if p.StatusExpiration > 0 {
		st.until = time.Unix(int64(p.StatusExpiration), 0)
	}
	return st
}

func (st slackStatus) empty() bool { return st.text == "" && st.emoji == "" }

// titles reports whether userID chose to show their meetings' titles.
func (s *Status) titles(ctx context.Context, userID string) bool {
	return s.cfg.Titles != nil && s.cfg.Titles(ctx, userID)
}

// recorded returns the expirations, as Unix seconds, of the statuses the
// ledger says the bot set for sub and that may still show at now.
func (s *Status) recorded(ctx context.Context, sub meetingbot.Subscription, now time.Time) map[int64]bool {
	if s.cfg.Ledger == nil {
		return nil
	}
	es, err := s.cfg.Ledger.Range(ctx, sub.ID, now.Add(-recordedSpan), now.Add(time.Second))
	if err != nil {
		s.log.Warn("cannot read the statuses the bot set; a status is taken for the bot's only if it ends with a meeting", "subscription", sub.ID, "err", err)
		return nil
	}
	out := map[int64]bool{}
	for _, e := range es {
		if exp, ok := expiration(e); ok {
			out[exp] = true
		}
	}
	return out
}

// expiration returns the expiration the bot set with e, a status
// subscription's entry, and whether it set one.
func expiration(e meetingbot.Entry) (int64, bool) {
	if e.Outcome != meetingbot.Sent || e.MessageTS == ownStatus {
		return 0, false
	}
	exp, err := strconv.ParseInt(e.MessageTS, 10, 64)
	return exp, err == nil && exp > 0
}

// ours reports whether st, userID's status, is one the bot set: its emoji
// and text are the bot's (a meeting's title with titles on), and its
// expiration is one the ledger recorded or one of ends (what the bot sets
// now: a status set before a crash kept the ledger from recording it).
// Slack's own "In a meeting" preset has the bot's emoji and text; a person
// who chose it set their own expiration, or none.
func (s *Status) ours(ctx context.Context, userID string, sub meetingbot.Subscription, st slackStatus, now time.Time, ends ...time.Time) bool {
	switch {
	case st.until.IsZero():
		return false
	case st.emoji == StatusEmoji && (st.text == StatusText || s.titles(ctx, userID)):
	case st.emoji == OutOfOfficeEmoji && st.text == OutOfOfficeText:
	default:
		return false
	}
	for _, e := range ends {
		if !e.IsZero() && e.Unix() == st.until.Unix() {
			return true
		}
	}
	return s.recorded(ctx, sub, now)[st.until.Unix()]
}

// text is the status shown for m: its title when userID chose titles and
// m is not private, else StatusText. Slack keeps at most 100 characters.
func (s *Status) text(ctx context.Context, userID string, m meetingbot.Meeting) string {
	if m.Private || m.Title == "" || !s.titles(ctx, userID) {
		return StatusText
	}
	// Cleaned as a reminder's title is (clean): one line, no control or
	// invisible character, nothing reversed by a bidi override; within
	// Slack's 100 characters of status_text.
	r := clean(m.Title)
	if len(r) == 0 {
		return StatusText
	}
	if len(r) > 100 {
		return string(r[:99]) + "…"
	}
	return string(r)
}

// Notify sets the person's status for r's meeting, until the end of the
// meetings that follow on from it without a gap (back-to-back or
// overlapping: the latest end wins, and Slack clears it then, even with
// the bot down). A status the person set themselves is left alone; the
// receipt says so.
func (s *Status) Notify(ctx context.Context, r meetingbot.Reminder) (meetingbot.Receipt, error) {
	return s.NotifyDigest(ctx, []meetingbot.Reminder{r})
}

// NotifyDigest sets one status for meetings starting at one instant: "In a
// meeting" for the meetings among them, else "Out of office" until the
// end of the out-of-office event.
func (s *Status) NotifyDigest(ctx context.Context, rs []meetingbot.Reminder) (meetingbot.Receipt, error) {
	user, ok := StatusUser(rs[0].Subscription)
	if !ok {
		return meetingbot.Receipt{}, meetingbot.Permanent(fmt.Errorf("status: subscription %s is not a status", rs[0].Subscription.ID))
	}
	paced := s.paced(rs) // used or not, the turn is this send's
	r, want, ends := s.wanted(ctx, user, rs)
	p, err := s.profile(ctx, user)
	if err != nil {
		return meetingbot.Receipt{}, err
	}
	receipt := meetingbot.Receipt{Channel: meetingbot.StatusDestination(user)}
	if current := profileStatus(p); !current.empty() {
		if !s.ours(ctx, user, r.Subscription, current, s.cfg.Now(), ends...) {
			s.log.Info("status left alone: the person set their own", "user", user, "key", r.Key)
			receipt.TS = ownStatus
			return receipt, nil
		}
		if !current.until.Before(want.until) {
			// Set already until then (a back-to-back meeting before this
			// one, or an out-of-office event around it): nothing to
			// change, no flicker.
			receipt.TS = strconv.FormatInt(current.until.Unix(), 10)
			return receipt, nil
		}
	}
	if err := s.set(ctx, user, paced, want); err != nil {
		return meetingbot.Receipt{}, err
	}
	receipt.TS = strconv.FormatInt(want.until.Unix(), 10)
	s.log.Debug("status set", "user", user, "key", r.Key, "status", want.text, "until", want.until)
	return receipt, nil
}

// wanted returns the status rs call for, the reminder it is set for, and
// the expirations the bot would set for rs (what ours accepts): for their
// meetings, until the end of those that follow on without a gap; for
// out-of-office events alone, until the latest one's end.
func (s *Status) wanted(ctx context.Context, user string, rs []meetingbot.Reminder) (meetingbot.Reminder, slackStatus, []time.Time) {
	var meetings, away []meetingbot.Reminder
	var ends []time.Time
	for _, r := range rs {
		ends = append(ends, r.Meeting.End)
		if r.Meeting.OutOfOffice {
			away = append(away, r)
		} else {
			meetings = append(meetings, r)
		}
	}
	if len(meetings) == 0 {
		r := away[0]
		want := slackStatus{text: OutOfOfficeText, emoji: OutOfOfficeEmoji, until: r.Meeting.End}
		for _, o := range away[1:] {
			want.until = later(want.until, o.Meeting.End)
		}
		return r, want, ends
	}
	r := meetings[0]
	end := r.Meeting.End
	for _, o := range meetings[1:] {
		end = later(end, o.Meeting.End)
	}
	end = s.chain(ctx, r.Subscription, r.Meeting.Start, end)
	return r, slackStatus{text: s.text(ctx, user, r.Meeting), emoji: StatusEmoji, until: end}, append(ends, end)
}

// chain extends end over the meetings that start before it and end after
// it, so that back-to-back and overlapping meetings show one status.
// Out-of-office events do not carry "In a meeting" on.
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
			if !m.OutOfOffice {
				next = later(next, m.End)
			}
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
	user, ok := StatusUser(r.Subscription)
	if !ok {
		return meetingbot.Receipt{}, false, meetingbot.ErrUnknown
	}
	_, want, ends := s.wanted(ctx, user, []meetingbot.Reminder{r})
	p, err := s.profile(ctx, user)
	if err != nil {
		return meetingbot.Receipt{}, false, err
	}
	current := profileStatus(p)
	if current.emoji == want.emoji && s.ours(ctx, user, r.Subscription, current, s.cfg.Now(), ends...) && !current.until.Before(r.Meeting.End) {
		return meetingbot.Receipt{Channel: meetingbot.StatusDestination(user), TS: strconv.FormatInt(current.until.Unix(), 10)}, true, nil
	}
	return meetingbot.Receipt{}, false, nil
}

// Edit clears the bot's own status when its meeting was cancelled or
// moved; a status the person set since is left alone.
func (s *Status) Edit(ctx context.Context, f meetingbot.Follow) error {
	user, ok := StatusUser(f.Reminder.Subscription)
	if !ok || f.Message.TS == ownStatus || f.Kind == meetingbot.EditRestored {
		return nil
	}
	p, err := s.profile(ctx, user)
	if err != nil {
		return err
	}
	var sent time.Time
	if exp, err := strconv.ParseInt(f.Message.TS, 10, 64); err == nil {
		sent = time.Unix(exp, 0)
	}
	if !s.ours(ctx, user, f.Reminder.Subscription, profileStatus(p), s.cfg.Now(), sent) {
		return nil
	}
	if err := s.set(ctx, user, false, slackStatus{}); err != nil {
		return err
	}
	s.log.Info("status cleared: its meeting changed", "user", user, "key", f.Reminder.Key, "kind", f.Kind)
	return nil
}

// Wanted is the status sub's calendar calls for at now, from Meetings:
// what Reconsider sets. Until lists every expiration that status may
// rightly have (the end of the meetings in progress and of those that
// follow on from them; the end of each out-of-office event in progress,
// for a subscription that asks for them), the preferred first; none when
// no meeting or out-of-office event is in progress.
type Wanted struct {
	Until []time.Time
	want  slackStatus
}

// Allows reports whether a status expiring at exp is one the calendar
// calls for at the instant w was computed.
func (w Wanted) Allows(exp time.Time) bool {
	for _, u := range w.Until {
		if u.Unix() == exp.Unix() {
			return true
		}
	}
	return false
}

// Want returns the status sub's calendar calls for at now: "In a meeting"
// (or a title) until the end of the meetings in progress and those that
// follow on from them; else "Out of office" until the end of the
// out-of-office event in progress; else none. It reads the calendar
// (Meetings) and not Slack.
func (s *Status) Want(ctx context.Context, sub meetingbot.Subscription, now time.Time) (Wanted, error) {
	user, _ := StatusUser(sub)
	if s.cfg.Meetings == nil {
		return Wanted{}, errors.New("status: no calendar to read")
	}
	ms, err := s.cfg.Meetings(ctx, sub, now.Add(-recordedSpan), now)
	if err != nil {
		return Wanted{}, err
	}
	var w Wanted
	var end, awayEnd time.Time
	var current meetingbot.Meeting
	start := now
	for _, m := range ms {
		switch {
		case !m.End.After(now):
		case m.OutOfOffice:
			awayEnd = later(awayEnd, m.End)
			w.Until = append(w.Until, m.End)
		default:
			end, start = later(end, m.End), earlier(start, m.Start)
			current = m
		}
	}
	switch {
	case !end.IsZero():
		end = s.chain(ctx, sub, start, end)
		w.want = slackStatus{text: s.text(ctx, user, current), emoji: StatusEmoji, until: end}
		w.Until = append([]time.Time{end}, w.Until...)
	case !awayEnd.IsZero():
		w.want = slackStatus{text: OutOfOfficeText, emoji: OutOfOfficeEmoji, until: awayEnd}
	}
	return w, nil
}

// What Reconsider did.
const (
	// Kept: the status shown is the bot's and the calendar still calls
	// for it.
	Kept = "kept"
	// Moved: the bot's status now expires when the calendar says.
	Moved = "moved"
	// Cleared: the bot's status is gone, no meeting being in progress.
	Cleared = "cleared"
	// Left: the status shown is not the bot's; it is left alone.
	Left = "left"
)

// Reconsider makes userID's status what sub's calendar says at now (Want),
// when a meeting the bot set it for was cancelled, declined, moved, cut
// short or extended while it showed: until the end of the meetings in
// progress, or cleared when there are none. A status that is not the
// bot's is left alone. It reports what it did (Kept, Moved, Cleared or
// Left) and the expiration the status shown has now.
func (s *Status) Reconsider(ctx context.Context, sub meetingbot.Subscription, now time.Time) (string, time.Time, error) {
	user, ok := StatusUser(sub)
	if !ok {
		return Left, time.Time{}, nil
	}
	w, err := s.Want(ctx, sub, now)
	if err != nil {
		return Kept, time.Time{}, err
	}
	p, err := s.profile(ctx, user)
	if err != nil {
		return Kept, time.Time{}, err
	}
	current := profileStatus(p)
	switch {
	case !s.ours(ctx, user, sub, current, now, w.Until...):
		return Left, current.until, nil
	case w.Allows(current.until):
		return Kept, current.until, nil
	}
	what := Moved
	if w.want.until.IsZero() {
		what = Cleared
	}
	if err := s.set(ctx, user, false, w.want); err != nil {
		return Kept, current.until, err
	}
	s.log.Info("status follows its meetings", "user", user, "did", what, "status", w.want.text, "until", w.want.until)
	return what, w.want.until, nil
}

func earlier(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// Showing reports whether e, a status subscription's ledger entry, set a
// status that may still show at now (its expiration, the receipt's TS,
// is after now), and that expiration.
func Showing(e meetingbot.Entry, now time.Time) (time.Time, bool) {
	exp, ok := expiration(e)
	if !ok || exp <= now.Unix() {
		return time.Time{}, false
	}
	return time.Unix(exp, 0), true
}
