package selfservice

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/meetingbot/meetingbot"
)

// People make the bot read calendars: each Home tab opened, each "Check
// again", each "/meetingbot on" and "subscribe". Those reads are outside
// the mirror and its budget, so they are bounded twice: a calendar read
// successfully is not read again for readFresh, whoever asks (reads of
// one calendar at the same time share one call); and one person causes
// at most personReads reads per personEvery, however often they click,
// beyond which they get the last reading (up to lastFor old) or, with
// none, are told to wait. A failed read is kept only errFresh, so that
// one click (the command, then the Home tab it republishes) reads once,
// while whoever fixed the sharing and asks again is read afresh.
const (
	readFresh   = time.Minute
	errFresh    = 5 * time.Second
	lastFor     = 10 * time.Minute
	personReads = 3
	personEvery = time.Minute
	// maxRead bounds the calendars and people remembered.
	maxRead = 10_000
)

// errTooSoon is a read refused because its person made personReads
// within personEvery, and there is no reading to answer with.
var errTooSoon = errors.New("read moments ago; try again in a minute")

// reads keeps the last successful reading of each calendar and the reads
// each person caused.
type reads struct {
	mu      sync.Mutex
	last    map[string]reading     // by calendar ID, lower case
	people  map[string][]time.Time // by Slack user ID: reads within personEvery
	flight  singleflight.Group
	flights map[string]int // by calendar: reads under way
}

// reading is a calendar's meetings as last read successfully, at at,
// from at to the horizon; and the last failure, if later.
type reading struct {
	at       time.Time
	meetings []Meeting
	failedAt time.Time
	err      error
}

// within reports whether at is at most d before now.
func within(at, now time.Time, d time.Duration) bool {
	return !at.IsZero() && now.Sub(at) < d && !now.Before(at)
}

// upcoming returns calendarID's meetings from now to the horizon, earliest
// first, up to limit, with muted series left out, for user and as user
// reads it (their own connected account when it is theirs): from a reading
// younger than readFresh unless force ("Check again"), else read, within
// user's reads. errTooSoon when user has none left and there is no
// reading to answer with.
func (a *App) upcoming(ctx context.Context, userID, calendarID string, force bool, muted []string, limit int) ([]Meeting, error) {
	now := a.now()
	key := strings.ToLower(meetingbot.ReadAs(calendarID, userID))
	r := a.reads.get(key)
	switch {
	case !force && within(r.failedAt, now, errFresh):
		return nil, r.err
	case !force && within(r.at, now, readFresh):
	case a.reads.inFlight(key) || a.reads.allow(userID, now):
		// A read of the calendar under way is shared, and counts against
		// the reads of the one who started it only.
		v, err, _ := a.reads.flight.Do(key, func() (any, error) {
			a.reads.flying(key, 1)
			defer a.reads.flying(key, -1)
			ms, err := a.cals.Upcoming(ctx, calendarID, userID, now, now.Add(a.horizon), limit)
			a.reads.record(key, now, ms, err)
			return ms, err
		})
		if err != nil {
			return nil, err
		}
		r = reading{at: now, meetings: v.([]Meeting)}
	case within(r.at, now, lastFor):
		a.log.Debug("calendar read from the last reading: this person read it moments ago", "user", userID, "calendar", calendarID, "age", now.Sub(r.at))
	default:
		return nil, errTooSoon
	}
	var out []Meeting
	for _, m := range r.meetings {
		if m.Start.Before(now) || (m.Series != "" && slices.Contains(muted, m.Series)) {
			continue
		}
		if len(out) == limit {
			break
		}
		out = append(out, m)
	}
	return out, nil
}

func (r *reads) get(key string) reading {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last[key]
}

// record keeps the outcome of a read made at at: its meetings, or its
// failure beside the last success.
func (r *reads) record(key string, at time.Time, ms []Meeting, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.last == nil || len(r.last) >= maxRead {
		r.last = map[string]reading{} // a flood of calendars: forget rather than grow
	}
	v := r.last[key]
	if err != nil {
		v.failedAt, v.err = at, err
	} else {
		v = reading{at: at, meetings: ms}
	}
	r.last[key] = v
}

// allow reports whether user may cause one more read at now, and counts
// it when so.
func (r *reads) allow(user string, now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.people == nil || len(r.people) >= maxRead {
		r.people = map[string][]time.Time{}
	}
	recent := slices.DeleteFunc(r.people[user], func(at time.Time) bool { return now.Sub(at) >= personEvery || now.Before(at) })
	if len(recent) >= personReads {
		r.people[user] = recent
		return false
	}
	r.people[user] = append(recent, now)
	return true
}

// forget drops what was read of calendarID: the access it is read with
// changed (a person connected or disconnected their account).
func (r *reads) forget(calendarID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.last, strings.ToLower(calendarID))
}

// inFlight reports whether a read of key is under way.
func (r *reads) inFlight(key string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.flights[key] > 0
}

// flying counts a read of key starting (1) or ending (-1).
func (r *reads) flying(key string, d int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.flights == nil {
		r.flights = map[string]int{}
	}
	if r.flights[key] += d; r.flights[key] <= 0 {
		delete(r.flights, key)
	}
}
