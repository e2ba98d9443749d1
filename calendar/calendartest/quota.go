package calendartest

import (
	"net/http"
	"time"
)

// ProjectNumber is the emulated Cloud project's number, as Google's quota
// answers name their consumer.
const ProjectNumber = "123456789012"

// quotaMessage is the message of Google's answer to a project over one of
// its quotas, as real answers word it ("Quota exceeded for quota metric
// 'Queries' and limit 'Queries per minute per user' of service
// 'calendar-json.googleapis.com' for consumer 'project_number:…'",
// Atrejoe/Inky-Calendar-Server#104; "… limit 'Queries per minute' …",
// calcom/cal.diy#18079).
func quotaMessage(limit string) string {
	return "Quota exceeded for quota metric 'Queries' and limit '" + limit +
		"' of service 'calendar-json.googleapis.com' for consumer 'project_number:" + ProjectNumber + "'."
}

// Usage-limit answers the Calendar API documents ("Handle API errors",
// https://developers.google.com/workspace/calendar/api/guides/errors) or
// real answers showed; their JSON is in testdata/calendar/errors. Each is
// of the domain usageLimits, which the quota page says is how Google asks
// a client to slow down ("we will return a 403 usageLimits response or a
// 429 response", https://developers.google.com/workspace/calendar/api/guides/quota).
var (
	// ProjectMinuteLimited is 403 rateLimitExceeded for the project's
	// per-minute quota, worded as real answers are.
	ProjectMinuteLimited = Fault{Status: http.StatusForbidden, Domain: "usageLimits", Reason: "rateLimitExceeded", Message: quotaMessage("Queries per minute")}
	// UserMinuteLimited is 403 rateLimitExceeded for the per-minute quota
	// of one user of the project, worded as a real answer was
	// (Atrejoe/Inky-Calendar-Server#104).
	UserMinuteLimited = Fault{Status: http.StatusForbidden, Domain: "usageLimits", Reason: "rateLimitExceeded", Message: quotaMessage("Queries per minute per user")}
	// DailyLimited is 403 dailyLimitExceeded: "Daily Limit Exceeded: The
	// Courtesy API limit for your project has been reached" (the guide),
	// with the message of a real answer (chimbori/google-calendar-crx#539).
	DailyLimited = Fault{Status: http.StatusForbidden, Domain: "usageLimits", Reason: "dailyLimitExceeded",
		Message: "Daily Limit Exceeded. The quota will be reset at midnight Pacific Time (PT). You may monitor your quota usage and adjust limits in the API Console: https://console.developers.google.com/apis/api/calendar-json.googleapis.com/quotas?project=" + ProjectNumber}
	// UsageLimited is 403 quotaExceeded: "Calendar usage limits exceeded:
	// The user reached one of the Google Calendar limits in place to
	// protect Google users and infrastructure from abusive behavior" (the
	// guide).
	UsageLimited = Fault{Status: http.StatusForbidden, Domain: "usageLimits", Reason: "quotaExceeded", Message: "Calendar usage limits exceeded."}
)

// Quota is the usage limits the server enforces on Calendar API requests
// (every method; the token endpoints are not the Calendar API's), as
// Google does ("Manage quotas", "Usage limits":
// https://developers.google.com/workspace/calendar/api/guides/quota):
//
//   - "Per minute per project" and "Per minute per user per project",
//     "calculated per minute using a sliding window": a request is
//     answered while fewer than the quota were answered in the minute
//     before it, and refused otherwise. The user is the request's
//     authenticated principal: the service account, or the user it
//     impersonates, or a person's own grant. A refused request does not
//     count.
//   - A limit per day per project, which Google's daily quotas reset "at
//     midnight Pacific Time (PT)" (the message of its dailyLimitExceeded
//     answer, chimbori/google-calendar-crx#539): the day is Pacific time's.
//
// The clock is SetClock's.
type Quota struct {
	// PerMinute and PerUserPerMinute are the requests a sliding minute the
	// project and each user may make; 0: no such limit.
	PerMinute, PerUserPerMinute int
	// PerDay is the requests a Pacific-time day the project may make; 0:
	// no such limit.
	PerDay int
	// Minute, UserMinute and Day are the answers past each; a zero Fault
	// takes ProjectMinuteLimited, UserMinuteLimited and DailyLimited.
	// RateLimited (429), RateLimited403 or UserRateLimited answer as the
	// guide shows, UsageLimited as Calendar's own limits do.
	Minute, UserMinute, Day Fault
}

// quotaState is what the server counted against its Quota.
type quotaState struct {
	q        Quota
	project  []time.Time            // requests answered in the last minute
	users    map[string][]time.Time // the same, per principal
	day      string                 // the Pacific date counted
	dayCount int
	refused  map[string]int // by reason
}

// pacific is the zone Google's daily quotas reset in.
var pacific = mustZone("America/Los_Angeles")

func mustZone(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic("calendartest: " + err.Error())
	}
	return loc
}

// SetQuota makes the server enforce q on the requests that arrive after
// the call, with nothing counted yet; the zero Quota enforces none.
func (s *Server) SetQuota(q Quota) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if q.Minute == (Fault{}) {
		q.Minute = ProjectMinuteLimited
	}
	if q.UserMinute == (Fault{}) {
		q.UserMinute = UserMinuteLimited
	}
	if q.Day == (Fault{}) {
		q.Day = DailyLimited
	}
	s.quota = quotaState{q: q, users: map[string][]time.Time{}, refused: map[string]int{}}
}

// QuotaRefusals returns how many requests the Quota refused, by the reason
// of the answer ("rateLimitExceeded", "dailyLimitExceeded", …).
func (s *Server) QuotaRefusals() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]int{}
	for k, v := range s.quota.refused {
		out[k] = v
	}
	return out
}

// overQuota counts r against the Quota and returns the answer of the
// limit it passes, if any. s.mu must be held.
func (s *Server) overQuota(r *http.Request) (Fault, bool) {
	st := &s.quota
	q := st.q
	if q.PerMinute == 0 && q.PerUserPerMinute == 0 && q.PerDay == 0 {
		return Fault{}, false
	}
	principal, _, ok := s.caller(r)
	if !ok {
		return Fault{}, false // answered 401 by the method
	}
	now := s.push.now()
	since := now.Add(-time.Minute)
	st.project = within(st.project, since)
	st.users[principal] = within(st.users[principal], since)
	if day := now.In(pacific).Format(time.DateOnly); day != st.day {
		st.day, st.dayCount = day, 0
	}
	var f Fault
	switch {
	case q.PerDay > 0 && st.dayCount >= q.PerDay:
		f = q.Day
	case q.PerMinute > 0 && len(st.project) >= q.PerMinute:
		f = q.Minute
	case q.PerUserPerMinute > 0 && len(st.users[principal]) >= q.PerUserPerMinute:
		f = q.UserMinute
	default:
		st.project = append(st.project, now)
		st.users[principal] = append(st.users[principal], now)
		st.dayCount++
		return Fault{}, false
	}
	st.refused[f.Reason]++
	return f, true
}

// within drops the instants of ts not after since.
func within(ts []time.Time, since time.Time) []time.Time {
	i := 0
	for i < len(ts) && !ts[i].After(since) {
		i++
	}
	return ts[i:]
}
