package calendartest

import (
	"bytes"
	"cmp"
	"crypto/rand"
	"encoding/json"
	"maps"
	"net/url"
	"slices"
	"time"

	"google.golang.org/api/calendar/v3"
)

// Incremental synchronization, as Google documents it in "Synchronize
// resources efficiently"
// (https://developers.google.com/workspace/calendar/api/guides/sync) and on
// the syncToken parameter of events.list
// (https://developers.google.com/workspace/calendar/api/v3/reference/events/list):
//
//   - the last page of a list carries nextSyncToken, a token that names the
//     state of the calendar the list was cut from;
//   - a list with syncToken returns only the entries that changed since that
//     state; entries deleted since are always returned, with status
//     "cancelled", and showDeleted may not be false;
//   - iCalUID, orderBy, privateExtendedProperty, q, sharedExtendedProperty,
//     timeMin, timeMax and updatedMin may not come with a syncToken (400);
//   - a token the server no longer accepts is answered 410 Gone, reason
//     fullSyncRequired: the client clears its store and syncs in full.
//
// The server numbers the states of each calendar (every Put, Delete,
// SplitFollowing and Purge makes a new one) and keeps a snapshot of the
// recent states it handed out a token or a page token for; the changes since
// a token are the difference between its snapshot and the state now, each
// side listed as the request asks (singleEvents expands series the same way
// on both). A token whose snapshot was dropped, or expired with
// ExpireSyncTokens, gets 410.

// maxSnapshots bounds the states kept per calendar; a token for an older
// state has expired.
const maxSnapshots = 64

// forbiddenWithSyncToken are the events.list parameters that cannot come
// with a syncToken, "to ensure consistency of the client state".
var forbiddenWithSyncToken = []string{
	"iCalUID", "orderBy", "privateExtendedProperty", "q", "sharedExtendedProperty", "timeMin", "timeMax", "updatedMin",
}

// SyncRestrictionsMessage is the message of the 400 answer to a list that
// sends a syncToken with a parameter it forbids, or with showDeleted=false.
const SyncRestrictionsMessage = "Sync token cannot be used with other request restrictions."

// syncState is the per-calendar bookkeeping of sync tokens.
type syncState struct {
	// version numbers the calendar's states; it grows with every change.
	version int64
	// snaps are the kept states, by version, oldest first in kept.
	snaps map[int64]*eventSet
	kept  []int64
	// tokens maps a token handed out to the state it names, and
	// byVersion the other way: one state, one token.
	tokens    map[string]int64
	byVersion map[int64]string
}

// checkSyncQuery refuses what events.list refuses alongside a syncToken.
func checkSyncQuery(q url.Values) (reason, message string) {
	for _, name := range forbiddenWithSyncToken {
		if q.Has(name) {
			return "invalid", SyncRestrictionsMessage
		}
	}
	if v := q.Get("showDeleted"); v == "false" || v == "False" || v == "0" {
		return "invalid", SyncRestrictionsMessage
	}
	return "", ""
}

// changed records a change of c's events: a new state, and an "exists"
// notification to every channel watching c. s.mu must be held.
func (s *Server) changed(c *calendarState) {
	c.sync.version++
	s.notifyChanged(c)
}

// state returns the state version of c, as kept, or the current state
// (kept from now on) when version is -1 or no longer kept, and its version.
func (c *calendarState) state(version int64) (*eventSet, int64) {
	if version >= 0 {
		if snap, ok := c.sync.snaps[version]; ok {
			return snap, version
		}
	}
	v := c.sync.version
	if snap, ok := c.sync.snaps[v]; ok {
		return snap, v
	}
	if c.sync.snaps == nil {
		c.sync.snaps = map[int64]*eventSet{}
		c.sync.tokens = map[string]int64{}
		c.sync.byVersion = map[int64]string{}
	}
	snap := &eventSet{events: make(map[string]*calendar.Event, len(c.events)), order: slices.Clone(c.order)}
	for id, ev := range c.events {
		snap.events[id] = ev // stored events are never changed in place
	}
	c.sync.snaps[v] = snap
	c.sync.kept = append(c.sync.kept, v)
	for len(c.sync.kept) > maxSnapshots {
		old := c.sync.kept[0]
		c.sync.kept = c.sync.kept[1:]
		delete(c.sync.snaps, old)
		delete(c.sync.tokens, c.sync.byVersion[old])
		delete(c.sync.byVersion, old)
	}
	return snap, v
}

// syncToken returns the token naming state version, which must be kept.
func (c *calendarState) syncToken(version int64) string {
	if t, ok := c.sync.byVersion[version]; ok {
		return t
	}
	t := rand.Text()
	c.sync.tokens[t] = version
	c.sync.byVersion[version] = t
	return t
}

// since returns the state a sync token names, if the server still holds it.
func (c *calendarState) since(token string) (*eventSet, bool) {
	v, ok := c.sync.tokens[token]
	if !ok {
		return nil, false
	}
	snap, ok := c.sync.snaps[v]
	return snap, ok
}

// ExpireSyncTokens makes every sync token handed out for calendarID invalid,
// as Google does when a token expires or the calendar's sharing changes: the
// next list with one of them is answered 410 Gone, fullSyncRequired. Tokens
// handed out afterwards are valid.
func (s *Server) ExpireSyncTokens(calendarID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.calendars[calendarID]
	if c == nil {
		return
	}
	clear(c.sync.tokens)
	clear(c.sync.byVersion)
}

// changes returns what a list with a syncToken returns: the entries of cur
// that are new or differ from since, then, as cancelled, those of since
// that cur no longer lists, whatever showDeleted says: "All events deleted
// since the previous list request will always be in the result set"
// (events.list, syncToken). Entries keep refuses are left out. A
// cancelled entry comes as a sparse record, its id and status: Google
// "often reports a deleted recurring instance as a sparse {id, status:
// cancelled} record without recurringEventId / originalStartTime"
// (KeepSoftwareSimple/compass-calendar#2808), and a cancelled event can
// come with "most of the attributes such as the summary … null"
// (phw198/OutlookGoogleCalendarSync#2124).
//
// A list that asks for showDeleted=true with singleEvents=true besides
// gets every cancelled entry the calendar has, however long ago it was
// deleted, as a report has it: "When adding the option show_deleted
// combined with single_events set to true and with a sync token set, all
// events ever deleted are returned"
// (googleapis/google-api-ruby-client#860).
func changes(since, cur *eventSet, lq listQuery, keep func(*calendar.Event) bool) []*calendar.Event {
	everDeleted := lq.showDeleted && lq.singleEvents
	if since == cur && !everDeleted {
		return nil
	}
	lq.showDeleted = true
	before := since.list(lq)
	was := make(map[string][]byte, len(before))
	for _, ev := range before {
		was[ev.Id] = encode(ev)
	}
	var out []*calendar.Event
	now := map[string]bool{}
	for _, ev := range cur.list(lq) {
		now[ev.Id] = true
		if b, ok := was[ev.Id]; (!ok || !bytes.Equal(b, encode(ev)) || (everDeleted && ev.Status == "cancelled")) && keep(ev) {
			out = append(out, ev)
		}
	}
	for _, ev := range before {
		if !now[ev.Id] && keep(ev) {
			out = append(out, ev)
		}
	}
	for i, ev := range out {
		if ev.Status == "cancelled" || !now[ev.Id] {
			out[i] = tombstone(ev)
		}
	}
	return out
}

// SeriesDeltas is how a list with a syncToken and singleEvents=true
// reports a change of a recurring series' master (created, edited, its
// rule changed, deleted or purged). Google does not document it, and the
// reports differ: a deleted series came back as "only six months worth of
// events with the status 'cancelled'" (googleapis/google-api-ruby-client#860,
// see SetDeltaHorizon), others cleaned stale instances on full syncs
// (kidd/org-gcal.el#81: "That recurrence was removed from google calendar,
// but they never disappeared"), a sync listed a series' master itself
// (phw198/OutlookGoogleCalendarSync#2124, an item with "recurrence"), and
// deleted instances come as sparse records "without recurringEventId /
// originalStartTime" (KeepSoftwareSimple/compass-calendar#2808).
type SeriesDeltas int

const (
	// DeltaEveryInstance lists every instance that changed, each deleted
	// one as cancelled: the difference of the two states. The default.
	DeltaEveryInstance SeriesDeltas = iota
	// DeltaMasterOnly lists the master alone, none of its instances: as
	// it is now when it changed, and as a sparse record (its id and
	// status "cancelled") when the series was deleted or purged.
	DeltaMasterOnly
)

// SetSeriesDeltas makes lists with a syncToken on every calendar report
// changes of a series' master as mode says.
func (s *Server) SetSeriesDeltas(mode SeriesDeltas) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seriesDeltas = mode
}

// SetDeltaHorizon makes lists with a syncToken leave out the instances of
// series (changed or deleted) whose original start is more than d after
// the server's clock (SetClock), as the report of a deleted series coming
// back as six months of cancelled instances has it
// (googleapis/google-api-ruby-client#860). 0, the default, leaves out
// nothing.
func (s *Server) SetDeltaHorizon(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.deltaHorizon = max(d, 0)
}

// delta is what a list with a syncToken returns, shaped by the server's
// SeriesDeltas and delta horizon. s.mu must be held.
func (s *Server) delta(since, cur *eventSet, lq listQuery) []*calendar.Event {
	if !lq.singleEvents {
		return changes(since, cur, lq, func(*calendar.Event) bool { return true })
	}
	var masters map[string]*calendar.Event
	if s.seriesDeltas == DeltaMasterOnly {
		masters = changedMasters(since, cur)
	}
	limit := time.Time{}
	if s.deltaHorizon > 0 {
		limit = s.push.now().Add(s.deltaHorizon)
	}
	out := changes(since, cur, lq, func(ev *calendar.Event) bool {
		if ev.RecurringEventId == "" {
			return true
		}
		if _, ok := masters[ev.RecurringEventId]; ok {
			return false
		}
		orig, err := instant(cmp.Or(ev.OriginalStartTime, ev.Start))
		return limit.IsZero() || err != nil || !orig.After(limit)
	})
	for _, id := range slices.Sorted(maps.Keys(masters)) {
		out = append(out, masters[id])
	}
	return out
}

// changedMasters returns the masters of the series that differ between
// since and cur, by id: as they are in cur, or as a sparse cancelled
// record when cur has them cancelled or no longer has them.
func changedMasters(since, cur *eventSet) map[string]*calendar.Event {
	out := map[string]*calendar.Event{}
	for id, now := range cur.events {
		if len(now.Recurrence) == 0 {
			continue
		}
		if was, ok := since.events[id]; ok && bytes.Equal(encode(was), encode(now)) {
			continue
		}
		if now.Status == "cancelled" {
			out[id] = tombstone(now)
		} else {
			out[id] = clone(now)
		}
	}
	for id, was := range since.events {
		if _, ok := cur.events[id]; !ok && len(was.Recurrence) > 0 {
			out[id] = tombstone(was)
		}
	}
	return out
}

// tombstone is what Google lists of a deleted entry, often: its identity
// and status "cancelled" (see changes).
func tombstone(ev *calendar.Event) *calendar.Event {
	return &calendar.Event{Kind: ev.Kind, Etag: ev.Etag, Id: ev.Id, Status: "cancelled"}
}

func encode(ev *calendar.Event) []byte {
	b, err := json.Marshal(ev)
	if err != nil {
		panic("calendartest: marshal event: " + err.Error())
	}
	return b
}
