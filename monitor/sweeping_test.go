package monitor_test

import (
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/stretchr/testify/assert"
)

// A subscription turned off in Slack stops counting: /healthz stays 200
// when it is no longer swept, and its metric goes. One turned on counts
// from then, and is reported when it does not sweep.
func TestSubscriptionsThatComeAndGo(t *testing.T) {
	m, clk, srv := start(t)
	bob := meetingbot.Subscription{ID: "slack:bob@example.com=U0BOB00001", CalendarID: "bob@example.com", Offsets: []time.Duration{time.Minute}}
	carol := meetingbot.Subscription{ID: "slack:carol@example.com=U0CAROL001", CalendarID: "carol@example.com", Offsets: []time.Duration{time.Minute}}

	m.Sweeping([]meetingbot.Subscription{alice, team, bob})
	clk.Advance(10 * time.Second)
	for _, s := range []meetingbot.Subscription{alice, team, bob} {
		m.Swept(s, clk.Now(), time.Second, nil)
	}
	_, metrics := get(t, srv.URL+"/metrics")
	assert.Contains(t, metrics, `subscription="`+bob.ID+`"`)

	m.Sweeping([]meetingbot.Subscription{alice, team, carol}) // bob off, carol on
	for range 4 {
		clk.Advance(10 * time.Second)
		m.Swept(alice, clk.Now(), time.Second, nil)
		m.Swept(team, clk.Now(), time.Second, nil)
	}
	status, body := get(t, srv.URL+"/healthz")
	assert.Equal(t, 503, status, body)
	assert.Contains(t, body, "unhealthy: 1 of 3 subscriptions not swept")
	assert.Contains(t, body, "subscription "+carol.ID+": no complete sweep since start-up")
	assert.NotContains(t, body, bob.ID, "bob's subscription, turned off")
	_, metrics = get(t, srv.URL+"/metrics")
	assert.NotContains(t, metrics, `subscription="`+bob.ID+`"`)

	m.Swept(carol, clk.Now(), time.Second, nil)
	status, body = get(t, srv.URL+"/healthz")
	assert.Equal(t, 200, status, body)
}
