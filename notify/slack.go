// Package notify delivers meeting reminders to Slack. Slack implements
// scheduler.Notifier on github.com/slack-go/slack: it resolves a
// subscription's destination (channel ID, #name, user ID or email) to a
// conversation, posts the reminder with Block Kit, a plain text fallback and
// message metadata that names the reminder's key, paces posts to one a
// second per channel, retries rate limits, 5xx and timeouts, and explains the
// errors an operator must fix. The metadata lets Delivered find a reminder
// again after a crash and lets Reminders list them for an audit. Edit
// rewrites a reminder already sent whose meeting moved or was cancelled
// (chat.update), under the same rules for event text and Slack's limits.
// NotifyAgenda DMs a person's daily agenda (AgendaMessage) the same way,
// found again by Delivered and listed by Agendas; Profile reads the
// person's email and zone.
package notify

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/slack-go/slack"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/internal/outbound"
	"github.com/meetingbot/meetingbot/internal/retry"
)

// DefaultAPIURL is the Slack Web API base URL.
const DefaultAPIURL = "https://slack.com/api/"

// Config configures a Slack notifier. Only Token is required; zero values
// take the defaults documented on each field.
type Config struct {
	// Token is the bot token (xoxb-…), from SLACK_BOT_TOKEN. It is never logged.
	Token string
	// APIURL is the Web API base URL, from SLACK_API_URL; DefaultAPIURL if empty.
	APIURL string
	// HTTPClient makes the requests; http.DefaultClient if nil. Either is
	// used through outbound.Client: no redirect to another host, no answer
	// over outbound.MaxResponse.
	HTTPClient *http.Client
	// Logger receives retries and deliveries at debug level; discarded if nil.
	Logger *slog.Logger
	// JoinHosts are hosts whose https links become a reminder's Join button,
	// beside Google Meet, Zoom, Microsoft Teams and Webex (JOIN_URL_HOSTS).
	// A host covers its subdomains.
	JoinHosts []string
	// Observe, if set, is called once per Slack API attempt with the method
	// ("chat.postMessage", …) and the outcome class.
	Observe func(call string, class retry.Class)

	// Now is the clock; time.Now if nil.
	Now func() time.Time
	// Sleep waits d or until ctx is done, returning ctx.Err() then. Tests
	// inject one that advances a fake clock; a timer if nil.
	Sleep func(ctx context.Context, d time.Duration) error
	// PostsPerMinute is the workspace-wide posting budget every post
	// waits for, in order of its meeting's start across all destinations
	// (SLACK_POSTS_PER_MINUTE): DefaultPostsPerMinute if zero, no
	// workspace pacing if negative. Slack's 429s lower it while they last.
	PostsPerMinute int
	// Interval is the least time between two posts to one channel, Slack's
	// documented pace for chat.postMessage; 1s if zero, none if negative.
	Interval time.Duration
	// Retry bounds the attempts of one API call and the waits after a 5xx
	// or network error; the zero Policy takes retry's defaults (5
	// attempts, 1s to 30s). Rate limits wait as long as Slack asks.
	Retry retry.Policy
	// CallTimeout bounds one attempt; 15s if zero.
	CallTimeout time.Duration
	// HistoryPages bounds the conversations.history pages Delivered reads
	// (200 messages each); 10 if zero.
	HistoryPages int
	// Snooze puts the snooze buttons ("Remind me at start", "In 5 min")
	// on reminders: on when something answers their clicks (self-service
	// with snoozes wired).
	Snooze bool
}

// Slack posts reminders to Slack. It is safe for concurrent use.
type Slack struct {
	api  *slack.Client
	cfg  Config
	log  *slog.Logger
	pace *pacer
	// budget paces the posts of the whole workspace, nil when off;
	// postRefusals counts the 429s posts met, with or without it.
	budget       *budget
	postRefusals atomic.Int64
	cache        sync.Map // destination as configured -> target
	mu           sync.Mutex
	names        names                   // channels by name, see names.go
	self         *slack.AuthTestResponse // the bot, from auth.test
	// closed is closed by Close, which ends the work s started on its
	// own (a listing of the channels outlives its first caller) and waits
	// for it: detached counts it.
	closed   chan struct{}
	isClosed bool // guarded by mu
	detached sync.WaitGroup
	// canAnswer, set by AnswerFor, reports whether a calendar's owner
	// can answer its invitations from Slack; nil: nobody can.
	canAnswer func(ctx context.Context, calendarID string) bool
}

// New returns a Slack notifier for cfg. It makes no call; use Check to test
// the token at start-up.
func New(cfg Config) *Slack {
	if cfg.APIURL == "" {
		cfg.APIURL = DefaultAPIURL
	}
	cfg.HTTPClient = outbound.Client(cfg.HTTPClient)
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Sleep == nil {
		cfg.Sleep = retry.Sleep
	}
	if cfg.Interval == 0 {
		cfg.Interval = time.Second
	}
	if cfg.CallTimeout <= 0 {
		cfg.CallTimeout = 15 * time.Second
	}
	if cfg.HistoryPages <= 0 {
		cfg.HistoryPages = 10
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Slack{
		api:    slack.New(cfg.Token, slack.OptionAPIURL(cfg.APIURL), slack.OptionHTTPClient(cfg.HTTPClient)),
		cfg:    cfg,
		log:    log,
		budget: newBudget(cfg.PostsPerMinute),
		pace:   &pacer{interval: cfg.Interval, next: map[string]time.Time{}, queue: map[string][]*channelWaiter{}},
		names:  names{byName: map[string]string{}, page: make(chan struct{})},
		closed: make(chan struct{}),
	}
}

// Close ends the work s started on its own, a listing of the channels
// that outlived its first caller, and waits for it: what the listing had
// received is kept in the store first. The bot calls it before it closes
// the store. Calling it again does nothing.
func (s *Slack) Close() {
	s.mu.Lock()
	if !s.isClosed {
		s.isClosed = true
		close(s.closed)
	}
	s.mu.Unlock()
	s.detached.Wait()
}

// errClosed is the error of work asked of s once it is closed.
var errClosed = errors.New("notify: closed")

// detach returns a context for work s does on its own, beyond the caller
// of ctx: it keeps ctx's values, ends after timeout or at Close, and
// counts until cancel is called. ok is false once s is closed.
func (s *Slack) detach(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.isClosed {
		return nil, nil, false
	}
	s.detached.Add(1)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	go func() {
		select {
		case <-s.closed:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, func() {
		cancel()
		s.detached.Done()
	}, true
}

// Check calls auth.test to make sure the token works. A rejected token gives
// one error that starts with what to do ("SLACK_BOT_TOKEN was rejected by
// Slack (invalid_auth): copy the Bot User OAuth Token…"), for the one line
// start-up prints; it is permanent (meetingbot.IsPermanent). Other errors
// start with "auth.test".
func (s *Slack) Check(ctx context.Context) error {
	_, err := s.identity(ctx, 0)
	return err // explained already: a prefix would push the fix aside
}

// identity returns the bot's own IDs, asking auth.test once (in up to
// attempts attempts; 0: Config.Retry).
func (s *Slack) identity(ctx context.Context, attempts int) (*slack.AuthTestResponse, error) {
	s.mu.Lock()
	self := s.self
	s.mu.Unlock()
	if self != nil {
		return self, nil
	}
	err := s.call(ctx, "auth.test", policy{attempts: attempts}, func(ctx context.Context) error {
		var err error
		self, err = s.api.AuthTestContext(ctx)
		return err
	})
	if err != nil {
		return nil, s.explain("auth.test", destination{}, err)
	}
	s.mu.Lock()
	s.self = self
	s.mu.Unlock()
	return self, nil
}

// Notify posts r to its subscription's destination and returns the channel
// and ts of the message. It waits out rate limits and paces posts per
// channel; 5xx and network errors are retried with backoff.
//
// A post is never made again while an earlier one may have landed: after a
// 5xx, a timeout, a dropped connection or an "ok" without channel and ts,
// Notify looks for the message in the channel's history first, and posts
// again only when the lookup answers that it is not there. When the lookup
// cannot answer (it fails, the deadline passes, or attempts run out), the
// error wraps meetingbot.ErrUnconfirmed: Slack may hold the message, and the
// caller must ask Delivered before sending it again. Failures that prove
// nothing was posted (a rate limit, a Slack error code, a refused
// connection) are never unconfirmed.
//
// When Slack refuses the message for its blocks or its length
// (invalid_blocks, msg_too_long and the like), Notify posts it once more as
// one line of text (the title, when, the join link), which still carries
// the metadata Delivered looks for.
//
// Errors name the subscription; errors an operator must fix (bad token,
// missing scope, bot not in channel, unknown user: every code Slack
// documents as such) are permanent (meetingbot.IsPermanent) and say the
// fix. Any other Slack error code, known to pass or unknown, is retried
// within Config.Retry and then returned as transient.
func (s *Slack) Notify(ctx context.Context, r meetingbot.Reminder) (meetingbot.Receipt, error) {
	dest, err := s.resolve(ctx, r.Subscription)
	if err != nil {
		return meetingbot.Receipt{}, fmt.Errorf("notify: subscription %q: %w", r.Subscription.ID, err)
	}
	text, blocks := Message(r, s.cfg.Now(), s.cfg.JoinHosts...)
	blocks = s.answerable(ctx, r.Subscription.CalendarID, s.snoozable(blocks))
	receipt, err := s.post(ctx, dest, r, metadata(r), slack.MsgOptionText(text, false), slack.MsgOptionBlocks(blocks...))
	var se slack.SlackErrorResponse
	if errors.As(err, &se) && refusedContent[se.Err] && !errors.Is(err, meetingbot.ErrUnconfirmed) {
		// Slack refused the post itself, so nothing of it landed: send the
		// reminder once more, as text alone, rather than lose it.
		s.log.DebugContext(ctx, "blocks refused; posting the reminder as text", "subscription", r.Subscription.ID, "key", r.Key, "err", err)
		receipt, err = s.post(ctx, dest, r, metadata(r), slack.MsgOptionText(plainText(r, s.cfg.Now(), s.cfg.JoinHosts), false))
	}
	if err != nil {
		s.forgetStaleName(ctx, dest, err)
		return meetingbot.Receipt{}, fmt.Errorf("notify: subscription %q: %w", r.Subscription.ID, s.explain("chat.postMessage", dest, err))
	}
	s.log.DebugContext(ctx, "reminder posted", "subscription", r.Subscription.ID, "key", r.Key, "channel", receipt.Channel, "ts", receipt.TS)
	return receipt, nil
}

// post makes the chat.postMessage call of Notify with content, the
// metadata md and no unfurling, and returns the message's receipt or the
// call's error, unexplained. r is the reminder (of those md lists) that a
// look before posting again searches for.
func (s *Slack) post(ctx context.Context, dest destination, r meetingbot.Reminder, md slack.SlackMetadata, content ...slack.MsgOption) (meetingbot.Receipt, error) {
	opts := append(content,
		slack.MsgOptionMetadata(md),
		slack.MsgOptionDisableLinkUnfurl(),
		slack.MsgOptionDisableMediaUnfurl(),
	)
	var receipt meetingbot.Receipt
	// confirm runs before any post that follows one Slack may have
	// accepted: a lost answer must not become a second reminder. It makes
	// one attempt per call: Slack failing the lookup too is better answered
	// by the scheduler's later lookup than by retries nested in retries,
	// which would outlast the send's deadline.
	confirm := func(ctx context.Context) (bool, error) {
		rc, found, err := s.find(ctx, dest, r, 1)
		if err != nil {
			s.log.DebugContext(ctx, "slack lookup before retry failed", "subscription", r.Subscription.ID, "key", r.Key, "err", err)
			return false, err
		}
		if found {
			receipt = rc
		}
		return found, nil
	}
	err := s.call(ctx, "chat.postMessage", policy{channel: dest.channel, confirm: confirm}, func(ctx context.Context) error {
		ch, ts, err := s.api.PostMessageContext(ctx, dest.channel, opts...)
		switch {
		case err != nil:
			return err
		case ch == "" || ts == "":
			return errNoReference
		}
		receipt = meetingbot.Receipt{Channel: ch, TS: ts}
		return nil
	})
	if errors.Is(err, errConfirmed) {
		err = nil
	}
	return receipt, err
}
