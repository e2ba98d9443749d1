package storetest

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testRememberOnceAmongProcesses: a key remembered by one process is known
// to every other on the database and after a restart, until it expires;
// of many processes remembering one key at once, one alone is first.
func testRememberOnceAmongProcesses(t *testing.T, open Opener) {
	ctx := t.Context()
	a, b := open(t), open(t)
	now := created
	until := now.Add(10 * time.Minute)

	first, err := a.Remember(ctx, "sig:abcd", now, until)
	require.NoError(t, err)
	assert.True(t, first, "Remember(sig:abcd) the first time")
	first, err = b.Remember(ctx, "sig:abcd", now.Add(time.Minute), until)
	require.NoError(t, err)
	assert.False(t, first, "Remember(sig:abcd) again, by another process")
	first, err = a.Remember(ctx, "sig:ABCD", now, until)
	require.NoError(t, err)
	assert.True(t, first, "Remember(sig:ABCD): keys are compared exactly, the caller normalises")

	require.NoError(t, a.Close())
	a = open(t) // a restart
	first, err = a.Remember(ctx, "sig:abcd", now.Add(2*time.Minute), until)
	require.NoError(t, err)
	assert.False(t, first, "Remember(sig:abcd) after a restart, before it expires")
	first, err = a.Remember(ctx, "sig:abcd", until, until.Add(10*time.Minute))
	require.NoError(t, err)
	assert.True(t, first, "Remember(sig:abcd) at its expiry: new again")
	first, err = b.Remember(ctx, "sig:abcd", until.Add(time.Minute), until.Add(10*time.Minute))
	require.NoError(t, err)
	assert.False(t, first, "Remember(sig:abcd) once remembered anew")

	var wg sync.WaitGroup
	var firsts atomic.Int32
	for i := range 16 {
		s := a
		if i%2 == 1 {
			s = b
		}
		wg.Go(func() {
			ok, err := s.Remember(ctx, "event:Ev0123", now, until)
			if !assert.NoError(t, err) {
				return
			}
			if ok {
				firsts.Add(1)
			}
		})
	}
	wg.Wait()
	assert.EqualValues(t, 1, firsts.Load(), "processes that were first to remember one key at once")
}
