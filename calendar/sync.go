package calendar

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"time"

	"google.golang.org/api/calendar/v3"
	"google.golang.org/api/googleapi"

	"github.com/meetingbot/meetingbot"
)

// Incremental sync of one calendar, as Google describes it in "Synchronize
// resources efficiently"
// (https://developers.google.com/workspace/calendar/api/guides/sync): a full
// sync lists the calendar and keeps the nextSyncToken of its last page; each
// later sync sends that token and gets only what changed since, deleted
// entries included with status "cancelled"; a token Google no longer
// accepts is answered 410 Gone, and the client clears what it kept and
// syncs in full again.
//
// What a sync asks for. Both kinds send singleEvents=true (one item per
// instance, the instance IDs ledger keys are made of) and nothing about
// deleted events: the full sync needs none (it replaces the mirror with the
// meetings it lists, and a cancelled one is not a meeting), and the
// incremental sync gets them without asking, as events.list says of
// syncToken: "All events deleted since the previous list request will
// always be in the result set and it is not allowed to set showDeleted to
// False". Asking anyway costs: with showDeleted=true and singleEvents=true
// beside a syncToken, "all events ever deleted are returned" on every sync,
// not those deleted since (googleapis/google-api-ruby-client#860), and
// Google's own guide sends only singleEvents and the token
// ("GET /calendars/primary/events?maxResults=10&singleEvents=true&syncToken=…",
// "Synchronize resources efficiently"). Leaving showDeleted out of both
// keeps the two kinds' parameters the same, as events.list asks: "all other
// query parameters should be the same as for the initial synchronization to
// avoid undefined behavior". The full sync alone bounds the time: timeMin
// and timeMax are among the parameters that "cannot be specified together
// with nextSyncToken" (iCalUID, orderBy, privateExtendedProperty, q,
// sharedExtendedProperty, timeMin, timeMax, updatedMin), while the guide
// lets the initial sync be restricted ("you may want to limit your full
// sync to only a certain date range", its example sets timeMin). No orderBy
// either: a sync's items come in no particular order.
//
// How much a sync keeps: a Window, from a little in the past to a horizon
// some days ahead. A daily series without an end has instances without
// end; singleEvents=true expands them, and an incremental sync that reports
// a change of such a series may list its instances far into the future (a
// full sync's time range does not carry over to the token). So the full
// sync asks only for the window (timeMin = From, timeMax = Horizon), and
// every sync turns an instance starting outside the window into a removal.
// The consequence: an instance that enters the window as time passes,
// without being changed, is never reported by an incremental sync. The
// caller therefore syncs in full again before its window runs short:
// DefaultSyncAhead and DefaultFullSyncEvery are the bot's choice, a window
// of 8 days refilled daily, so that whatever the bot plans within the next
// 7 days is in the mirror. One full sync a day costs one request per
// calendar (or one per 2,500 instances), nothing next to the incremental
// syncs.

// Defaults of the sync window: see the comment above.
const (
	// DefaultSyncAhead is how far ahead of now a full sync's horizon lies.
	DefaultSyncAhead = 8 * 24 * time.Hour
	// DefaultFullSyncEvery is how often a calendar is synced in full again,
	// so that its mirror always holds at least DefaultSyncAhead -
	// DefaultFullSyncEvery ahead.
	DefaultFullSyncEvery = 24 * time.Hour
)

// Window bounds the instances a sync keeps: those starting after From and
// at or before Horizon.
type Window struct {
	From, Horizon time.Time
}

// Change is one instance as a sync reports it, keyed by its instance ID.
type Change struct {
	// ID is the instance's event ID in Google Calendar (for an occurrence
	// of a series, e.g. "standup_20261130T090000Z"): the key of the
	// caller's mirror, and the ID Meeting reads the instance again with.
	ID string
	// Meeting is the instance, converted and filtered as Meetings does,
	// when it is a meeting to remind of in the window; the zero Meeting
	// when Removed.
	Meeting meetingbot.Meeting
	// Removed says the instance is not, or no longer, a meeting in the
	// window: cancelled or deleted, declined by the calendar's owner,
	// all-day, of a type that is not a meeting, unreadable, or starting
	// outside the window. The mirror forgets ID.
	Removed bool
	// Why says why it was removed, for the log ("cancelled", "after the
	// horizon" …).
	Why string
}

// SyncResult is what one Sync returns.
type SyncResult struct {
	// Full is true for a full sync (no token was given): Changes then
	// hold every meeting of the window and nothing else, and replace
	// whatever the caller kept. An incremental sync's Changes are applied
	// one by one to what the caller kept.
	Full bool
	// Changes are the instances, each ID once.
	Changes []Change
	// Token is the nextSyncToken to give the next Sync of the calendar.
	// It is "" when Google gave none; the next sync is then a full one.
	Token string
	// Series are the recurring events an incremental sync's items belong
	// to or are, each once, by ID (see seriesOf): what Google says of a
	// changed series is undocumented and may be partial, so the caller
	// reads their instances again (Instances) rather than trust the
	// Changes of them. Empty for a full sync, which lists every instance
	// of the window.
	Series []string
}

// syncFields is the fields mask of a sync: Meetings's, and nextSyncToken.
const syncFields = "nextPageToken,nextSyncToken,accessRole,defaultReminders(method,minutes),items(" + itemFields + ")"

// Sync reads what changed in calendarID since token, or the whole window
// when token is "" (a full sync), following every page. Instances come as
// Changes keyed by instance ID: a meeting as Meetings converts and filters
// it, anything else as a removal (see Change). The window bounds both
// kinds; see the comment above for why, and why the caller must sync in
// full again before its window runs short.
//
// An error matching meetingbot.ErrSyncTokenGone means the token must be dropped and
// the calendar synced in full. Any other is as Meetings's: marked
// meetingbot.Permanent when it needs the operator, transient otherwise;
// the token stays good after a transient one.
func (s *Source) Sync(ctx context.Context, reading, token string, w Window) (SyncResult, error) {
	calendarID, _ := meetingbot.ParseReading(reading)
	if !w.Horizon.After(w.From) {
		return SyncResult{}, fmt.Errorf("calendar %s: sync: empty window (%v, %v]", calendarID, w.From, w.Horizon)
	}
	res := SyncResult{Full: token == ""}
	pages := syncPages{reading: reading, calendarID: calendarID, token: token, w: w, byID: map[string]int{}, touched: map[string]bool{}}
	for range maxPages {
		page, err := s.listPage(ctx, &pages)
		if err != nil {
			return SyncResult{}, err
		}
		if pages.pageToken == "" {
			s.noteAccess(calendarID, page.AccessRole)
		}
		s.addPage(&pages, &res, page)
		if page.NextPageToken == "" {
			res.Token = page.NextSyncToken
			if res.Token == "" {
				s.log.Warn("events.list gave no nextSyncToken: the calendar's next sync is a full one", "calendar", calendarID)
			}
			if res.Full {
				res.Changes = keepMeetings(res.Changes)
			}
			return res, nil
		}
		pages.pageToken = page.NextPageToken
	}
	return SyncResult{}, fmt.Errorf("calendar %s: events.list: more than %d pages", calendarID, maxPages)
}

// syncPages is where a sync is in its calendar's pages: the next page's
// token, and the instances and series met so far.
type syncPages struct {
	reading, calendarID, token string
	w                          Window
	pageToken                  string
	byID                       map[string]int  // index in the result's Changes
	touched                    map[string]bool // series named in the result
}

// listPage reads the next page of an events.list: with the sync token,
// else the window. A sync token Google no longer honours (410 Gone) is
// meetingbot.ErrSyncTokenGone.
func (s *Source) listPage(ctx context.Context, p *syncPages) (*calendar.Events, error) {
	// timeMin bounds the end and timeMax the start, both exclusive, and
	// both drop milliseconds: ask for a little more and filter on start.
	timeMin := p.w.From.UTC().Truncate(time.Second).Format(time.RFC3339)
	timeMax := p.w.Horizon.UTC().Truncate(time.Second).Add(time.Second).Format(time.RFC3339)
	var page *calendar.Events
	gone := false
	err := s.withRetries(ctx, callEventsList, p.reading, func() error {
		svc, err := s.service(ctx, p.reading)
		if err != nil {
			return meetingbot.Permanent(err)
		}
		call := svc.Events.List(p.calendarID).
			SingleEvents(true).
			MaxResults(2500).
			Fields(syncFields).
			Context(ctx)
		if p.token != "" {
			call.SyncToken(p.token)
		} else {
			call.TimeMin(timeMin).TimeMax(timeMax)
		}
		if p.pageToken != "" {
			call.PageToken(p.pageToken)
		}
		page, err = call.Do()
		var gerr *googleapi.Error
		if p.token != "" && errors.As(err, &gerr) && gerr.Code == http.StatusGone {
			gone = true // an answer, not a failure to retry or explain
			return nil
		}
		return err
	})
	switch {
	case err != nil:
		return nil, err
	case gone:
		return nil, fmt.Errorf("calendar %s: events.list: %w", p.calendarID, meetingbot.ErrSyncTokenGone)
	}
	return page, nil
}

// addPage adds the instances of page to res, a later page's word on an
// instance replacing an earlier one's, and with an incremental sync the
// series it touched.
func (s *Source) addPage(p *syncPages, res *SyncResult, page *calendar.Events) {
	useDefaults(page.Items, page.DefaultReminders)
	for _, ev := range page.Items {
		if ev == nil || ev.Id == "" {
			s.log.Warn("skipping unreadable event", "calendar", p.calendarID, "err", "missing id")
			continue
		}
		if id := seriesOf(ev); id != "" && !res.Full && !p.touched[id] {
			p.touched[id] = true
			res.Series = append(res.Series, id)
		}
		if len(ev.Recurrence) > 0 {
			continue // a master, not an instance: see notMeeting
		}
		c := s.change(p.calendarID, ev, p.w)
		if i, ok := p.byID[c.ID]; ok {
			res.Changes[i] = c // the later page is the newer word
			continue
		}
		p.byID[c.ID] = len(res.Changes)
		res.Changes = append(res.Changes, c)
	}
}

// change converts one listed instance.
func (s *Source) change(calendarID string, ev *calendar.Event, w Window) Change {
	c := Change{ID: ev.Id, Removed: true}
	m, ok, err := meeting(ev)
	switch {
	case err != nil:
		s.log.Warn("skipping unreadable event", "calendar", calendarID, "event", ev.Id, "err", err)
		c.Why = "unreadable: " + err.Error()
	case !ok:
		c.Why, _ = notMeeting(ev)
	case !m.Start.After(w.From):
		c.Why = "started before the window"
	case m.Start.After(w.Horizon):
		c.Why = "after the horizon"
	default:
		c.Meeting, c.Removed = m, false
	}
	return c
}

// instanceSuffix is the end of the ID Google gives an instance of a
// series: "_" and its original start in UTC, a date for an all-day series
// ("standup_20261130T090000Z", "holiday_20261130"). Event IDs that clients
// choose are base32hex (a-v, 0-9), so the suffix cannot come from one.
var instanceSuffix = regexp.MustCompile(`_[0-9]{8}(T[0-9]{6}Z)?$`)

// seriesOf returns the ID of the recurring event a listed item belongs to
// or is, or "" for a single event: an instance's recurringEventId, a
// master's own ID, or, for a tombstone that came without its
// recurringEventId (Google sends deleted instances as sparse records
// "without recurringEventId / originalStartTime",
// KeepSoftwareSimple/compass-calendar#2808), the series its instance ID
// names.
func seriesOf(ev *calendar.Event) string {
	switch {
	case ev.RecurringEventId != "":
		return ev.RecurringEventId
	case len(ev.Recurrence) > 0:
		return ev.Id
	case ev.Status == "cancelled":
		if loc := instanceSuffix.FindStringIndex(ev.Id); loc != nil && loc[0] > 0 {
			return ev.Id[:loc[0]]
		}
	}
	return ""
}

// keepMeetings drops the removals of a full sync: there is nothing to
// remove from a mirror it replaces.
func keepMeetings(changes []Change) []Change {
	out := changes[:0]
	for _, c := range changes {
		if !c.Removed {
			out = append(out, c)
		}
	}
	return out
}
