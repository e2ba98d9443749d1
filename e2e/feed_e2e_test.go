package e2e

import (
	"context"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/calendar/calendartest"
	"github.com/meetingbot/meetingbot/notify/slacktest"
	"github.com/meetingbot/meetingbot/storage/postgres/pgtest"
	"github.com/meetingbot/meetingbot/storage/sqlite"
)

// End-to-end tests of a channel that follows a team calendar
// ("/meetingbot subscribe team@example.com none changes"): the built bot
// tells #eng each change once, through a SIGKILL between a post and its
// record, two processes on one database, a Calendar outage, and a flood.

// teamEvent puts an event of the team calendar starting at start for
// half an hour in location, stamped updated now, as Google stamps every
// change (Events resource, "updated": "Last modification time of the
// event").
func (w *world) teamEvent(t *testing.T, id, title, location string, start time.Time) {
	t.Helper()
	ev := calendartest.NewEvent(id, title, start, start.Add(30*time.Minute))
	ev.Location = location
	ev.Updated = time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
	if err := w.cal.Put(team, ev); err != nil {
		t.Fatalf("Put(%s) = %v", id, err)
	}
}

// feedNotices returns the change notices posted in #eng.
func (w *world) feedNotices() []slacktest.Message {
	var out []slacktest.Message
	for _, m := range w.inChannel(engID) {
		if m.Metadata != nil && strings.HasPrefix(fmt.Sprint(m.Metadata.EventPayload["subscription"]), "feed:") {
			out = append(out, m)
		}
	}
	return out
}

// followTeam has Lisa (in SLACK_ADMINS) make #eng follow the team
// calendar's changes, and waits for the bot's first reading of it.
func (w *world) followTeam(t *testing.T, addr string) {
	t.Helper()
	reply := w.slash(t, addr, lisaID, engID, "subscribe "+team+" none changes")
	if !strings.HasPrefix(reply, "Subscribed: I'll post in this channel each change of the calendar") {
		t.Fatalf("/meetingbot subscribe %s none changes = %q", team, reply)
	}
	time.Sleep(3 * time.Second) // the first reading: it announces nothing
}

// waitNotices waits until #eng has n change notices.
func (w *world) waitNotices(t *testing.T, n int, what string) {
	t.Helper()
	eventually(t, 20*time.Second, what, func() bool { return len(w.feedNotices()) >= n })
}

// TestChangeNoticesOfEachKindOnceThroughAKill: an event added, moved,
// renamed, re-placed and cancelled is told once each in #eng; the bot
// killed (SIGKILL) after Slack stored a notice and before it heard back
// finds it after the restart rather than posting it again.
func TestChangeNoticesOfEachKindOnceThroughAKill(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	env := w.selfServiceEnv()
	w.teamEvent(t, "standup", "Standup", "Room 1", at(2*time.Hour))
	p := start(t, w.dir, env)
	addr := p.ready()
	w.followTeam(t, addr)
	if n := len(w.feedNotices()); n != 0 {
		t.Fatalf("notices after the first reading = %d, want 0", n)
	}

	w.teamEvent(t, "review", "Review", "Room 3", at(3*time.Hour))
	w.waitNotices(t, 1, "the notice of the event added")
	moved := at(150 * time.Minute)
	w.teamEvent(t, "standup", "Standup", "Room 1", moved)
	w.waitNotices(t, 2, "the notice of the move")

	// Slack stores the next notice and holds its answer back; the bot is
	// killed meanwhile.
	w.slack.Fail("chat.postMessage", engID, slacktest.Fault{Delay: 8 * time.Second})
	w.teamEvent(t, "standup", "Daily standup", "Room 1", moved)
	w.waitNotices(t, 3, "the notice of the rename, stored")
	p.signal(syscall.SIGKILL)
	p.wait(10 * time.Second)
	p = start(t, w.dir, env)
	p.ready()

	w.teamEvent(t, "standup", "Daily standup", "Room 2", moved)
	w.waitNotices(t, 4, "the notice of the new place")
	if err := w.cal.Delete(team, "review"); err != nil {
		t.Fatal(err)
	}
	w.waitNotices(t, 5, "the notice of the cancellation")
	time.Sleep(4 * time.Second) // more passes, a resync
	got := w.feedNotices()
	var texts []string
	for _, m := range got {
		texts = append(texts, m.Text)
	}
	want := []string{"Review added", "Standup moved to", "Daily standup renamed from Standup", "Daily standup now in Room 2, was Room 1", "Review cancelled: was"}
	if len(got) != len(want) {
		t.Fatalf("notices = %q, want %d: %q", texts, len(want), want)
	}
	for i, w := range want {
		if !strings.Contains(texts[i], w) {
			t.Errorf("notice %d = %q, want %q", i, texts[i], w)
		}
	}
	found := false
	entries := ledgerAll(t, env["DATABASE_PATH"], meetingbot.FeedSubscription("slack:"+team+"="+engID))
	for _, e := range entries {
		found = found || e.Code == meetingbot.ReasonInterruptedConfirmed
		if e.Outcome != meetingbot.Sent {
			t.Errorf("ledger entry %s = %s %s, want sent", e.Key, e.Outcome, e.Code)
		}
	}
	if len(entries) != len(want) {
		t.Errorf("ledger entries = %d, want %d", len(entries), len(want))
	}
	if !found {
		t.Errorf("no notice recorded %s: the one the kill interrupted was not found in Slack", meetingbot.ReasonInterruptedConfirmed)
	}
}

// TestTwoProcessesTellAFloodAsOneDigest: 200 events imported into the
// team calendar while two bots share one database are one digest in
// #eng.
func TestTwoProcessesTellAFloodAsOneDigest(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	env := w.selfServiceEnv()
	p1 := start(t, w.dir, env)
	addr := p1.ready()
	p2 := start(t, w.dir, env)
	p2.ready()
	w.followTeam(t, addr)
	for i := range 200 {
		w.teamEvent(t, fmt.Sprintf("import%03d", i), fmt.Sprintf("Imported %d", i), "", at(time.Duration(i+2)*30*time.Minute))
	}
	w.waitNotices(t, 1, "the digest")
	time.Sleep(5 * time.Second)
	got := w.feedNotices()
	if len(got) != 1 || !strings.HasPrefix(got[0].Text, "200 changes to the calendar "+team+": 200 added") {
		var texts []string
		for _, m := range got {
			texts = append(texts, m.Text)
		}
		t.Errorf("notices = %q, want one digest of 200 added", texts)
	}
}

// TestAMoveDuringACalendarOutageIsToldOnceAfter: the Calendar API
// answers 503 for a while, during which an event moves; the channel is
// told once, after the outage.
func TestAMoveDuringACalendarOutageIsToldOnceAfter(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	env := w.selfServiceEnv()
	w.teamEvent(t, "planning", "Planning", "", at(4*time.Hour))
	p := start(t, w.dir, env)
	addr := p.ready()
	w.followTeam(t, addr)
	end := time.Now().Add(10 * time.Second)
	w.cal.SetOutage(time.Now(), end)
	time.Sleep(2 * time.Second)
	w.teamEvent(t, "planning", "Planning", "", at(5*time.Hour))
	time.Sleep(time.Until(end) - time.Second)
	if n := len(w.feedNotices()); n != 0 {
		t.Fatalf("notices during the outage = %d, want 0", n)
	}
	w.waitNotices(t, 1, "the notice of the move after the outage")
	time.Sleep(4 * time.Second)
	if got := w.feedNotices(); len(got) != 1 || !strings.Contains(got[0].Text, "Planning moved to") {
		t.Errorf("notices = %d (%q), want one move", len(got), got[0].Text)
	}
}

// ledgerAll returns the ledger entries of sub due within an hour of now.
func ledgerAll(t *testing.T, path, sub string) []meetingbot.Entry {
	t.Helper()
	s, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatalf("sqlite.Open(%s) = %v", path, err)
	}
	defer s.Close()
	entries, err := s.Range(context.Background(), sub, time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatalf("Range(%s) = %v", sub, err)
	}
	return entries
}

// TestChannelAgendasForTheNextMinuteArriveOnce: Lisa has #eng post the
// team calendar's daily agenda and its weekly one (today's weekday) at
// the next minute in her Slack zone; the built bot posts both at that
// minute, within a couple of seconds, once each. (The DST days of both
// are agenda.TestChannelAgendasAcrossDSTInTwoZones, on a fake clock.)
func TestChannelAgendasForTheNextMinuteArriveOnce(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	env := w.selfServiceEnv()
	var loc *time.Location
	for _, name := range []string{"Asia/Seoul", "America/New_York"} {
		l, err := time.LoadLocation(name)
		if err != nil {
			t.Fatal(err)
		}
		if h := time.Now().In(l).Hour(); h >= 1 && h <= 21 {
			loc = l
			break
		}
	}
	w.slack.SetProfile(lisaID, slacktest.Profile{TZ: loc.String()})
	p := start(t, w.dir, env)
	addr := p.ready()
	due := time.Now().In(loc).Truncate(time.Minute).Add(time.Minute)
	if time.Until(due) < 8*time.Second {
		due = due.Add(time.Minute)
	}
	w.teamEvent(t, "review", "Design review", "", due.Add(90*time.Minute))
	hhmm, day := due.Format("15:04"), strings.ToLower(due.Weekday().String()[:3])
	reply := w.slash(t, addr, lisaID, engID, "subscribe "+team+" none daily "+hhmm+" weekly "+day+" "+hhmm)
	if !strings.HasPrefix(reply, "Subscribed: I'll post in this channel a daily agenda at "+hhmm) {
		t.Fatalf("/meetingbot subscribe = %q", reply)
	}
	agendas := func() []slacktest.Message {
		var out []slacktest.Message
		for _, m := range w.inChannel(engID) {
			if m.Metadata != nil && strings.HasPrefix(fmt.Sprint(m.Metadata.EventPayload["subscription"]), "chagenda:") {
				out = append(out, m)
			}
		}
		return out
	}
	eventually(t, time.Until(due)+15*time.Second, "the channel's agendas", func() bool { return len(agendas()) >= 2 })
	time.Sleep(3 * time.Second)
	got := agendas()
	if len(got) != 2 {
		t.Fatalf("agendas in #eng = %d, want a daily and a weekly one", len(got))
	}
	for _, m := range got {
		if m.Posted.Before(due) || m.Posted.After(due.Add(2*time.Second)) {
			t.Errorf("agenda %q at %v, want within 2s of %v", m.Text, m.Posted, due)
		}
		if !strings.Contains(m.Text, "Design review") {
			t.Errorf("agenda %q, want the design review", m.Text)
		}
	}
}

// TestTwoReplicasOnePostgresTellEachChangeOnce: two replicas of the bot
// on one PostgreSQL tell #eng each change once, and the one left after
// the other is killed goes on telling them.
func TestTwoReplicasOnePostgresTellEachChangeOnce(t *testing.T) {
	t.Parallel()
	dbURL := withPassword(t, pgtest.URL(t))
	w := newWorld(t)
	env := w.selfServiceEnv()
	delete(env, "DATABASE_PATH")
	env["DATABASE_URL"] = dbURL
	w.teamEvent(t, "standup", "Standup", "Room 1", at(2*time.Hour))
	a, b := start(t, w.dir, env), start(t, w.dir, env)
	addr := a.ready()
	b.ready()
	w.followTeam(t, addr)
	moved := at(150 * time.Minute)
	w.teamEvent(t, "review", "Review", "", at(3*time.Hour))
	w.waitNotices(t, 1, "the notice of the event added")
	w.teamEvent(t, "standup", "Standup", "Room 1", moved)
	w.waitNotices(t, 2, "the notice of the move")
	a.signal(syscall.SIGKILL)
	a.wait(10 * time.Second)
	w.teamEvent(t, "standup", "Daily standup", "Room 1", moved)
	w.waitNotices(t, 3, "the notice of the rename, from the replica left")
	time.Sleep(4 * time.Second)
	if got := w.feedNotices(); len(got) != 3 {
		var texts []string
		for _, m := range got {
			texts = append(texts, m.Text)
		}
		t.Errorf("notices = %q, want 3, one per change", texts)
	}
}
