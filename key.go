package meetingbot

import (
	"fmt"
	"strconv"
	"time"
)

// Key returns the ledger key of a trigger: eventID:offset:startAt, with
// startAt the UTC instant in RFC 3339. The same work always gets the same
// key; a moved meeting gets a new one.
func Key(eventID string, offset time.Duration, start time.Time) string {
	return eventID + ":" + FormatOffset(offset) + ":" + start.UTC().Format(time.RFC3339)
}

// FormatOffset writes an offset compactly: "10m", "90s", "0s".
func FormatOffset(d time.Duration) string {
	switch {
	case d%time.Minute == 0 && d != 0:
		return strconv.FormatInt(int64(d/time.Minute), 10) + "m"
	case d%time.Second == 0:
		return strconv.FormatInt(int64(d/time.Second), 10) + "s"
	default:
		return fmt.Sprint(d)
	}
}
