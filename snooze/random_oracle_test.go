package snooze_test

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/meetingbot/meetingbot"
)

// record is what a case of TestRandomSnoozesCrashesAndProcesses did and
// met, for its oracle.
type record struct {
	tl      *timeline
	dms     []dm
	timers  []meetingbot.Timer
	crashes []time.Time             // instants a process died
	noneUp  [][2]time.Time          // spans no process was up
	trouble map[string][]time.Time  // Slack's trouble, by timer key
	learned map[string][]learn      // what the processes learned of each meeting's start, by ID
	clicks  map[string][]clickAdded // the clicks that added a timer, by group

	mu     sync.Mutex
	events []event // what the processes did, for a failure's story
}

// event is one thing a process did to a timer (key), or met (no key).
type event struct{ key, line string }

func (r *record) note(key, format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, event{key, fmt.Sprintf(format, args...)})
}

// story is what happened to the timers a failure names, and the crashes
// and boots around.
func (r *record) story(failure string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var lines []string
	for _, e := range r.events {
		if e.key == "" || strings.Contains(failure, e.key) {
			lines = append(lines, "  "+e.line)
		}
	}
	return strings.Join(lines, "\n")
}

// learn is a start of a meeting a process learned (the mirror's Follow,
// or its catch-up) at an instant.
type learn struct{ at, start time.Time }

// clickAdded is a click that added a timer: when, and the start its
// button showed.
type clickAdded struct{ at, start time.Time }

// excused reports whether something the case did excuses a message of
// timer key (of meeting id) due at from coming only at to: a process died
// then, or within a poll before (the timer it stored or moved, the other
// process sees only when it reads the store again: docs/design.md), no
// process was up, Slack lost an answer or a lookup, or, for "at start",
// the move to that start was learned only after it.
func (r *record) excused(key, id string, atStart bool, clicked clickAdded, from, to time.Time) bool {
	for _, c := range r.crashes {
		if !c.Before(from.Add(-poll)) && !c.After(to) {
			return true
		}
	}
	for _, span := range r.noneUp {
		if !span[0].After(to) && span[1].After(from) {
			return true
		}
	}
	for _, at := range r.trouble[key] {
		if !at.Before(from) && !at.After(to) {
			return true
		}
	}
	if !atStart {
		return false
	}
	known := clicked.start // what the processes knew of its start when it was due
	for _, l := range r.learned[id] {
		if !l.at.Before(clicked.at) && !l.at.After(from) {
			known = l.start
		}
	}
	return !known.Equal(from)
}

// clickOf is the click that made the wait of group that ended at t.
func (r *record) clickOf(group string, t time.Time) clickAdded {
	var out clickAdded
	for _, c := range r.clicks[group] {
		if !c.at.After(t) {
			out = c
		}
	}
	return out
}

// check is the oracle; see TestRandomSnoozesCrashesAndProcesses.
func (r *record) check(st *stats) error {
	byKey := map[string]meetingbot.Timer{}
	movedTo := map[string]bool{}
	for _, t := range r.timers {
		byKey[t.Key] = t
		if t.State == meetingbot.TimerMoved {
			movedTo[t.Next] = true
		}
	}
	delivered := map[string][]dm{}
	perGroup := map[string]int{}
	for _, d := range r.dms {
		delivered[d.r.Key] = append(delivered[d.r.Key], d)
	}
	for key, ds := range delivered {
		if len(ds) > 1 {
			st.duplicates += len(ds) - 1
			return fmt.Errorf("%s delivered %d times", key, len(ds))
		}
		d := ds[0]
		t, ok := byKey[key]
		if !ok {
			return fmt.Errorf("%s delivered without a timer", key)
		}
		perGroup[t.Group]++
		s, _ := meetingbot.ParseSnooze(t)
		v, there := r.tl.at(s.Meeting.ID, d.at)
		atStart := s.Mode == meetingbot.SnoozeAtStart
		switch {
		case !there:
			return fmt.Errorf("%s delivered at %v: its meeting was not there then", key, d.at)
		case d.at.Before(t.FireAt):
			return fmt.Errorf("%s delivered at %v, before its instant %v", key, d.at, t.FireAt)
		case !d.at.Before(v.end()):
			return fmt.Errorf("%s delivered at %v, after its meeting's end %v", key, d.at, v.end())
		case atStart && d.at.Before(v.start):
			return fmt.Errorf("%s (at start) delivered at %v, before the start %v", key, d.at, v.start)
		case !d.r.Meeting.Start.Equal(v.start):
			return fmt.Errorf("%s delivered at %v naming start %v; the meeting starts at %v", key, d.at, d.r.Meeting.Start, v.start)
		case d.moved != !s.Meeting.Start.Equal(v.start):
			return fmt.Errorf("%s delivered at %v saying moved=%v, clicked for %v, the meeting at %v", key, d.at, d.moved, s.Meeting.Start, v.start)
		}
		want := t.FireAt
		if atStart {
			want = v.start // "at start" follows the calendar
		}
		st.delivered++
		switch {
		case d.at.Equal(want):
			st.onTime++
			if movedTo[key] {
				st.movedOnTime++
			}
		case r.excused(key, v.id, atStart, r.clickOf(t.Group, d.at), want, d.at):
			st.late++
		default:
			return fmt.Errorf("%s delivered at %v, due at %v, and nothing kept it (no crash, no downtime, no trouble, the move known)", key, d.at, want)
		}
	}
	for group, n := range perGroup {
		if made := len(r.clicks[group]); n > made {
			return fmt.Errorf("group %s: %d DMs of %d clicks that made a timer", group, n, made)
		}
	}
	for _, t := range r.timers {
		st.added++
		s, _ := meetingbot.ParseSnooze(t)
		switch {
		case t.State == meetingbot.TimerPending:
			return fmt.Errorf("timer %s still pending at the end (due %v)", t.Key, t.DueAt)
		case t.State == meetingbot.TimerMoved:
			st.moved++
			if t.DoneAt.Before(t.FireAt) {
				st.rekeyed++ // followed its meeting before its instant
			}
			next, ok := byKey[t.Next]
			if !ok {
				return fmt.Errorf("timer %s moved to %s, which is not stored", t.Key, t.Next)
			}
			if next.CreatedAt.Before(t.DoneAt) {
				return fmt.Errorf("timer %s moved to %s, a timer that ended before: the wait is lost", t.Key, t.Next)
			}
		case t.Code == meetingbot.ReasonSent:
			if len(delivered[t.Key]) == 0 {
				return fmt.Errorf("timer %s recorded sent, not in Slack", t.Key)
			}
		case len(delivered[t.Key]) > 0:
			return fmt.Errorf("timer %s delivered, recorded %s (%s)", t.Key, t.Code, t.Reason)
		case t.Code == meetingbot.ReasonMeetingCancelled:
			st.cancelled++
			if _, there := r.tl.at(s.Meeting.ID, t.DoneAt); there {
				return fmt.Errorf("timer %s ended for a cancelled meeting at %v, which was there", t.Key, t.DoneAt)
			}
			if v, ok := r.tl.last(s.Meeting.ID, t.DoneAt); ok && v.declined {
				st.declined++
			}
		case t.Code == meetingbot.ReasonMeetingEnded:
			st.ended++
			v, there := r.tl.at(s.Meeting.ID, t.DoneAt)
			if !there || t.DoneAt.Before(v.end()) {
				return fmt.Errorf("timer %s ended for a meeting that had ended at %v; it ends at %v (there: %v)", t.Key, t.DoneAt, v.end(), there)
			}
			want, atStart := t.FireAt, s.Mode == meetingbot.SnoozeAtStart
			if atStart {
				want = v.start
			}
			if !r.excused(t.Key, v.id, atStart, r.clickOf(t.Group, t.DoneAt), want, t.DoneAt) {
				return fmt.Errorf("timer %s due at %v ended without its DM at %v, the meeting's end, and nothing kept it", t.Key, want, t.DoneAt)
			}
		default:
			return fmt.Errorf("timer %s ended %s (%s) without a DM", t.Key, t.Code, t.Reason)
		}
	}
	return nil
}
