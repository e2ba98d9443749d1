// Package demo is the bot's built-in demo: the bot built exactly as in
// production (package daemon) against a local Calendar emulator and a
// local Slack emulator, a script of meetings added, moved and cancelled
// and a slash command typed as Slack would, each message printed as Slack
// would show it, and at the end a summary read from the ledger.
package demo

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	gcal "google.golang.org/api/calendar/v3"

	"github.com/meetingbot/meetingbot/calendar/calendartest"
	"github.com/meetingbot/meetingbot/config"
	"github.com/meetingbot/meetingbot/daemon"
	"github.com/meetingbot/meetingbot/internal/logger"
	"github.com/meetingbot/meetingbot/notify/slacktest"
)

// The demo's world: Alice's calendar reminds her by DM, the team calendar
// reminds #engineering.
const (
	demoAlice        = "alice@example.com"
	demoTeam         = "team@example.com"
	demoChannel      = "#engineering"
	demoChannelID    = "C0DEMOENG1"
	demoTick         = "2s"
	demoOffsets      = "1m,0"
	demoAliceSlackID = "U0ALICE001"
	// Bob is not in CALENDARS: he turns his reminders on from Slack.
	demoBob        = "bob@example.com"
	demoBobSlackID = "U0BOB00001"
	demoBobCommand = "on 1m,0"
)

// Run runs the bot exactly as in production, against a local Calendar
// emulator and a local Slack emulator, and prints each reminder as Slack
// would show it. The operator's DATABASE_PATH, HTTP_ADDR, LOG_LEVEL and
// LOG_FORMAT are honoured (a temporary database, a free loopback port, warn
// and text otherwise); Slack, Google, CALENDARS, offsets and tick are the
// demo's own. version is the build's, for the start-up line.
func Run(ctx context.Context, getenv func(string) string, stdout, stderr io.Writer, version string) error {
	w, err := newWorld(getenv)
	if err != nil {
		return err
	}
	defer w.close()
	log := logger.New(w.cfg.LogLevel, w.cfg.LogFormat, stderr)

	out := &demoPrinter{w: stdout}
	w.slack.OnMessage(out.message)
	script := newDemoScript(w.cal, out, time.Now())
	script.slack, script.secret = w.slack, w.secret
	if err := script.seed(); err != nil {
		return fmt.Errorf("demo: %w", err)
	}

	var wg sync.WaitGroup
	stop, cancel := context.WithCancel(ctx)
	defer cancel()
	script.finish = cancel
	b, err := daemon.New(stop, w.cfg, daemon.Options{Logger: log, Version: version})
	if err != nil {
		if stop.Err() != nil {
			return nil // stopped before the bot listened: nothing to sum up
		}
		return err
	}
	script.addr = b.Addr()
	out.banner(script.addr, w.cfg.DatabasePath, script)
	wg.Go(func() { script.play(stop) })
	err = b.Run(stop)
	b.Close()
	cancel()
	wg.Wait()
	if err != nil {
		return err
	}
	// What the bot recorded, read once it has stopped, from the first
	// trigger it could have met to the last reminder's.
	entries, err := demoLedger(context.WithoutCancel(ctx), w.cfg.DatabasePath, script.start.Add(-time.Minute), script.start.Add(script.until+time.Minute))
	if err != nil {
		return fmt.Errorf("demo: read the ledger: %w", err)
	}
	now, err := demoCalendar(context.WithoutCancel(ctx), w.cal, script.meetings)
	if err != nil {
		return fmt.Errorf("demo: read the calendars: %w", err)
	}
	out.summary(entries, script.titles, withoutReminder(out, entries, script.meetings, now, time.Now()), !script.finished.Load())
	return nil
}

// world is the demo's Calendar and Slack, and the configuration that
// points the bot at them.
type world struct {
	cal    *calendartest.Server
	slack  *slacktest.Server
	secret string // the signing secret of the demo's slash commands
	cfg    config.Config
	close  func()
}

// newWorld starts the emulators and returns the bot's configuration for
// them, the operator's variables checked first, before anything starts.
func newWorld(getenv func(string) string) (*world, error) {
	placeholder := map[string]string{
		"SLACK_BOT_TOKEN": "xoxb-demo", "GOOGLE_CREDENTIALS_JSON": `{"type":"service_account"}`,
	}
	if getenv("DATABASE_PATH") == "" {
		// The demo's ledger goes to a temporary directory, not the
		// working one, which need not be writable.
		placeholder["DATABASE_PATH"] = filepath.Join(os.TempDir(), "meetingbot-demo.db")
	}
	if _, err := config.Parse(demoEnv(getenv, placeholder)); err != nil {
		return nil, err
	}

	w := &world{cal: calendartest.NewServer(), slack: slacktest.NewServer()}
	var closers []func()
	w.close = func() {
		for _, c := range closers {
			c()
		}
		w.slack.Close()
		w.cal.Close()
	}
	if err := w.configure(getenv, &closers); err != nil {
		w.close()
		return nil, err
	}
	return w, nil
}

// configure fills the emulators with the demo's people and channel, and
// w.cfg with the bot's configuration for them; what must be undone when
// the demo ends goes to closers.
func (w *world) configure(getenv func(string) string, closers *[]func()) error {
	var err error
	w.slack.AddUser(slacktest.User{ID: demoAliceSlackID, Name: "alice", Email: demoAlice})
	w.slack.AddUser(slacktest.User{ID: demoBobSlackID, Name: "bob", Email: demoBob})
	w.slack.AddChannel(slacktest.Channel{ID: demoChannelID, Name: demoChannel[1:], Member: true})
	if w.secret, err = demoSecret(); err != nil {
		return fmt.Errorf("demo: %w", err)
	}

	env := map[string]string{
		"SLACK_BOT_TOKEN":         slacktest.Token,
		"SLACK_API_URL":           w.slack.URL(),
		"GOOGLE_CREDENTIALS_JSON": string(w.cal.ServiceAccountJSON()),
		"GOOGLE_API_ENDPOINT":     w.cal.Endpoint(),
		// Self-service on: the demo types a slash command as Slack would.
		"SLACK_SIGNING_SECRET": w.secret,
	}
	if getenv("DATABASE_PATH") == "" {
		dir, err := os.MkdirTemp("", "meetingbot-demo-")
		if err != nil {
			return fmt.Errorf("demo: %w", err)
		}
		*closers = append(*closers, func() { os.RemoveAll(dir) })
		env["DATABASE_PATH"] = filepath.Join(dir, "reminders.db")
	}
	w.cfg, err = config.Parse(demoEnv(getenv, env))
	return err
}

// demoSecret returns a signing secret for the demo's own slash commands:
// 32 hex digits, as Slack's are.
func demoSecret() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// demoEnv returns a getenv that answers the demo's fixed settings, then
// env, then the operator's environment for what remains.
func demoEnv(getenv func(string) string, env map[string]string) func(string) string {
	fixed := map[string]string{
		"SLACK_API_URL": "", "GOOGLE_API_ENDPOINT": "", "GOOGLE_APPLICATION_CREDENTIALS": "",
		"GOOGLE_IMPERSONATE": "false",
		"CALENDARS":          demoAlice + "," + demoTeam + "=" + demoChannel,
		"REMINDER_OFFSETS":   demoOffsets,
		"TICK_INTERVAL":      demoTick,
		"HTTP_ADDR":          "127.0.0.1:0",
		"LOG_LEVEL":          "warn",
		"LOG_FORMAT":         "text",
	}
	operator := map[string]bool{"DATABASE_PATH": true, "HTTP_ADDR": true, "LOG_LEVEL": true, "LOG_FORMAT": true}
	return func(k string) string {
		if v, ok := env[k]; ok {
			return v
		}
		if v := getenv(k); operator[k] && v != "" {
			return v
		}
		// The operator's SLACK_BOT_TOKEN, SLACK_SIGNING_SECRET, CALENDARS
		// and the like are not the demo's.
		return fixed[k]
	}
}

// demoStep is one change the demo makes to a calendar while it runs, or
// one thing a person does in Slack.
type demoStep struct {
	at   time.Duration // after the demo starts
	say  string        // printed after do, unless empty
	do   func() error
	done bool
}

// demoScript seeds the calendars and plays the changes: one meeting moved,
// one cancelled, one created after its reminder time, and Bob turning his
// reminders on from Slack.
type demoScript struct {
	cal   *calendartest.Server
	out   *demoPrinter
	start time.Time
	steps []demoStep
	until time.Duration // when the last reminder is due

	// Slack, the signing secret and the bot's HTTP address, for Bob's
	// slash command; addr is set once the bot listens.
	slack  *slacktest.Server
	secret string
	addr   string
	// edited is when each message (by ts) was last seen edited.
	edited map[string]time.Time

	// titles names the meetings by event ID, and meetings are those the
	// script puts in a calendar, for the summary, which reads each one
	// back when the demo stops; finish stops the bot after the last
	// meeting, and finished says it did.
	titles   map[string]string
	meetings []demoMeeting
	finish   func()
	finished atomic.Bool
}

// demoBobTypesAt is when Bob types his slash command, and demoRetroAt when
// his meeting starts, after the demo starts; the design review moves at
// demoReviewMovedAt, after its first reminder (at 20 s), to start at
// demoReviewMovedTo.
const (
	demoBobTypesAt    = 10 * time.Second
	demoRetroAt       = 100 * time.Second
	demoReviewMovedAt = 35 * time.Second
	demoReviewMovedTo = 170 * time.Second
)

func newDemoScript(cal *calendartest.Server, out *demoPrinter, start time.Time) *demoScript {
	return &demoScript{cal: cal, out: out, start: start.Truncate(time.Second).Add(time.Second)}
}

func (d *demoScript) event(id, title string, at, length time.Duration) *gcal.Event {
	ev := calendartest.NewEvent(id, title, d.start.Add(at), d.start.Add(at+length))
	ev.Organizer = &gcal.EventOrganizer{Email: demoAlice, DisplayName: "Alice"}
	return ev
}

// seed puts the meetings known from the start.
func (d *demoScript) seed() error {
	planning := d.event("planning", "Sprint planning", 65*time.Second, 30*time.Minute)
	planning.Location = "https://example.zoom.us/j/123456789"
	review := d.event("review", "Design review <API v2>", 80*time.Second, 30*time.Minute)
	review.HangoutLink = "https://meet.google.com/abc-defg-hij"
	oneOnOne := d.event("one-on-one", "1:1 with Bob", 150*time.Second, 25*time.Minute)
	budget := d.event("budget", "Budget sync", 120*time.Second, 30*time.Minute)
	retro := d.event("retro_1", "Team retro", demoRetroAt, 45*time.Minute)
	retro.RecurringEventId = "retro" // one of a series: its reminders offer "Mute this series"
	retro.Organizer = &gcal.EventOrganizer{Email: demoBob, DisplayName: "Bob"}
	for _, put := range []struct {
		cal string
		ev  *gcal.Event
	}{{demoTeam, planning}, {demoAlice, review}, {demoAlice, oneOnOne}, {demoAlice, budget}, {demoBob, retro}} {
		if err := d.cal.Put(put.cal, put.ev); err != nil {
			return err
		}
	}
	moved := d.event("one-on-one", "1:1 with Bob", 210*time.Second, 25*time.Minute)
	quick := d.event("quick", "Quick question", 50*time.Second, 15*time.Minute)
	// The design review moves after its 1-minute reminder went out: that
	// message is edited in place, and the new time gets its own reminders.
	reviewMoved := d.event("review", "Design review <API v2>", demoReviewMovedTo, 30*time.Minute)
	reviewMoved.HangoutLink = review.HangoutLink
	d.titles = map[string]string{}
	for _, m := range []struct {
		cal string
		ev  *gcal.Event
	}{{demoTeam, planning}, {demoAlice, review}, {demoAlice, oneOnOne}, {demoAlice, budget}, {demoBob, retro}, {demoAlice, quick}} {
		d.titles[m.ev.Id] = m.ev.Summary
		d.meetings = append(d.meetings, demoMeeting{cal: m.cal, id: m.ev.Id, title: m.ev.Summary, start: d.start.Add(d.offsetOf(m.ev))})
	}
	d.steps = []demoStep{
		{at: demoBobTypesAt, do: d.bobTurnsOn},
		{at: 20 * time.Second, say: fmt.Sprintf("Quick question created in Alice's calendar, starting %s: its 1m reminder time has passed, so it goes out at once, marked late", d.out.clock(d.start.Add(50*time.Second))),
			do: func() error { return d.cal.Put(demoAlice, quick) }},
		{at: 30 * time.Second, say: fmt.Sprintf("1:1 with Bob moved from %s to %s, before its reminders: both (1 minute before and at the start) go out for the new time only", d.out.clock(d.start.Add(150*time.Second)), d.out.clock(d.start.Add(210*time.Second))),
			do: func() error { return d.cal.Put(demoAlice, moved) }},
		{at: demoReviewMovedAt, say: fmt.Sprintf("Design review moved from %s to %s, after its 1-minute reminder went out: that message is edited in place to say so, and the new time gets its own reminders", d.out.clock(d.start.Add(80*time.Second)), d.out.clock(d.start.Add(demoReviewMovedTo))),
			do: func() error { return d.cal.Put(demoAlice, reviewMoved) }},
		{at: 45 * time.Second, say: "Budget sync cancelled before its reminder: nothing will be sent for it",
			do: func() error { return d.cal.Delete(demoAlice, "budget") }},
	}
	d.until = 215 * time.Second
	return nil
}

// offsetOf is when ev starts, after the demo starts.
func (d *demoScript) offsetOf(ev *gcal.Event) time.Duration {
	start, _ := time.Parse(time.RFC3339, ev.Start.DateTime)
	return start.Sub(d.start)
}

// play applies the steps at their times, until ctx ends.
func (d *demoScript) play(ctx context.Context) {
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		elapsed := time.Since(d.start)
		for i := range d.steps {
			s := &d.steps[i]
			if s.done || elapsed < s.at {
				continue
			}
			s.done = true
			if err := s.do(); err != nil {
				d.out.note("demo step failed: " + err.Error())
				continue
			}
			if s.say != "" {
				d.out.note(s.say)
			}
		}
		d.showEdits()
		if elapsed > d.until+demoEndsAfter && d.finish != nil && !d.finished.Swap(true) {
			d.finish() // the bot stops; demo prints the summary
			return
		}
	}
}

// showEdits prints each message Slack has edited since it last looked:
// the Slack emulator tells of each post as it comes, and an edit in place
// (chat.update) is seen here, within a quarter of a second.
func (d *demoScript) showEdits() {
	if d.slack == nil {
		return
	}
	for _, m := range d.slack.Messages() {
		if m.Edited.IsZero() || d.edited[m.TS].Equal(m.Edited) {
			continue
		}
		if d.edited == nil {
			d.edited = map[string]time.Time{}
		}
		d.edited[m.TS] = m.Edited
		d.out.edit(m)
	}
}

// bobTurnsOn is Bob typing "/meetingbot on 1m,0" in his DM with the bot:
// Slack posts the command, signed, to the bot's own /slack/commands, and
// the reply only Bob sees is printed.
func (d *demoScript) bobTurnsOn() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	reply, err := d.slack.Type(ctx, d.addr, d.secret, demoBobSlackID, "bob", demoDM(demoBobSlackID), "directmessage", demoBobCommand)
	if err != nil {
		return err
	}
	d.out.command("bob", "/meetingbot "+demoBobCommand, reply)
	return nil
}

// demoDM is the ID of a user's DM with the bot, as the Slack emulator
// names it.
func demoDM(userID string) string { return "D" + strings.TrimLeft(userID, "UW") }
