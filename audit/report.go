package audit

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"

	"github.com/meetingbot/meetingbot"
)

// Duration is a time.Duration that reads and writes as text ("10m",
// "1h30m0s") in JSON, so a report stays readable and round-trips.
type Duration time.Duration

// MarshalText writes d compactly, as meetingbot.FormatOffset does.
func (d Duration) MarshalText() ([]byte, error) {
	return []byte(meetingbot.FormatOffset(time.Duration(d))), nil
}

// UnmarshalText reads any time.ParseDuration text.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return fmt.Errorf("audit: duration %q: %w", b, err)
	}
	*d = Duration(v)
	return nil
}

// String returns the compact form, e.g. "10m".
func (d Duration) String() string { return meetingbot.FormatOffset(time.Duration(d)) }

// Delivery is one sign that a reminder reached Slack: a message in the
// destination's history, or, when history cannot be read, a "sent" ledger row.
type Delivery struct {
	Channel string    `json:"channel,omitempty"`
	TS      string    `json:"ts,omitempty"`
	Posted  time.Time `json:"posted"` // Slack's post time, or the ledger's RecordedAt
	From    string    `json:"from"`   // "slack" or "ledger"
}

// Item is one reminder, a meeting instance and one offset, as the audit
// judged it. Instants are UTC.
type Item struct {
	Subscription string     `json:"subscription"`
	Key          string     `json:"key"`
	EventID      string     `json:"event_id"`
	Title        string     `json:"title,omitempty"`
	Start        time.Time  `json:"start"`
	Offset       Duration   `json:"offset"`
	Trigger      time.Time  `json:"trigger"`
	Reason       string     `json:"reason,omitempty"`
	Delay        Duration   `json:"delay,omitempty"` // first delivery's post time minus trigger
	Deliveries   []Delivery `json:"deliveries,omitempty"`
	// Message says of a superseded reminder whether the bot edited its
	// message to say that the meeting moved or was cancelled: Edited or
	// NotEdited. Empty for the other items.
	Message string `json:"message,omitempty"`
}

// What a superseded reminder's message says (Item.Message).
const (
	// Edited: the message was edited to say the meeting moved (Reason
	// names the start it says) or was cancelled.
	Edited = "edited"
	// NotEdited: the message still reads as posted, for a time the
	// meeting is no longer at: the edit failed, was given up (see the
	// ledger's edit reason), or has not been made yet.
	NotEdited = "not edited"
)

// Counts sums the item lists of a subscription or a whole report.
type Counts struct {
	Expected   int `json:"expected"`
	Delivered  int `json:"delivered"`
	Missing    int `json:"missing"`
	Duplicated int `json:"duplicated"`
	Late       int `json:"late"`
	Superseded int `json:"superseded"`
	Unexpected int `json:"unexpected"`
	Pending    int `json:"pending"`
}

func (c *Counts) add(o Counts) {
	c.Expected += o.Expected
	c.Delivered += o.Delivered
	c.Missing += o.Missing
	c.Duplicated += o.Duplicated
	c.Late += o.Late
	c.Superseded += o.Superseded
	c.Unexpected += o.Unexpected
	c.Pending += o.Pending
}

// Where deliveries were counted from.
const (
	FromSlack  = "slack"
	FromLedger = "ledger"
)

// SubReport is the reconciliation of one subscription.
//
// Every expected reminder lands in exactly one of Delivered, Missing,
// Duplicated and Pending; Late repeats the delivered (or duplicated) ones
// whose first delivery came more than one tick plus 5s after the trigger.
// Superseded and Unexpected hold deliveries that were not expected, and
// Duplicated may hold superseded ones too: a doubled message is a problem
// whatever became of its meeting. A superseded item says whether its
// message was edited to tell of the change (Item.Message).
type SubReport struct {
	Subscription string `json:"subscription"`
	// CountedFrom says where deliveries were counted: FromSlack when the
	// destination's history could be read, else FromLedger.
	CountedFrom string `json:"counted_from"`
	// SlackError says why Slack history could not be read, if it could not.
	SlackError string `json:"slack_error,omitempty"`
	// Error is set when the calendar or the ledger could not be read; the
	// lists are then empty and the subscription was not audited.
	Error string `json:"error,omitempty"`

	Expected   int    `json:"expected"`
	Delivered  []Item `json:"delivered,omitempty"`
	Missing    []Item `json:"missing,omitempty"`
	Duplicated []Item `json:"duplicated,omitempty"`
	Late       []Item `json:"late,omitempty"`
	Superseded []Item `json:"superseded,omitempty"`
	Unexpected []Item `json:"unexpected,omitempty"`
	Pending    []Item `json:"pending,omitempty"`
}

// Counts returns the sizes of s's lists.
func (s SubReport) Counts() Counts {
	return Counts{
		Expected: s.Expected, Delivered: len(s.Delivered), Missing: len(s.Missing),
		Duplicated: len(s.Duplicated), Late: len(s.Late), Superseded: len(s.Superseded),
		Unexpected: len(s.Unexpected), Pending: len(s.Pending),
	}
}

// Report is the reconciliation of every subscription over [From, To) as
// seen at Now. It marshals to JSON and back without loss.
type Report struct {
	From          time.Time   `json:"from"`
	To            time.Time   `json:"to"`
	Now           time.Time   `json:"now"`
	Interval      Duration    `json:"interval"` // the tick interval lateness is judged by
	Subscriptions []SubReport `json:"subscriptions"`
	// Paused are the connections that stopped, with the subscriptions
	// whose reminders wait for their person to reconnect; PausedError
	// says why they could not be listed.
	Paused      []Paused `json:"paused,omitempty"`
	PausedError string   `json:"paused_error,omitempty"`
}

// Totals sums the counts of every subscription.
func (r Report) Totals() Counts {
	var c Counts
	for _, s := range r.Subscriptions {
		c.add(s.Counts())
	}
	return c
}

// Problems reports whether any reminder is missing or duplicated.
func (r Report) Problems() bool {
	t := r.Totals()
	return t.Missing > 0 || t.Duplicated > 0
}

// Incomplete reports whether some subscription could not be audited, or
// the paused ones could not be listed.
func (r Report) Incomplete() bool {
	if r.PausedError != "" {
		return true
	}
	for _, s := range r.Subscriptions {
		if s.Error != "" {
			return true
		}
	}
	return false
}

// verdict is the table's last line when no reminder needs a row: every
// expected reminder delivered once, said only of the subscriptions that
// could be audited.
func (r Report) verdict() string {
	n := 0
	for _, s := range r.Subscriptions {
		if s.Error != "" {
			n++
		}
	}
	switch {
	case n == 0:
		return "Every expected reminder was delivered once."
	case n == len(r.Subscriptions):
		return "No subscription could be audited (see above): nothing is known of their reminders."
	}
	return fmt.Sprintf("%d of %d subscriptions could not be audited (see above); in the others, every expected reminder was delivered once.", n, len(r.Subscriptions))
}

// WriteTable writes r for people: a summary line per subscription, then
// one line per reminder that is not simply delivered once on time. Times
// are UTC. Every text cell is made inert for a terminal (see cell).
func (r Report) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "Audit of reminders due in [%s, %s), as of %s (tick %s)\n\n",
		stamp(r.From), stamp(r.To), stamp(r.Now), r.Interval)
	fmt.Fprintln(tw, "SUBSCRIPTION\tCOUNTED FROM\tEXPECTED\tDELIVERED\tMISSING\tDUPLICATED\tLATE\tSUPERSEDED\tUNEXPECTED\tPENDING")
	for _, s := range r.Subscriptions {
		c := s.Counts()
		from := s.CountedFrom
		if s.Error != "" {
			from = "not audited"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\n", cell(s.Subscription), from,
			c.Expected, c.Delivered, c.Missing, c.Duplicated, c.Late, c.Superseded, c.Unexpected, c.Pending)
	}
	t := r.Totals()
	fmt.Fprintf(tw, "TOTAL\t\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\n",
		t.Expected, t.Delivered, t.Missing, t.Duplicated, t.Late, t.Superseded, t.Unexpected, t.Pending)
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("audit: write table: %w", err)
	}

	var notes []string
	for _, s := range r.Subscriptions {
		if s.Error != "" {
			notes = append(notes, fmt.Sprintf("%s: not audited: %s", cell(s.Subscription), cell(s.Error)))
		}
		if s.SlackError != "" {
			notes = append(notes, fmt.Sprintf("%s: Slack history unreadable, counted from the ledger (a duplicate cannot be seen): %s", cell(s.Subscription), cell(s.SlackError)))
		}
	}
	if len(notes) > 0 {
		fmt.Fprintf(w, "\n%s\n", strings.Join(notes, "\n"))
	}

	type row struct {
		status string
		it     Item
	}
	var rows []row
	for _, s := range r.Subscriptions {
		for _, l := range []struct {
			status string
			items  []Item
		}{{"MISSING", s.Missing}, {"DUPLICATED", s.Duplicated}, {"LATE", s.Late}, {"UNEXPECTED", s.Unexpected}, {"SUPERSEDED", s.Superseded}, {"PENDING", s.Pending}} {
			for _, it := range l.items {
				rows = append(rows, row{l.status, it})
			}
		}
	}
	if len(rows) == 0 {
		_, err := fmt.Fprintln(w, "\n"+r.verdict())
		r.writePaused(w)
		return err
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "STATUS\tSUBSCRIPTION\tSTART\tOFFSET\tTRIGGER\tMEETING\tDELIVERED\tREASON")
	for _, x := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", x.status, cell(x.it.Subscription), stamp(x.it.Start),
			x.it.Offset, stamp(x.it.Trigger), cell(title(x.it)), cell(deliveries(x.it)), cell(x.it.Reason))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("audit: write table: %w", err)
	}
	r.writePaused(w)
	return nil
}

func stamp(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04:05Z")
}

func title(it Item) string {
	if it.Title == "" {
		return it.EventID
	}
	return it.Title + " (" + it.EventID + ")"
}

// deliveries lists where and when an item was delivered, e.g.
// "slack 09:20:01 ts=1772443201.000000".
func deliveries(it Item) string {
	parts := make([]string, len(it.Deliveries))
	for i, d := range it.Deliveries {
		parts[i] = fmt.Sprintf("%s %s", d.From, d.Posted.UTC().Format("15:04:05"))
		if d.TS != "" {
			parts[i] += " ts=" + d.TS
		}
	}
	return strings.Join(parts, ", ")
}

// cell keeps a value on one table line, never empty, and inert in a
// terminal: line breaks and tabs become spaces, and control characters
// (C0 and C1, so ESC, OSC and BEL sequences lose their escape) and
// invisible format characters (bidi overrides, zero-width) are dropped. A
// meeting's title is written by whoever sent the invitation.
func cell(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case unicode.IsSpace(r):
			return ' '
		case unicode.IsControl(r), unicode.Is(unicode.Cf, r):
			return -1
		}
		return r
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	if s == "" {
		return "-"
	}
	return s
}
