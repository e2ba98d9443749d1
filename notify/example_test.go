package notify_test

import (
	"fmt"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/notify"
)

func ExampleMessage() {
	start := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	m := meetingbot.Meeting{ID: "abc", Title: "Design review & Q&A", Start: start, End: start.Add(time.Hour)}
	r := meetingbot.Reminder{Key: meetingbot.Key(m.ID, 10*time.Minute, start), Meeting: m, Offset: 10 * time.Minute, TriggerAt: start.Add(-10 * time.Minute)}
	text, blocks := notify.Message(r, r.TriggerAt)
	fmt.Println(text)
	fmt.Println(len(blocks), "blocks")
	// Output:
	// Design review &amp; Q&amp;A starts in 10 minutes (<!date^1772442000^{date_short_pretty} {time}|2026-03-02 09:00 UTC>)
	// 3 blocks
}
