package demo

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/storage/sqlite"
)

// demoEndsAfter is how long after its last reminder is due the demo stops:
// long enough for that reminder to be sent and recorded.
const demoEndsAfter = 5 * time.Second

// demoLedger reads what the bot recorded of the reminders due in
// [from, to), from the ledger at path once the bot has stopped.
func demoLedger(ctx context.Context, path string, from, to time.Time) ([]meetingbot.Entry, error) {
	s, err := sqlite.OpenExisting(ctx, path)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	return s.Range(ctx, "", from, to)
}

// demoOutcome is what the demo says happened to the meetings that got no
// reminder at all, because of a change the script made: the ledger has no
// row for them.
type demoOutcome struct {
	title, why string
}

// summary prints what the bot did, from the ledger: each reminder sent
// (and whether late or edited since), each one skipped or failed and why,
// then the meetings that were never due.
func (p *demoPrinter) summary(entries []meetingbot.Entry, titles map[string]string, none []demoOutcome, early bool) {
	var sent, late, edited, other int
	var b strings.Builder
	for _, e := range entries {
		title := titles[e.EventID]
		if title == "" {
			title = e.EventID
		}
		what := fmt.Sprintf("%s  %-13s  %s, %s", p.clock(e.TriggerAt), demoDestination(e.Channel, e.Subscription), title, demoOffset(e.Offset))
		switch e.Outcome {
		case meetingbot.Sent:
			sent++
			line := "  sent     " + what
			if e.Late {
				late++
				line += " (late: found due after its reminder time)"
			}
			if e.Edit.Count > 0 {
				edited++
				line += "; edited since: " + demoEdit(p, e.Edit)
			}
			b.WriteString(line + "\n")
		case meetingbot.Skipped:
			other++
			fmt.Fprintf(&b, "  skipped  %s: %s\n", what, e.Reason)
		case meetingbot.Failed:
			other++
			fmt.Fprintf(&b, "  failed   %s: %s\n", what, e.Reason)
		default:
			other++
			fmt.Fprintf(&b, "  %-8s %s\n", e.Outcome, what)
		}
	}
	for _, n := range none {
		fmt.Fprintf(&b, "  none     %s: %s\n", n.title, n.why)
	}
	head := "That was every demo meeting."
	if early {
		head = "Stopped before the last demo meeting."
	}
	p.printf("%s What the bot did (from its ledger; times are when each reminder was due): %d reminders sent, %d of them late, %d edited since, %d skipped or failed.\n%s\n",
		head, sent, late, edited, other, b.String())
}

// demoDestination names where a reminder went, as the demo prints it.
func demoDestination(channel, subscription string) string {
	switch {
	case channel == demoChannelID:
		return demoChannel
	case channel == demoDM(demoBobSlackID):
		return "DM to @bob"
	case channel != "":
		return "DM to @alice"
	case strings.Contains(subscription, "="):
		return demoChannel
	}
	return "DM"
}

// demoOffset says an offset as the reminders do.
func demoOffset(d time.Duration) string {
	if d == 0 {
		return "at the start"
	}
	return meetingbot.FormatOffset(d) + " before"
}

// demoEdit says what an edited reminder's message says now.
func demoEdit(p *demoPrinter, e meetingbot.Edit) string {
	switch e.Kind {
	case meetingbot.EditMoved:
		return "moved to " + p.clock(e.MovedTo)
	case meetingbot.EditCancelled:
		return "cancelled"
	case meetingbot.EditDeclined:
		return "declined"
	case meetingbot.EditRestored:
		return "moved back"
	}
	return string(e.Kind)
}
