package monitor

import (
	"context"
	"log/slog"
	"time"

	"golang.org/x/time/rate"

	"github.com/meetingbot/meetingbot"
)

// Timings of the destination checks.
const (
	// destinationRecheck is how often every destination is checked again:
	// a channel archived, a person gone.
	destinationRecheck = 15 * time.Minute
	// destinationRetry is the first wait before checking again a
	// destination Slack could not answer for; it doubles up to the recheck.
	destinationRetry = 30 * time.Second
	// destinationTimeout bounds one destination's check, the client's own
	// retries included.
	destinationTimeout = time.Minute
	// destinationsPerMinute bounds the checks, after a first burst of as
	// many. A check of a DM by email costs a users.lookupByEmail, which
	// Slack rates at Tier 3 ("50+ per minute"): at this pace a company's
	// thousands of destinations are checked as fast as Slack accepts,
	// leaving room for a first reminder's own lookup, rather than in bursts
	// Slack answers with 429s (3,000 every 15 minutes would be 200 a
	// minute). Up to 600 destinations, each is still checked every 15
	// minutes; past that, a round takes a minute per 40.
	destinationsPerMinute = 40
)

// DestinationCheck looks up every subscription's Slack destination at
// start-up and again every recheck, so that a channel that does not exist
// or an email that is not in Slack shows at once, not when its first
// reminder falls due and is lost. A destination Slack refuses for good is
// logged once at ERROR with the fix and reported (on /healthz); the bot
// goes on, for a person leaving the company must not stop everyone's
// reminders. A check Slack could not answer is retried sooner, with
// backoff. It runs beside the scheduler and changes nothing it does.
type DestinationCheck struct {
	subs    []meetingbot.Subscription
	resolve func(context.Context, meetingbot.Subscription) error
	report  func(meetingbot.Subscription, error)
	log     *slog.Logger
	// recheck, retry and timeout are the timings above; tests shorten them.
	recheck, retry, timeout time.Duration
	// pace spaces the checks (destinationsPerMinute).
	pace *rate.Limiter
	// last holds, per subscription, the failure last logged, so that each
	// is logged once.
	last map[string]string
}

// NewDestinationCheck returns the check of subs' destinations, each looked
// up with resolve and its outcome told to report (Monitor.Destination).
func NewDestinationCheck(subs []meetingbot.Subscription, resolve func(context.Context, meetingbot.Subscription) error,
	report func(meetingbot.Subscription, error), log *slog.Logger) *DestinationCheck {
	return &DestinationCheck{
		subs: subs, resolve: resolve, report: report, log: log,
		recheck: destinationRecheck, retry: destinationRetry, timeout: destinationTimeout,
		pace: rate.NewLimiter(rate.Every(time.Minute/destinationsPerMinute), destinationsPerMinute),
		last: map[string]string{},
	}
}

// Run checks every destination at once, then retries the ones Slack could
// not answer for and checks them all again every recheck, until ctx ends.
func (c *DestinationCheck) Run(ctx context.Context) {
	backoff := c.retry
	pending := c.subs
	next := time.Now().Add(c.recheck) // the next check of every destination
	for {
		failed := c.check(ctx, pending)
		wait := time.Until(next)
		if len(failed) > 0 && backoff < wait {
			wait = backoff
			backoff = min(2*backoff, c.recheck)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		if pending = failed; !time.Now().Before(next) {
			pending, backoff, next = c.subs, c.retry, time.Now().Add(c.recheck)
		}
	}
}

// Check looks sub's destination up at the checks' pace, as Run does, and
// returns what Slack said; ctx's error when it ends first. bot doctor
// checks with it.
func (c *DestinationCheck) Check(ctx context.Context, sub meetingbot.Subscription) error {
	if err := c.pace.Wait(ctx); err != nil {
		return err
	}
	cctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	return c.resolve(cctx, sub)
}

// check checks subs in turn and returns those Slack could not answer for.
// A check cut short by ctx ending is neither logged nor reported.
func (c *DestinationCheck) check(ctx context.Context, subs []meetingbot.Subscription) []meetingbot.Subscription {
	var failed []meetingbot.Subscription
	for _, sub := range subs {
		if c.pace.Wait(ctx) != nil {
			return nil // stopping
		}
		cctx, cancel := context.WithTimeout(ctx, c.timeout)
		err := c.resolve(cctx, sub)
		cancel()
		if ctx.Err() != nil {
			return nil // stopping
		}
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		last := c.last[sub.ID]
		c.last[sub.ID] = msg
		log := c.log.With("subscription", sub.ID, "destination", DestinationName(sub))
		switch {
		case err == nil && last != "":
			log.Info("destination reachable again")
		case err == nil:
			log.Debug("destination reachable")
		case meetingbot.IsPermanent(err):
			if msg != last {
				log.Error("destination needs attention; its reminders fail until it is fixed", "err", err)
			}
		default:
			failed = append(failed, sub)
			if msg != last {
				log.Warn("destination not checked: Slack did not answer; retrying", "err", err)
			}
		}
		c.report(sub, err)
	}
	return failed
}

// destinationName is where sub's reminders go, for people.
func DestinationName(sub meetingbot.Subscription) string {
	if sub.Destination != "" {
		return sub.Destination
	}
	return "DM to " + sub.CalendarID
}
