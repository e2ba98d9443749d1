// Package selfservice lets people in a Slack workspace manage their own
// meeting reminders: the /meetingbot slash command, the App Home tab, the
// "Mute this series" button of reminders, and a short help answer to
// whoever writes to the bot in its Messages tab.
//
// Slack reaches it in one of two ways, with the same handling behind both:
// signed HTTP requests (App.Handler: POST /slack/commands,
// /slack/interactivity, /slack/events, each verified against the signing
// secret before it is read) or Socket Mode (App.RunSocketMode, for a bot
// without a public URL). Either way Slack hears back within 3 seconds; work
// that takes longer, such as reading a calendar, goes on after the
// acknowledgement and answers through the response_url.
//
// Subscriptions made here are stored through Store (sqlite.Store); the
// scheduler lists them on every sweep. Calendars are read through the small
// Calendars interface, which the caller implements over the calendar
// package.
package selfservice

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/internal/clock"
	"github.com/slack-go/slack"
)

// Store keeps what people set up from Slack; *sqlite.Store provides it.
type Store interface {
	SlackSubscriptions(ctx context.Context) ([]meetingbot.SlackSubscription, error)
	SlackSubscriptionsTo(ctx context.Context, destination string) ([]meetingbot.SlackSubscription, error)
	SlackSubscription(ctx context.Context, id string) (meetingbot.SlackSubscription, bool, error)
	AddSlackSubscription(ctx context.Context, sub meetingbot.SlackSubscription) (meetingbot.SlackSubscription, bool, error)
	// SetSlackSubscriptionFollowing replaces a channel subscription's
	// offsets (none when it follows something) and what it follows.
	SetSlackSubscriptionFollowing(ctx context.Context, id string, offsets []time.Duration, f meetingbot.Following) (bool, error)
	SetSlackSubscriptionReminding(ctx context.Context, id string, offsets []time.Duration, onCalendar bool, rules meetingbot.Rules) (bool, error)
	RemoveSlackSubscription(ctx context.Context, id string) (bool, error)
	MuteSeries(ctx context.Context, m meetingbot.MutedSeries) (bool, error)
	UnmuteSeries(ctx context.Context, subscription, series string) (bool, error)
	MutedSeriesOf(ctx context.Context, subscription string) ([]meetingbot.MutedSeries, error)
	SlackSettingsOf(ctx context.Context, userID string) (meetingbot.SlackSettings, bool, error)
	PutSlackSettings(ctx context.Context, set meetingbot.SlackSettings) error
	// Remember records key until expires and reports whether it is new
	// (not recorded, or recorded with an expiry not after now), for every
	// replica on the database: the signatures verified and the event IDs
	// handled.
	Remember(ctx context.Context, key string, now, expires time.Time) (bool, error)
}

// Meeting is what people are told about one upcoming meeting.
type Meeting struct {
	Title string
	Start time.Time
	// Series is the recurring event's ID ("" for a single event); muted
	// series are left out of "next reminder".
	Series string
	// Reminders are the meeting's own popup reminders in Google
	// Calendar, for those reminded at them (meetingbot.Meeting.Reminders).
	Reminders []time.Duration
}

// Calendars reads the calendars people connect from Slack.
type Calendars interface {
	// Upcoming returns up to limit meetings of calendarID that start in
	// [from, to), earliest first, with the filters reminders use. An error
	// whose chain has a method Permanent() bool answering true (as the
	// calendar package's do) means the bot cannot read the calendar until
	// someone acts: it is not shared, or delegation is not granted. Any
	// other error is transient.
	Upcoming(ctx context.Context, calendarID, reader string, from, to time.Time, limit int) ([]Meeting, error)
}

// Fixed is a subscription of the operator's, from CALENDARS: shown by
// "list", never changed from Slack.
type Fixed struct {
	ID         string
	CalendarID string
	// Destination as configured: a channel ID, "#name", a user ID, an
	// email, or "" for a DM to the calendar's owner.
	Destination string
	Offsets     []time.Duration
}

// Access says how the bot reads calendars, so that it can tell people how
// to let it read theirs.
type Access struct {
	// ServiceAccount is the service account's client_email that calendars
	// are shared with; "" for authorized-user credentials.
	ServiceAccount string
	// Impersonate is GOOGLE_IMPERSONATE: calendars are read by
	// domain-wide delegation, which a Workspace admin grants.
	Impersonate bool
	// ClientID is the service account's client_id, which delegation is
	// granted to.
	ClientID string
}

// Config configures an App. Store, Calendars, Slack and DefaultOffsets are
// required; the rest have defaults.
type Config struct {
	Store     Store
	Calendars Calendars
	// Slack is the bot-token client every Web API call goes through.
	Slack *slack.Client
	// DefaultOffsets are REMINDER_OFFSETS, used when people give none.
	DefaultOffsets []time.Duration
	// Limits bound the offsets people choose (the sweep interval above all).
	Limits Limits
	// Admins is SLACK_ADMINS: Slack user IDs or emails of people who may
	// post any calendar in a channel, besides workspace admins and owners.
	Admins []string
	// Operator lists the subscriptions of CALENDARS.
	Operator []Fixed
	// Access words the advice given when a calendar cannot be read.
	Access Access
	// Command is the slash command as people type it; "/meetingbot".
	Command string
	// BotUserID is the bot's Slack user ID (auth.test's user_id), to
	// mention it in "invite me" hints; optional.
	BotUserID string
	// Now is the clock; time.Now by default.
	Now func() time.Time
	// AfterFunc runs a function later, on the clock of Now; time.AfterFunc
	// by default.
	AfterFunc func(time.Duration, func()) clock.Timer
	// Logger receives the logs; slog.Default() by default.
	Logger *slog.Logger
	// HTTPClient posts to response_urls; a client with a 10s timeout by
	// default.
	HTTPClient *http.Client
	// AckWithin is how long a slash command may work before Slack is
	// answered "working on it" and the reply follows through the
	// response_url; 2s by default (Slack waits 3).
	AckWithin time.Duration
	// WorkTimeout bounds the work of one request; 1m by default.
	WorkTimeout time.Duration
	// UserCacheTTL is how long a person's email, zone and role from
	// users.info are reused; 10m by default.
	UserCacheTTL time.Duration
	// Horizon is how far ahead "next reminder" looks; 7 days by default.
	Horizon time.Duration
	// Snoozes, when set, answers the snooze buttons of reminders and
	// lists people's pending snoozes in the Home tab (snooze.go).
	Snoozes Snoozes
	// Refused, if set, is called once per request to Slack's request
	// URLs that is refused, with why: for a metric. The log says so at
	// most once a minute.
	Refused func(Refusal)
	// Accounts, when set, lets people connect their own Google account
	// (/meetingbot connect, the Home tab); see connect.go.
	Accounts Accounts
	// StatusSettings keeps "/meetingbot status titles"; see status.go.
	StatusSettings StatusSettings
	// Answers, when set, answers the Going / Maybe / No of reminders and
	// notices (rsvp.go); with Invites and Accounts, people turn
	// invitation notices on (invites.go).
	Answers Answers
	Invites InviteStore
}

// App handles what people do in Slack. Create it with New; serve it with
// Handler or RunSocketMode; Close it to finish the work in flight.
type App struct {
	store    Store
	cals     Calendars
	api      *slack.Client
	defaults []time.Duration
	limits   Limits
	admins   map[string]bool
	operator []Fixed
	access   Access
	command  string
	botUser  string
	now      func() time.Time
	log      *slog.Logger
	http     *http.Client
	ackIn    time.Duration
	workIn   time.Duration
	horizon  time.Duration
	snoozes  Snoozes
	refused  func(Refusal)
	refusals *refusals
	reads    reads
	people   *people
	// answered keeps a DM from being answered twice by person within
	// dmQuiet; event IDs handled are remembered in the store.
	answered *recent
	// homes keeps one Home tab publish per person at a time, see
	// homeLocks.
	homes homeLocks

	// self is the bot's workspace and app once Slack named them;
	// selfFailed is when asking last failed.
	selfMu         sync.Mutex
	self           identity
	selfFailed     time.Time
	botID          string // auth.test's bot_id, for bots.info
	appUnknown     bool   // bots.info cannot name the app: not checked
	accounts       Accounts
	statusSettings StatusSettings
	answers        Answers
	invites        InviteStore

	mu      sync.Mutex
	closing bool
	work    sync.WaitGroup
	stop    chan struct{}
}

// New checks cfg and returns an App. It makes no request.
func New(cfg Config) (*App, error) {
	switch {
	case cfg.Store == nil:
		return nil, errors.New("selfservice: no Store")
	case cfg.Calendars == nil:
		return nil, errors.New("selfservice: no Calendars")
	case cfg.Slack == nil:
		return nil, errors.New("selfservice: no Slack client")
	}
	lim := cfg.Limits.withDefaults()
	if err := checkOffsets(cfg.DefaultOffsets, lim); err != nil {
		return nil, fmt.Errorf("selfservice: default offsets %v: %w", cfg.DefaultOffsets, err)
	}
	a := &App{
		store: cfg.Store, cals: cfg.Calendars, api: cfg.Slack,
		defaults: sorted(cfg.DefaultOffsets), limits: lim, operator: cfg.Operator, access: cfg.Access,
		command:        cmp.Or(cfg.Command, "/meetingbot"),
		botUser:        cfg.BotUserID,
		now:            cfg.Now,
		log:            cmp.Or(cfg.Logger, slog.Default()),
		http:           cmp.Or(cfg.HTTPClient, &http.Client{Timeout: 10 * time.Second}),
		ackIn:          cmp.Or(max(cfg.AckWithin, 0), 2*time.Second),
		workIn:         cmp.Or(max(cfg.WorkTimeout, 0), time.Minute),
		horizon:        cmp.Or(max(cfg.Horizon, 0), 7*24*time.Hour),
		snoozes:        cfg.Snoozes,
		refused:        cfg.Refused,
		accounts:       cfg.Accounts,
		statusSettings: cfg.StatusSettings,
		answers:        cfg.Answers,
		invites:        cfg.Invites,
		admins:         map[string]bool{},
		stop:           make(chan struct{}),

		answered: newRecent(dmQuiet),
	}
	if a.now == nil {
		a.now = time.Now
	}
	a.refusals = &refusals{log: a.log, now: a.now, count: a.countRefused, after: cfg.AfterFunc}
	for _, id := range cfg.Admins {
		if id = strings.TrimSpace(id); id != "" {
			a.admins[strings.ToLower(id)] = true
		}
	}
	a.people = &people{api: a.api, now: a.now, ttl: cmp.Or(max(cfg.UserCacheTTL, 0), 10*time.Minute), cache: map[string]cachedPerson{}}
	return a, nil
}

// countRefused counts one refused request for the metric, if any.
func (a *App) countRefused(r Refusal) {
	if a.refused != nil {
		a.refused(r)
	}
}

// Close stops taking work, cancels the work in flight and waits for it to
// end. Requests that arrive after Close are answered as failed.
func (a *App) Close() {
	a.mu.Lock()
	if !a.closing {
		a.closing = true
		close(a.stop)
	}
	a.mu.Unlock()
	a.work.Wait()
	a.refusals.flush() // the refusals of the last minute, counted
}

// spawn runs f in its own goroutine with a context that outlives the
// request it came with, ends after WorkTimeout or at Close, and carries no
// deadline of parent's. It reports false, without running f, after Close.
func (a *App) spawn(parent context.Context, f func(ctx context.Context)) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closing {
		return false
	}
	a.work.Add(1)
	go func() {
		defer a.work.Done()
		ctx, cancel := context.WithTimeout(context.WithoutCancel(parent), a.workIn)
		defer cancel()
		go func() {
			select {
			case <-a.stop:
				cancel()
			case <-ctx.Done():
			}
		}()
		f(ctx)
	}()
	return true
}
