package monitor_test

import (
	"errors"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/internal/clock"
	"github.com/meetingbot/meetingbot/monitor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A replica among several is judged on the subscriptions it holds: those
// another replica sweeps never fail its /healthz, one taken over counts
// from the moment it is taken, and a database that stops answering the
// renewals fails it once the leases have run out.
func TestHealthOfAReplicaAmongSeveral(t *testing.T) {
	carol := meetingbot.Subscription{ID: "carol@example.com", CalendarID: "carol@example.com", Offsets: []time.Duration{time.Minute}}
	clk := clock.NewFake(t0)
	m := monitor.New(monitor.Options{Subscriptions: []meetingbot.Subscription{alice, team, carol}, Interval: 10 * time.Second, Now: clk.Now})
	ts := serve(t, m)
	sweep := func(subs ...meetingbot.Subscription) {
		for _, s := range subs {
			m.Swept(s, clk.Now(), time.Second, nil)
		}
	}
	steps := []struct {
		name       string
		do         func()
		wantStatus int
		wantBody   []string
	}{
		{"holds alice of three", func() { m.Leases([]string{alice.ID}, 3, nil) }, 200, []string{
			"ok: 1 subscriptions swept within the last 3 ticks of 10s",
			"leases: this replica holds 1 of 3 subscriptions; database reachable (leases renewed 0s ago)",
		}},
		{"the others' subscriptions are not this replica's to sweep", func() {
			for range 5 {
				clk.Advance(10 * time.Second)
				m.Leases([]string{alice.ID}, 3, nil)
				sweep(alice)
			}
		}, 200, []string{"ok: 1 subscriptions"}},
		{"takes carol over: healthy until it has had its ticks", func() {
			clk.Advance(10 * time.Second)
			m.Leases([]string{alice.ID, carol.ID}, 3, nil)
			sweep(alice)
			clk.Advance(25 * time.Second)
			m.Leases([]string{alice.ID, carol.ID}, 3, nil)
			sweep(alice)
		}, 200, []string{"ok: 2 subscriptions", "holds 2 of 3"}},
		{"carol not swept since it was taken", func() {
			clk.Advance(10 * time.Second)
			m.Leases([]string{alice.ID, carol.ID}, 3, nil)
			sweep(alice)
		}, 503, []string{
			"unhealthy: 1 of 2 subscriptions not swept", "subscription carol@example.com: no complete sweep since start-up at 2026-11-30T09:01:00Z",
		}},
		{"swept", func() { sweep(carol) }, 200, []string{"ok: 2 subscriptions"}},
		{"the database stops answering: not yet unhealthy", func() {
			for range 3 {
				clk.Advance(10 * time.Second)
				m.Leases(nil, 0, errors.New("postgres: share subscriptions: dial tcp 10.0.0.5:5432: connect: connection refused"))
			}
			sweep(alice, carol) // a sweep may still finish on what it read
		}, 200, []string{"ok: 2 subscriptions", "leases: this replica holds 2 of 3 subscriptions; database unreachable since 2026-11-30T09:01:45Z: postgres: share subscriptions: dial tcp"}},
		{"past three ticks its leases have run out", func() { clk.Advance(time.Second) }, 503, []string{
			"the ledger is failing",
			"database: unreachable since 2026-11-30T09:01:45Z (last lease renewal 31s ago, more than 3 ticks: this replica's leases have run out and nothing is sent); last error: postgres: share subscriptions: dial tcp 10.0.0.5:5432: connect: connection refused",
		}},
		{"back", func() { m.Leases([]string{alice.ID}, 3, nil) }, 200, []string{"ok: 1 subscriptions", "database reachable"}},
	}
	for _, st := range steps {
		st.do()
		status, body := get(t, ts+"/healthz")
		assert.Equal(t, st.wantStatus, status, "%s: status; body:\n%s", st.name, body)
		for _, want := range st.wantBody {
			assert.Contains(t, body, want, "%s", st.name)
		}
	}

	_, metrics := get(t, ts+"/metrics")
	assert.Contains(t, metrics, "meetingbot_subscriptions_held 1\n")
	assert.Contains(t, metrics, "meetingbot_subscriptions_shared 3\n")
}

// With one replica (SQLite), it holds every subscription.
func TestOneReplicaHoldsEverySubscription(t *testing.T) {
	m := monitor.New(monitor.Options{Subscriptions: []meetingbot.Subscription{alice, team}, Interval: 10 * time.Second})
	ts := serve(t, m)
	_, metrics := get(t, ts+"/metrics")
	assert.Contains(t, metrics, "meetingbot_subscriptions_held 2\n")
	_, body := get(t, ts+"/healthz")
	assert.NotContains(t, body, "leases", "/healthz of a single replica")
}

func serve(t *testing.T, m *monitor.Monitor) string {
	t.Helper()
	srv := httptestServer(m)
	t.Cleanup(srv.Close)
	require.NotEmpty(t, srv.URL)
	return srv.URL
}

func httptestServer(m *monitor.Monitor) *httptest.Server { return httptest.NewServer(m.Handler()) }
