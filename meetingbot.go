// Package meetingbot holds the words of the bot's contract (docs/design.md): a
// Subscription reads one calendar for one Slack destination; a Meeting is
// one instance of a calendar event; a Reminder is one due trigger of a
// meeting, named by its Key; the ledger records an Entry per key with its
// Outcome and a Reason code; a Receipt and a Delivery say where a reminder
// landed in Slack; a Follow edits a sent reminder whose meeting moved or
// was cancelled, and the entry's Edit records what its message says now.
//
// Every other package may import this one and it imports none of them: the
// engine (scheduler, audit) and the adapters (storage, calendar, notify)
// speak these words to each other, and adapters never import each other or
// the engine.
package meetingbot

import "time"

// DefaultTickInterval is how often the bot sweeps its calendars unless
// TICK_INTERVAL says otherwise.
const DefaultTickInterval = 30 * time.Second

// StartGrace is how late after its meeting's start a "starting now" (0
// offset) reminder may still go out.
const StartGrace = time.Minute

// LateSlack is how far past one sweep interval a reminder may go out and
// still count as on time.
const LateSlack = 5 * time.Second

// EarlyShare bounds how far ahead of its trigger a reminder may be posted
// when more fall due together than Slack's posting budget passes by their
// triggers: at most its offset divided by EarlyShare (a "10 minutes
// before" reminder at most 2m30s ahead), and never more than the bot's
// REMINDER_EARLY_MAX.
const EarlyShare = 4

// MaxEarly is the most a reminder of offset o may be posted ahead of its
// trigger under EarlyShare.
func MaxEarly(o time.Duration) time.Duration { return o / EarlyShare }
