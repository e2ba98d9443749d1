// Package calendar reads meetings from Google Calendar: it is the
// scheduler's Source, on the Calendar API v3 with read-only credentials (a
// service account, with or without domain-wide delegation, or an
// authorized user).
//
// A read lists a window of event instances, follows every page, drops what
// is not a meeting (cancelled, all-day, declined, out of office, focus
// time, working location, birthdays) and retries rate limits, server and
// network errors with backoff. Failures no retry can cure are returned as
// meetingbot.Permanent errors that say what the operator should do. Meeting
// reads one instance again (events.get), with the same filters.
//
// Every request first waits for a place in the project's and the user's
// per-minute quotas (quota.go), so that thousands of calendars slow a sweep
// down rather than draw rate-limit errors.
package calendar

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
	"google.golang.org/api/calendar/v3"
	"google.golang.org/api/option"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/internal/outbound"
	"github.com/meetingbot/meetingbot/internal/retry"
)

// DefaultEndpoint is the Calendar API base URL.
const DefaultEndpoint = "https://www.googleapis.com/calendar/v3/"

// Config configures a Source. Exactly one of CredentialsFile and
// CredentialsJSON is required; everything else has a default.
type Config struct {
	// CredentialsFile is the path of a service-account key or
	// authorized-user JSON (GOOGLE_APPLICATION_CREDENTIALS).
	CredentialsFile string
	// CredentialsJSON is the same JSON, inline (GOOGLE_CREDENTIALS_JSON).
	CredentialsJSON []byte
	// Endpoint replaces the Calendar API base URL (GOOGLE_API_ENDPOINT).
	Endpoint string
	// Impersonate reads each calendar as its owner, the calendar ID being
	// the subject of a service account's domain-wide delegation
	// (GOOGLE_IMPERSONATE).
	Impersonate bool
	// HTTPClient carries API and token requests; its Timeout bounds each.
	// Default: a client with a 30s timeout. Either is used through
	// outbound.Client: no redirect to another host, no answer over
	// outbound.MaxResponse.
	HTTPClient *http.Client
	// Logger receives warnings about unreadable events. Default: discard.
	Logger *slog.Logger
	// Observe, when set, is called once per HTTP attempt with the call
	// ("events.list") and the outcome class.
	Observe func(call string, class retry.Class)
	// Retry bounds the attempts of one page request and the waits between
	// them; the zero Policy takes retry's defaults (5 attempts, 1s to 30s).
	Retry retry.Policy
	// Sleep waits between attempts and for the quotas; tests replace it.
	// Default: a timer that stops when ctx is done.
	Sleep func(ctx context.Context, d time.Duration) error
	// ProjectQuota and UserQuota are the Calendar API requests a minute
	// the Google Cloud project allows in all and per user; every request
	// waits for a place in both (see quota.go for whom a request counts
	// against). 0 takes Google's defaults, DefaultProjectQuota (10,000)
	// and DefaultUserQuota (600). A call waits in order of urgency
	// (meetingbot.Urgency); one that could not get its place before its
	// context's deadline fails at once with meetingbot.ErrQuotaWait.
	ProjectQuota, UserQuota int
	// QuotaWait, when set, is called before each request is sent with the
	// call ("events.list", "events.get") and how long it waited for the
	// quotas, 0 when it did not.
	QuotaWait func(call string, waited time.Duration)
	// QuotaChanged, when set, is called when a budget is lowered after
	// Google answered a usage limit, or grows back (see quota.go).
	QuotaChanged func(QuotaChange)
	// Now is the quotas' clock; time.Now by default. Tests inject it with
	// Sleep.
	Now func() time.Time
	// Accounts, when set, are the Google accounts people connected: a
	// calendar whose owner connected theirs is read with their own token
	// and counts against their own per-user quota (accounts.go). With
	// Accounts, the credentials are optional: without them, only connected
	// calendars can be read.
	Accounts Accounts
}

// Source reads meetings from Google Calendar. It is safe for concurrent
// use; a failure of one calendar does not affect the others.
type Source struct {
	cfg        Config
	creds      credentials
	log        *slog.Logger
	httpClient *http.Client
	endpoint   string
	sleep      func(context.Context, time.Duration) error
	quota      *quota

	mu sync.Mutex
	// services holds one API client per impersonated subject ("" when not
	// impersonating), each with its own cached token, and one per
	// connected account (accounts.go).
	services map[string]*calendar.Service
	// connected names, per calendar read with a person's own token, the
	// connection it is read with.
	connected map[string]string
	// busyOnly holds the calendars last seen sharing only free/busy, so
	// that it is said once, not on every read.
	busyOnly map[string]bool
}

// New checks cfg and returns a Source. It reads the credentials file but
// makes no request. Its errors name the variable at fault and never quote
// a secret.
func New(ctx context.Context, cfg Config) (*Source, error) {
	creds, err := loadCredentials(cfg)
	if err != nil && !(cfg.Accounts != nil && errors.Is(err, errNoCredentials)) {
		return nil, fmt.Errorf("calendar: %w", err)
	}
	s := &Source{
		cfg:        cfg,
		creds:      creds,
		log:        cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler)),
		httpClient: outbound.Client(cmp.Or(cfg.HTTPClient, &http.Client{Timeout: 30 * time.Second})),
		endpoint:   cmp.Or(cfg.Endpoint, DefaultEndpoint),
		sleep:      cfg.Sleep,
		services:   map[string]*calendar.Service{},
		connected:  map[string]string{},
		busyOnly:   map[string]bool{},
	}
	if s.sleep == nil {
		s.sleep = retry.Sleep
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	s.quota = newQuota(cfg.ProjectQuota, cfg.UserQuota, now, s.sleep)
	s.quota.changed = cfg.QuotaChanged
	if u, err := url.Parse(s.endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("calendar: GOOGLE_API_ENDPOINT %q is not an http(s) URL, e.g. %s", s.endpoint, DefaultEndpoint)
	}
	if !strings.HasSuffix(s.endpoint, "/") {
		s.endpoint += "/" // relative paths resolve under the base
	}
	// Build the shared client now so that credentials oauth2 cannot use
	// fail here rather than at the first read.
	if _, err := s.credentialService(ctx, ""); s.creds.kind != "" && err != nil {
		return nil, fmt.Errorf("calendar: %w", err)
	}
	return s, nil
}

// CheckCredentials reads cfg's credentials and builds the client they
// read with, as New does, making no request: a key that cannot be used
// stops the bot before anything starts. Its errors are New's.
func CheckCredentials(ctx context.Context, cfg Config) error {
	_, err := New(ctx, cfg)
	return err
}

// ServiceAccountEmail returns the service account's client_email, or ""
// for authorized-user credentials. Calendars are shared with this address.
func (s *Source) ServiceAccountEmail() string { return s.creds.clientEmail }

// ServiceAccountClientID returns the service account's client_id, which a
// Workspace admin grants domain-wide delegation to, or "" for
// authorized-user credentials.
func (s *Source) ServiceAccountClientID() string { return s.creds.clientID }

// credentialService returns the API client of the credentials acting for
// calendarID: the calendar's owner when impersonating, else the
// credentials' own identity.
func (s *Source) credentialService(ctx context.Context, calendarID string) (*calendar.Service, error) {
	if s.creds.kind == "" {
		return nil, errNotConnected(calendarID)
	}
	subject := ""
	if s.cfg.Impersonate {
		subject = calendarID
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if svc := s.services[subject]; svc != nil {
		return svc, nil
	}
	// The token source keeps this context for its own requests, which
	// outlive this call: keep the HTTP client, drop the cancellation.
	tokenCtx := context.WithValue(context.WithoutCancel(ctx), oauth2.HTTPClient, s.httpClient)
	ts, err := s.creds.tokenSource(tokenCtx, subject)
	if err != nil {
		return nil, err
	}
	client := oauth2.NewClient(tokenCtx, ts)
	client.Timeout = s.httpClient.Timeout
	if s.creds.quotaProject != "" {
		client.Transport = userProject{base: client.Transport, project: s.creds.quotaProject}
	}
	// The oauth2 transport sets the access token on every request, a
	// redirected one too: follow none to another host.
	client.CheckRedirect = outbound.CheckRedirect
	svc, err := calendar.NewService(ctx, option.WithHTTPClient(client), option.WithEndpoint(s.endpoint))
	if err != nil {
		return nil, fmt.Errorf("new service: %w", err)
	}
	// With impersonation, New's check builds a client for no subject;
	// no calendar uses it.
	if subject != "" || !s.cfg.Impersonate {
		s.services[subject] = svc
	}
	return svc, nil
}

// noteAccess says once, at WARN, that a calendar shows only free/busy:
// its reminders go out without title, link or join button. role is the
// accessRole of an events.list answer.
func (s *Source) noteAccess(calendarID, role string) {
	busy := role == "freeBusyReader"
	s.mu.Lock()
	was := s.busyOnly[calendarID]
	s.busyOnly[calendarID] = busy
	s.mu.Unlock()
	switch {
	case busy && !was:
		s.log.Warn("calendar shows only free/busy: its reminders have no title, link or join button",
			"calendar", calendarID, "fix", s.busyOnlyFix(calendarID))
	case was && !busy:
		s.log.Info("calendar shows event details again", "calendar", calendarID)
	}
}

// busyOnlyFix says how the bot gets to see a calendar's event details.
func (s *Source) busyOnlyFix(calendarID string) string {
	if s.creds.clientEmail == "" || s.cfg.Impersonate {
		return fmt.Sprintf("ask the owner of %s to share it with the bot's account with See all event details", calendarID)
	}
	return fmt.Sprintf("share %s with %s with See all event details; in Google Workspace, a service account is outside the organisation, "+
		"so an admin must also allow it (Admin console > Apps > Google Workspace > Calendar > Sharing settings > External sharing options: "+
		"Share all information, but outsiders cannot change calendars), or use domain-wide delegation (GOOGLE_IMPERSONATE=true)",
		calendarID, s.creds.clientEmail)
}

// forgetCredential drops the credentials' API client acting for
// calendarID, and with it the cached token, so that the next read asks for
// a new one.
func (s *Source) forgetCredential(calendarID string) {
	subject := ""
	if s.cfg.Impersonate {
		subject = calendarID
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.services, subject)
}

// maxPages bounds the pages of one read, against a server that never
// stops paging.
const maxPages = 1000

// Meetings returns the meetings of sub's calendar that start in (from, to],
// sorted by start: a meeting starting exactly at from is excluded, one
// starting exactly at to included. Recurring meetings come as one Meeting
// per instance. An error marked meetingbot.Permanent needs the operator
// (a calendar not shared, credentials refused); any other is transient.
func (s *Source) Meetings(ctx context.Context, sub meetingbot.Subscription, from, to time.Time) ([]meetingbot.Meeting, error) {
	if !to.After(from) {
		return nil, nil
	}
	var out []meetingbot.Meeting
	err := s.list(ctx, sub, from, to, func(items []*calendar.Event) {
		out = appendMeetings(out, items, from, to, sub.CalendarID, s.log)
	})
	if err != nil {
		return nil, err
	}
	sortMeetings(out)
	return meetingbot.ForSubscription(sub, out), nil
}

// sortMeetings sorts by start, then by ID.
func sortMeetings(ms []meetingbot.Meeting) {
	slices.SortStableFunc(ms, func(a, b meetingbot.Meeting) int {
		return cmp.Or(a.Start.Compare(b.Start), strings.Compare(a.ID, b.ID))
	})
}

// list calls visit with each page of sub's calendar's event instances
// that may start in (from, to], following every page.
func (s *Source) list(ctx context.Context, sub meetingbot.Subscription, from, to time.Time, visit func([]*calendar.Event)) error {
	// timeMin bounds the end and timeMax the start, both exclusive, and
	// both drop milliseconds: ask for a little more and filter on start.
	timeMin := from.UTC().Truncate(time.Second).Format(time.RFC3339)
	timeMax := to.UTC().Truncate(time.Second).Add(time.Second).Format(time.RFC3339)
	pageToken := ""
	for range maxPages {
		var page *calendar.Events
		err := s.withRetries(ctx, callEventsList, sub.Reading(), func() error {
			svc, err := s.service(ctx, sub.Reading())
			if err != nil {
				return meetingbot.Permanent(err)
			}
			call := svc.Events.List(sub.CalendarID).
				SingleEvents(true).
				OrderBy("startTime").
				MaxResults(2500).
				TimeMin(timeMin).
				TimeMax(timeMax).
				Fields(eventFields).
				Context(ctx)
			if pageToken != "" {
				call.PageToken(pageToken)
			}
			page, err = call.Do()
			return err
		})
		if err != nil {
			return err
		}
		if pageToken == "" {
			s.noteAccess(sub.CalendarID, page.AccessRole)
		}
		useDefaults(page.Items, page.DefaultReminders)
		visit(page.Items)
		if page.NextPageToken == "" {
			return nil
		}
		pageToken = page.NextPageToken
	}
	return fmt.Errorf("calendar %s: events.list: more than %d pages", sub.CalendarID, maxPages)
}
