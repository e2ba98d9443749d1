package notify_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/notify"
)

// agendaOf is alice's agenda of 2026-03-02 in New York with n meetings,
// half an hour apart from 08:00, one private, one with a hostile title.
func agendaOf(t *testing.T, n int) meetingbot.Agenda {
	t.Helper()
	ny, err := time.LoadLocation("America/New_York")
	require.NoError(t, err)
	a := meetingbot.Agenda{
		User: "U0ALICE001", Calendar: "alice@example.com", Date: "2026-03-02", Zone: ny,
		At: time.Date(2026, 3, 2, 7, 30, 0, 0, ny),
		AllDay: []meetingbot.AllDayEvent{
			{ID: "h", Title: "Company holiday <!here>", StartDate: "2026-03-02", EndDate: "2026-03-03"},
		},
	}
	for i := range n {
		m := meeting()
		m.ID = fmt.Sprintf("m%02d", i)
		m.Title = fmt.Sprintf("Meeting %02d", i)
		m.Start = time.Date(2026, 3, 2, 8, 0, 0, 0, ny).Add(time.Duration(i) * 15 * time.Minute)
		m.End = m.Start.Add(15 * time.Minute)
		switch i {
		case 1:
			m.Private, m.Title = true, "Dentist"
		case 2:
			m.Title = "Standup\n*Join:* https://evil.example/zoom <!channel>"
			m.JoinURL = "https://zoom.us@evil.example/j/1"
		}
		a.Meetings = append(a.Meetings, m)
	}
	return a
}

// An agenda is one DM that Slack (the emulator, enforcing Block Kit's
// limits) takes whatever the size of the day, whose metadata lets the
// lookup after a crash and the audit find it.
func TestAgendaPostsOneMessageWithinLimits(t *testing.T) {
	for _, n := range []int{3, 5, notify.MaxAgendaMeetings, 60, 300} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			e := newEnv(t)
			a := agendaOf(t, n)
			e.clock.Set(a.At)
			rc, err := e.slack.NotifyAgenda(context.Background(), a)
			require.NoError(t, err, "NotifyAgenda(%d meetings)", n)
			msgs := e.srv.Messages()
			require.Len(t, msgs, 1)
			msg := msgs[0]
			assert.Equal(t, rc.TS, msg.TS)
			require.NotNil(t, msg.Metadata)
			assert.Equal(t, notify.AgendaEventType, msg.Metadata.EventType)
			assert.Equal(t, "agenda:U0ALICE001:2026-03-02", msg.Metadata.EventPayload["key"])
			var blocks []map[string]any
			require.NoError(t, json.Unmarshal(msg.Blocks, &blocks))
			assert.LessOrEqual(t, len(blocks), 50, "blocks")
			body := strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&").Replace(string(msg.Blocks))
			assert.Contains(t, body, "Meeting 00")
			assert.Contains(t, body, "Dentist", "a private meeting shows its title to its owner")
			assert.NotContains(t, body, "<!channel>")
			assert.NotContains(t, body, "<!here>")
			assert.NotContains(t, body, "evil.example/j", "no Join button to a host not known")
			assert.Contains(t, body, "All day:")
			assert.Contains(t, body, "Company holiday")
			assert.Contains(t, body, fmt.Sprintf("<!date^%d^{time}|08:00>", a.Meetings[0].Start.Unix()), "times as <!date> with the local fallback")
			if n > notify.MaxAgendaMeetings {
				assert.Contains(t, body, fmt.Sprintf("and %d more meetings", n-notify.MaxAgendaMeetings))
			} else {
				assert.NotContains(t, body, "more meetings")
			}
			assert.True(t, strings.HasPrefix(msg.Text, "Your day, "), "text = %q", msg.Text)
			assert.LessOrEqual(t, len(msg.Text), 3000)

			r := meetingbot.Reminder{Key: a.Key(), Subscription: a.Subscription(), TriggerAt: a.At}
			got, found, err := e.slack.Delivered(context.Background(), r)
			require.NoError(t, err)
			assert.True(t, found, "Delivered(%s)", r.Key)
			assert.Equal(t, rc, got)
			ds, err := e.slack.Agendas(context.Background(), a.User, a.At.Add(-time.Hour), a.At.Add(time.Hour))
			require.NoError(t, err)
			require.Len(t, ds, 1, "Agendas()")
			assert.Equal(t, a.Key(), ds[0].Key)
			day := time.Date(2026, 3, 2, 0, 0, 0, 0, a.Zone)
			assert.True(t, ds[0].Start.Equal(day), "Agendas()[0].Start = %v, want %v", ds[0].Start, day)
		})
	}
}
