package calendar

import (
	"fmt"
	"net/http"
	"strings"

	"google.golang.org/api/googleapi"

	"github.com/meetingbot/meetingbot"
)

// Limit names which of Google's usage limits an answer says is reached.
type Limit string

// Limits.
const (
	// LimitPerMinute is a per-minute quota, of the project or of one
	// user: it frees up within a minute.
	LimitPerMinute Limit = "per_minute"
	// LimitDaily is the project's requests of the day, which Google
	// resets at midnight Pacific time.
	LimitDaily Limit = "daily"
	// LimitCalendarUsage is one of Calendar's own limits on a user
	// ("Calendar usage limits exceeded"), which replenish over hours.
	LimitCalendarUsage Limit = "calendar_usage"
)

// QuotaChange is a Calendar budget the client lowered after Google
// answered a usage limit, or grew back (see quota.go).
type QuotaChange struct {
	// Scope is "project" or "user"; Principal names the user ("" for the
	// project).
	Scope, Principal string
	// PerMinute is the budget's pace now, Configured its quota's.
	PerMinute, Configured int
	// Limit is what Google's answer said was reached, for a budget
	// lowered; "" for one grown back. Reason is that answer's reason code
	// ("rateLimitExceeded", "dailyLimitExceeded", …).
	Limit  Limit
	Reason string
}

// usageLimit is what one usageLimits answer says ran out, and whose.
type usageLimit struct {
	limit Limit
	// scope is "project" or "user", or "" when the answer does not say
	// (a plain "Rate Limit Exceeded"): see quota.limited.
	scope  string
	reason string
}

// lasting reports whether the limit lasts longer than a retry's backoff:
// the day's, or Calendar's own.
func (l usageLimit) lasting() bool { return l.limit != LimitPerMinute }

// usageLimitOf reads a refusal of Google's as a usage limit, when it is
// one. Google's "Handle API errors" guide
// (https://developers.google.com/workspace/calendar/api/guides/errors)
// lists these answers of the domain usageLimits, and the quota page says
// that "when we want you to slow down your rate of requests, we will
// return a 403 usageLimits response or a 429 response"
// (https://developers.google.com/workspace/calendar/api/guides/quota):
//
//   - 403 userRateLimitExceeded, "User Rate Limit Exceeded": "One of the
//     limits from the Developer Console has been reached" (earlier: "The
//     per-user limit from the Developer Console has been reached"); raise
//     the per-user quota, or read each calendar as its owner with
//     domain-wide delegation, and use exponential backoff. A user's
//     per-minute quota.
//   - 403 rateLimitExceeded, "Rate Limit Exceeded": "The user has reached
//     Google Calendar API's maximum request rate per calendar or per
//     authenticated user"; use exponential backoff. Per minute, and the
//     user's unless its message names another quota (below).
//   - 429 rateLimitExceeded, "Too many requests": "A rateLimitExceeded
//     error occurs when the user has sent too many requests in a given
//     amount of time"; use exponential backoff. The same.
//   - 403 quotaExceeded, "Calendar usage limits exceeded": "The user
//     reached one of the Google Calendar limits in place to protect Google
//     users and infrastructure from abusive behavior". The Admin Help on
//     those limits says to "wait until the limit replenishes" and to
//     "split the operation between multiple users"
//     (https://support.google.com/a/answer/2905486). One user's, for
//     hours.
//   - 403 dailyLimitExceeded, "Daily Limit Exceeded": "The Courtesy API
//     limit for your project has been reached" (earlier editions of the
//     guide); a real answer adds "The quota will be reset at midnight
//     Pacific Time (PT)" (chimbori/google-calendar-crx#539). The
//     project's, until then.
//
// Real rateLimitExceeded answers name the quota in their message: "Quota
// exceeded for quota metric 'Queries' and limit 'Queries per minute per
// user' of service 'calendar-json.googleapis.com'"
// (Atrejoe/Inky-Calendar-Server#104), "… limit 'Queries per minute' …"
// (calcom/cal.diy#18079), "… limit 'Queries per day' …"
// (phw198/OutlookGoogleCalendarSync#1133), "… limit 'Queries per user per
// 100 seconds' …" (alextselegidis/easyappointments#995, an older quota):
// the scope and the span follow the message then. Other reasons of the
// domain (accessNotConfigured: the API not enabled) are not a pace, and
// keep their own explanation.
func usageLimitOf(gerr *googleapi.Error) (usageLimit, bool) {
	reason := ""
	if len(gerr.Errors) > 0 {
		reason = gerr.Errors[0].Reason
	}
	switch {
	case hasReason(gerr, "dailyLimitExceeded"):
		return usageLimit{LimitDaily, "project", "dailyLimitExceeded"}, true
	case hasReason(gerr, "quotaExceeded"):
		return usageLimit{LimitCalendarUsage, "user", "quotaExceeded"}, true
	case hasReason(gerr, "userRateLimitExceeded"):
		return usageLimit{LimitPerMinute, "user", "userRateLimitExceeded"}, true
	case gerr.Code != http.StatusTooManyRequests && !(gerr.Code == http.StatusForbidden && hasReason(gerr, "rateLimitExceeded")):
		return usageLimit{}, false
	}
	if hasReason(gerr, "rateLimitExceeded") {
		reason = "rateLimitExceeded"
	}
	msg := strings.ToLower(strings.Join(append(reasonMessages(gerr), gerr.Message), " "))
	switch {
	case strings.Contains(msg, "per day"):
		return usageLimit{LimitDaily, "project", reason}, true
	case strings.Contains(msg, "per user"):
		return usageLimit{LimitPerMinute, "user", reason}, true
	case strings.Contains(msg, "quota metric") || strings.Contains(msg, "quota group"):
		return usageLimit{LimitPerMinute, "project", reason}, true
	}
	return usageLimit{LimitPerMinute, "", reason}, true
}

// usageLimitError is the error of a call refused for a usage limit that
// no retry within seconds cures: it says which, and what the bot does
// meanwhile. It matches meetingbot.ErrUsageLimit; it is not permanent.
type usageLimitError struct {
	l   usageLimit
	err error
}

func (e usageLimitError) Error() string {
	switch e.l.limit {
	case LimitDaily:
		return fmt.Sprintf("Google's daily limit of Calendar requests for the project is reached (%s): "+
			"the bot tries one call a minute until Google resets it at midnight Pacific time, and reminds from its last reading of each calendar meanwhile: %v", e.l.reason, e.err)
	case LimitCalendarUsage:
		return fmt.Sprintf("Google's Calendar usage limits exceeded for the user the calendar is read as (%s): "+
			"the bot tries one call a minute as that user until the limit replenishes, and reminds from its last reading meanwhile: %v", e.l.reason, e.err)
	}
	return fmt.Sprintf("Google's per-minute quota is reached (%s): %v", e.l.reason, e.err)
}

func (e usageLimitError) Unwrap() []error { return []error{meetingbot.ErrUsageLimit, e.err} }
