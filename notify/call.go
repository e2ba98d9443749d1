package notify

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/internal/outbound"
	"github.com/meetingbot/meetingbot/internal/retry"
)

// errConfirmed ends a call whose earlier attempt turned out to have worked.
var errConfirmed = errors.New("confirmed delivered")

// permanentCodes are the error codes Slack documents for the methods the
// bot calls (chat.postMessage, chat.update, conversations.open,
// conversations.list, conversations.history, users.lookupByEmail,
// auth.test) that no retry
// cures: a token, a scope, a channel, a user or a workspace setting a
// person must fix, or a request the bot must make differently. Every other
// code, documented as passing by itself (internal_error, fatal_error,
// service_unavailable, request_timeout, team_added_to_org,
// org_login_required, message_limit_exceeded, invalid_cursor,
// update_failed, external_channel_migrating, streaming_state_conflict) or
// unknown,
// is retried within Config.Retry and then left to the next sweep: a
// reminder is never lost for good on a code nobody has explained.
var permanentCodes = map[string]bool{}

func init() {
	for _, code := range strings.Fields(`
		access_denied accesslimited account_inactive app_access_restricted
		as_user_not_supported attachment_payload_limit_exceeded block_mismatch
		cannot_dm_bot cannot_reply_to_message cant_update_message
		channel_is_limited_access channel_not_found edit_window_closed
		deprecated_endpoint ekm_access_denied enterprise_is_restricted
		invalid_arg_name invalid_array_arg invalid_auth invalid_blocks
		invalid_blocks_format invalid_charset invalid_form_data invalid_limit
		invalid_metadata_filter_keys invalid_metadata_format
		invalid_metadata_schema invalid_post_type invalid_ts_latest
		invalid_ts_oldest invalid_types invalid_user_combination is_archived
		is_bot is_inactive markdown_text_conflict message_not_found
		messages_tab_disabled
		metadata_must_be_sent_from_app metadata_too_large method_deprecated
		method_not_supported_for_channel_type missing_argument
		missing_post_type missing_scope msg_blocks_too_long msg_too_long
		no_permission no_text not_allowed_token_type not_authed
		not_enough_users not_in_channel restricted_action
		restricted_action_non_threadable_channel
		restricted_action_read_only_channel restricted_action_thread_locked
		restricted_action_thread_only_channel send_on_behalf_not_allowed
		slack_connect_canvas_sharing_blocked
		slack_connect_file_link_sharing_blocked
		slack_connect_lists_sharing_blocked team_not_found token_expired
		token_revoked too_many_attachments too_many_contact_cards
		too_many_users two_factor_setup_required unknown_method
		user_disabled user_not_found user_not_visible users_list_not_supplied
		users_not_found`) {
		permanentCodes[code] = true
	}
}

// refusedContent are the codes with which Slack refuses a message for its
// blocks or its length: the same reminder as plain text may pass.
var refusedContent = map[string]bool{
	"invalid_blocks":        true,
	"invalid_blocks_format": true,
	"msg_blocks_too_long":   true,
	"msg_too_long":          true,
}

// classify sorts an attempt's error into an outcome class, and for rate
// limits returns how long Slack asked us to wait.
func classify(err error) (class retry.Class, wait time.Duration) {
	if err == nil {
		return retry.OK, 0
	}
	var rl *slack.RateLimitedError
	if errors.As(err, &rl) {
		return retry.RateLimited, max(rl.RetryAfter, time.Second)
	}
	if errors.Is(err, outbound.ErrRedirect) {
		return retry.Permanent, 0 // SLACK_API_URL points at something that redirects elsewhere
	}
	var sc slack.StatusCodeError
	if errors.As(err, &sc) {
		switch {
		case sc.Code == http.StatusTooManyRequests:
			return retry.RateLimited, time.Second
		case sc.Code >= 500:
			return retry.ServerError, 0
		}
		return retry.Permanent, 0 // a 404 or 403 from a wrong SLACK_API_URL or a proxy
	}
	if errors.Is(err, errNoReference) {
		return retry.ServerError, 0 // Slack's answer is not what it documents
	}
	var se slack.SlackErrorResponse
	if errors.As(err, &se) {
		switch {
		case se.Err == "ratelimited" || se.Err == "rate_limited":
			return retry.RateLimited, time.Second
		case permanentCodes[se.Err]:
			return retry.Permanent, 0
		}
		return retry.ServerError, 0
	}
	return retry.Network, 0 // timeouts, refused connections, undecodable answers
}

// errNoReference is an answer of "ok" that lacks the channel or ts of the
// message: Slack may hold it, and nothing says where.
var errNoReference = errors.New("slack answered ok without the message's channel and ts")

// mayHaveLanded reports whether an attempt that failed with err may still
// have done its work: true unless Slack answered that it did not (a rate
// limit, an error code, a 4xx, a redirect) or the connection was refused
// before the request left (a failed dial).
func mayHaveLanded(err error) bool {
	var (
		rl *slack.RateLimitedError
		se slack.SlackErrorResponse
		sc slack.StatusCodeError
		op *net.OpError
	)
	switch {
	case err == nil, errors.As(err, &rl), errors.As(err, &se), errors.Is(err, outbound.ErrRedirect):
		return false
	case errors.As(err, &sc):
		return sc.Code >= 500
	case errors.As(err, &op) && op.Op == "dial":
		return false
	}
	return true // a timeout, a reset or dropped connection, an answer that does not decode, errNoReference
}

// unconfirmedError is the end of a call whose attempt may have done its
// work when no lookup could say whether it did. It matches
// meetingbot.ErrUnconfirmed and the attempt's error, never the lookup's: a
// lookup refused for good (a missing history scope) must not make the send
// look permanently failed while Slack may hold the message.
type unconfirmedError struct {
	attempt error // the failure that may hide success
	lookup  error // why no lookup could tell
}

func (e *unconfirmedError) Error() string {
	return fmt.Sprintf("%v: Slack may hold the message: %v; looking for it failed: %v", meetingbot.ErrUnconfirmed, e.attempt, e.lookup)
}

func (e *unconfirmedError) Unwrap() []error { return []error{meetingbot.ErrUnconfirmed, e.attempt} }

// policy says how call makes its attempts.
type policy struct {
	// channel, when set, paces the attempts to Config.Interval per channel.
	channel string
	// attempts bounds the attempts; Config.Retry if zero.
	attempts int
	// confirm, when set, looks for the work of an attempt that may have
	// done it (mayHaveLanded). It reports found, or an error when it
	// cannot tell.
	confirm func(context.Context) (found bool, err error)
}

// call runs one Slack API method with pacing and retries, calling Observe
// once per attempt. It returns the last error, unwrapped, so explain can
// read Slack's error code.
//
// With p.confirm set, an attempt that may have done its work (a 5xx, a
// timeout, a dropped connection, errNoReference) is never followed by
// another until confirm says cleanly that the work is not there: found, call
// returns errConfirmed; unable to tell, it returns an *unconfirmedError and
// makes no further attempt. Out of attempts after such a failure, it asks
// confirm once more; only a clean "not found" lets it return the plain error.
func (s *Slack) call(ctx context.Context, method string, p policy, fn func(context.Context) error) error {
	attempts := p.attempts
	if attempts <= 0 {
		attempts = s.cfg.Retry.Attempts()
	}
	// doubt is the failure of the last attempt when it may have done the
	// work; only a lookup that answers clears it.
	var err, doubt error
	settle := func() error {
		found, lerr := p.confirm(ctx)
		switch {
		case found:
			return errConfirmed
		case lerr != nil:
			return &unconfirmedError{attempt: doubt, lookup: lerr}
		}
		doubt = nil
		return nil
	}
	for n := 1; ; n++ {
		if err := ctx.Err(); err != nil {
			return err // nothing sent: the attempt would fail at once
		}
		if err := s.paced(ctx, method, p); err != nil {
			return err
		}
		actx, cancel := context.WithTimeout(ctx, s.cfg.CallTimeout)
		err = fn(actx)
		cancel()
		class, wait := classify(err)
		s.learn(method, class, wait)
		if s.cfg.Observe != nil {
			s.cfg.Observe(method, class)
		}
		switch class {
		case retry.OK:
			return nil
		case retry.Permanent:
			return err
		}
		if p.confirm != nil && mayHaveLanded(err) {
			doubt = err
		}
		if cerr := ctx.Err(); cerr != nil {
			if doubt != nil {
				return &unconfirmedError{attempt: doubt, lookup: cerr}
			}
			return err
		}
		if n >= attempts {
			if doubt != nil {
				if serr := settle(); serr != nil {
					return serr
				}
			}
			return err
		}
		if class == retry.RateLimited {
			if p.channel != "" {
				s.pace.hold(p.channel, s.cfg.Now().Add(wait))
			}
		} else {
			wait = s.cfg.Retry.Backoff(n)
		}
		s.log.DebugContext(ctx, "slack call retry", "call", method, "class", class, "attempt", n, "wait", wait, "err", err)
		if serr := s.cfg.Sleep(ctx, wait); serr != nil {
			if doubt != nil {
				return &unconfirmedError{attempt: doubt, lookup: serr}
			}
			return serr
		}
		if doubt != nil {
			if serr := settle(); serr != nil {
				return serr
			}
		}
	}
}

// paced waits for the turn of a call of method: its channel's pace, and
// for a post the workspace's posting budget.
func (s *Slack) paced(ctx context.Context, method string, p policy) error {
	if p.channel != "" {
		if err := s.pace.wait(ctx, p.channel, s.cfg.Now, s.cfg.Sleep); err != nil {
			return err
		}
	}
	if method == postMethod {
		return s.budget.wait(ctx, s.cfg.Now, s.cfg.Sleep)
	}
	return nil
}

// learn tells the posting budget how Slack answered a post.
func (s *Slack) learn(method string, class retry.Class, wait time.Duration) {
	if method != postMethod {
		return
	}
	switch class {
	case retry.OK:
		s.budget.accepted(s.cfg.Now())
	case retry.RateLimited:
		s.postRefusals.Add(1)
		s.budget.refused(s.cfg.Now(), wait)
	}
}

// postMethod is the method that spends the workspace's posting budget.
const postMethod = "chat.postMessage"

// pacer spaces calls to one channel at least interval apart. Callers
// waiting for one channel's next slot are served in order of urgency
// (meetingbot.Urgency: the scheduler gives a reminder's meeting start),
// then of arrival: after a pause (a replica taking over another's
// reminders, a rate limit), the reminder whose meeting starts soonest
// goes first, not the one that asked first.
type pacer struct {
	interval time.Duration
	mu       sync.Mutex
	next     map[string]time.Time        // channel -> earliest next call
	queue    map[string][]*channelWaiter // channel -> waiting callers, the next first
	seq      uint64
}

// channelWaiter is a caller waiting for its channel's next slot.
type channelWaiter struct {
	urgency time.Time // zero: the least urgent
	seq     uint64
	wake    chan struct{}
	late    bool // told its turn comes too late (the posting budget's)
}

func (w *channelWaiter) before(o *channelWaiter) bool {
	switch {
	case w.urgency.IsZero() != o.urgency.IsZero():
		return !w.urgency.IsZero()
	case !w.urgency.Equal(o.urgency):
		return w.urgency.Before(o.urgency)
	}
	return w.seq < o.seq
}

// wait takes channel's next slot, in order of urgency, sleeping until it
// comes; it fails only when ctx ends first.
func (p *pacer) wait(ctx context.Context, channel string, now func() time.Time, sleep func(context.Context, time.Duration) error) error {
	if p.interval <= 0 {
		return nil
	}
	urgency, _ := meetingbot.Urgency(ctx)
	p.mu.Lock()
	w := &channelWaiter{urgency: urgency, seq: p.seq, wake: make(chan struct{}, 1)}
	p.seq++
	q := p.queue[channel]
	i, _ := slices.BinarySearchFunc(q, w, func(o, w *channelWaiter) int {
		if o.before(w) {
			return -1
		}
		return 1
	})
	p.queue[channel] = slices.Insert(q, i, w)
	p.mu.Unlock()
	defer p.leave(channel, w)
	for {
		p.mu.Lock()
		if p.queue[channel][0] != w {
			p.mu.Unlock()
			select {
			case <-w.wake:
				continue
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		t := now()
		slot := p.next[channel]
		if !slot.After(t) {
			p.next[channel] = t.Add(p.interval)
			p.mu.Unlock()
			return nil
		}
		p.mu.Unlock()
		if err := sleep(ctx, slot.Sub(t)); err != nil {
			return err
		}
	}
}

// leave removes w from channel's queue and tells the next one it is next.
func (p *pacer) leave(channel string, w *channelWaiter) {
	p.mu.Lock()
	defer p.mu.Unlock()
	q := p.queue[channel]
	if i := slices.Index(q, w); i >= 0 {
		q = slices.Delete(q, i, i+1)
	}
	if len(q) == 0 {
		delete(p.queue, channel)
		return
	}
	p.queue[channel] = q
	select {
	case q[0].wake <- struct{}{}:
	default:
	}
}

// hold keeps channel quiet until at least until, after Slack said to wait.
func (p *pacer) hold(channel string, until time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.next[channel].Before(until) {
		p.next[channel] = until
	}
}
