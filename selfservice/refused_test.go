package selfservice_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/meetingbot/meetingbot/selfservice"
)

// lockedBuffer is a log destination for several goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) lines(substr string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for line := range strings.SplitSeq(l.b.String(), "\n") {
		if strings.Contains(line, substr) {
			out = append(out, line)
		}
	}
	return out
}

// Anyone on the internet can send requests to the public HTTP_ADDR: the
// refusals are counted, by reason, and logged at most once a minute with
// their count, not one line each.
func TestRefusedRequestsAreCountedAndLoggedOnceAMinute(t *testing.T) {
	logs := &lockedBuffer{}
	var mu sync.Mutex
	counted := map[selfservice.Refusal]int{}
	e := newEnv(t, func(c *selfservice.Config) {
		c.Logger = slog.New(slog.NewTextHandler(logs, nil))
		c.Refused = func(r selfservice.Refusal) {
			mu.Lock()
			defer mu.Unlock()
			counted[r]++
		}
	})
	body := e.commandForm(alice, eng, "on")
	forged := e.signed(selfservice.PathCommands, "application/x-www-form-urlencoded", body)
	forged.header = forged.header.Clone()
	forged.header.Set("X-Slack-Signature", "v0="+strings.Repeat("ab", 32))
	for range 30 {
		status, _ := e.send(forged)
		require.Equal(t, http.StatusUnauthorized, status)
	}
	unsigned := forged
	unsigned.header = http.Header{}
	e.send(unsigned)

	got := logs.lines("refused")
	require.Len(t, got, 1, "log lines of 31 refusals within a minute: %s", got)

	// The minute over, the line counting the refusals it held back is
	// written, though none follows them.
	e.clock.Advance(time.Minute)
	got = logs.lines("refused")
	require.Len(t, got, 2, "log lines once the minute is over: %s", got)
	assert.Contains(t, got[1], "refused=30", "the second line counts the refusals since the first: %s", got[1])
	assert.Contains(t, got[1], `reasons="signature=29,unsigned=1"`, "by reason: %s", got[1])

	e.send(unsigned)
	huge := e.signed(selfservice.PathCommands, "application/x-www-form-urlencoded", e.commandForm(alice, eng, "on "+strings.Repeat("1m,", selfservice.MaxBody/3)))
	status, _ := e.send(huge)
	require.Equal(t, http.StatusRequestEntityTooLarge, status)
	require.Len(t, logs.lines("refused"), 2, "log lines within the next minute")
	// A last burst is counted in the log when the bot stops, before its
	// minute is over.
	e.app.Close()
	got = logs.lines("refused")
	require.Len(t, got, 3, "log lines after Close: %s", got)
	assert.Contains(t, got[2], `reasons="too_large=1,unsigned=1"`, "the last burst, by reason: %s", got[2])
	mu.Lock()
	defer mu.Unlock()
	assert.Equal(t, map[selfservice.Refusal]int{selfservice.RefusedSignature: 30, selfservice.RefusedUnsigned: 2, selfservice.RefusedTooLarge: 1}, counted, "refusals counted for the metric")
	assert.Empty(t, e.subs(), "refused requests changed nothing")
}
