package demo

import (
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/meetingbot/meetingbot/notify/slacktest"
)

// demoPrinter writes the demo's story to the terminal: the agenda, the
// calendar changes, and each reminder as a Slack reader would see it.
type demoPrinter struct {
	w  io.Writer
	mu sync.Mutex
}

func (p *demoPrinter) printf(format string, args ...any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.w, format, args...)
}

// clock shows an instant in the terminal's zone, naming the zone.
func (p *demoPrinter) clock(t time.Time) string { return t.Local().Format("15:04:05 MST") }

func (p *demoPrinter) banner(addr, db string, d *demoScript) {
	at := func(s time.Duration) string { return p.clock(d.start.Add(s)) }
	p.printf(`meetingbot demo: the real bot against a local Google Calendar and a local Slack.
Two reminders per meeting, 1 minute before it and when it starts, sweeping every %s.

  %s  Quick question (Alice's calendar; created at %s, after its 1-minute reminder time: that one goes out at once, marked late)
  %s  Sprint planning (team calendar, reminds %s)
  %s  Design review <API v2> (Alice's calendar, reminds her by DM; at %s moved to %s, after its first reminder: that message is edited in place)
  %s  Team retro (Bob's calendar, not in the bot's configuration: at %s Bob turns his reminders on from Slack with /meetingbot %s)
  %s  Budget sync (will be cancelled)
  %s  1:1 with Bob (will be moved to %s)

Health: http://%s/healthz   Metrics: http://%s/metrics   Slack: http://%s/slack/commands
Ledger: %s
It ends by itself after the last meeting, at %s, with a summary of what the bot did; Ctrl-C stops it sooner.

`, demoTick, at(50*time.Second), at(20*time.Second), at(65*time.Second), demoChannel, at(80*time.Second), at(demoReviewMovedAt), at(demoReviewMovedTo),
		at(demoRetroAt), at(demoBobTypesAt), demoBobCommand,
		at(120*time.Second), at(150*time.Second), at(210*time.Second), addr, addr, addr, db, at(d.until+demoEndsAfter))
}

// command prints a slash command a person typed and the reply only they
// see.
func (p *demoPrinter) command(who, typed, reply string) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s  Slack: @%s types  %s\n", p.clock(time.Now()), who, typed)
	fmt.Fprintf(&b, "┌ reply only @%s sees\n", who)
	for _, line := range strings.Split(mrkdwn(reply), "\n") {
		fmt.Fprintf(&b, "│ %s\n", line)
	}
	b.WriteString("└\n\n")
	p.printf("%s", b.String())
}

func (p *demoPrinter) note(msg string) {
	p.printf("%s  calendar: %s\n\n", p.clock(time.Now()), msg)
}

// message prints one message Slack received.
func (p *demoPrinter) message(m slacktest.Message) {
	head := fmt.Sprintf("%s  Slack %s", p.clock(m.Posted), demoDestination(m.Channel, ""))
	if late := lateness(m); late > 0 {
		head += fmt.Sprintf("  [LATE: %s after its reminder time]", late.Round(time.Second))
	}
	p.box(head, m)
}

// edit prints a message Slack has edited in place (chat.update), as it
// reads now.
func (p *demoPrinter) edit(m slacktest.Message) {
	p.box(fmt.Sprintf("%s  Slack %s  [EDITED in place: the message posted at %s]", p.clock(m.Edited), demoDestination(m.Channel, ""), p.clock(m.Posted)), m)
}

// box prints a message under head, as Slack shows it.
func (p *demoPrinter) box(head string, m slacktest.Message) {
	var b strings.Builder
	fmt.Fprintf(&b, "┌ %s\n", head)
	for _, line := range renderBlocks(m) {
		fmt.Fprintf(&b, "│ %s\n", line)
	}
	b.WriteString("└\n\n")
	p.printf("%s", b.String())
}

// lateness is how long after its trigger time a reminder was posted, read
// from the message metadata; 0 when it was on time (within two ticks).
func lateness(m slacktest.Message) time.Duration {
	if m.Metadata == nil {
		return 0
	}
	start, err1 := time.Parse(time.RFC3339, fmt.Sprint(m.Metadata.EventPayload["start"]))
	offset, err2 := time.ParseDuration(fmt.Sprint(m.Metadata.EventPayload["offset"]))
	if err1 != nil || err2 != nil {
		return 0
	}
	tick, _ := time.ParseDuration(demoTick)
	if late := m.Posted.Sub(start.Add(-offset)); late > 2*tick+time.Second {
		return late
	}
	return 0
}

// block is the part of a Block Kit block the demo shows.
type block struct {
	Type string `json:"type"`
	Text *struct {
		Text string `json:"text"`
	} `json:"text"`
	Elements []struct {
		Text struct {
			Text string `json:"text"`
		} `json:"text"`
		URL string `json:"url"`
	} `json:"elements"`
}

// renderBlocks turns a message's blocks into terminal lines, falling back
// to its text.
func renderBlocks(m slacktest.Message) []string {
	var blocks []block
	if len(m.Blocks) == 0 || json.Unmarshal(m.Blocks, &blocks) != nil {
		return []string{mrkdwn(m.Text)}
	}
	var lines []string
	for _, b := range blocks {
		switch {
		case b.Type == "section" && b.Text != nil:
			lines = append(lines, strings.Split(mrkdwn(b.Text.Text), "\n")...)
		case b.Type == "actions":
			for _, e := range b.Elements {
				lines = append(lines, strings.TrimSpace(fmt.Sprintf("[%s] %s", e.Text.Text, e.URL)))
			}
		}
	}
	return lines
}

var (
	dateToken = regexp.MustCompile(`<!date\^(\d+)\^[^|>]*\|([^>]*)>`)
	linkToken = regexp.MustCompile(`<(https?://[^|>]+)\|([^>]+)>`)
	bold      = regexp.MustCompile(`\*([^*\n]+)\*`)
	entities  = strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&", ":calendar:", "📅")
)

// mrkdwn shows Slack markup as a reader sees it: dates in the local zone,
// links as "label (url)", bold as plain text, entities decoded.
func mrkdwn(s string) string {
	s = dateToken.ReplaceAllStringFunc(s, func(tok string) string {
		m := dateToken.FindStringSubmatch(tok)
		sec, err := strconv.ParseInt(m[1], 10, 64)
		if err != nil {
			return m[2]
		}
		return time.Unix(sec, 0).Local().Format("Mon 15:04:05 MST")
	})
	s = linkToken.ReplaceAllString(s, "$2 ($1)")
	s = bold.ReplaceAllString(s, "$1")
	return entities.Replace(s)
}
