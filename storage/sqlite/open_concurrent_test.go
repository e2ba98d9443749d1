package sqlite_test

import (
	"path/filepath"
	"sync"
	"testing"

	"github.com/meetingbot/meetingbot/storage/sqlite"
	"github.com/stretchr/testify/require"
)

// TestOpenConcurrentlyOnNewFile opens one new file from several stores at
// once, as two bots started together on a fresh volume do: every Open
// succeeds.
func TestOpenConcurrentlyOnNewFile(t *testing.T) {
	for i := range 20 {
		path := filepath.Join(t.TempDir(), "bot.db")
		var wg sync.WaitGroup
		errs := make([]error, 4)
		for j := range errs {
			wg.Go(func() {
				s, err := sqlite.Open(ctx, path)
				errs[j] = err
				if err == nil {
					s.Close()
				}
			})
		}
		wg.Wait()
		for j, err := range errs {
			require.NoError(t, err, "round %d: Open #%d", i, j)
		}
	}
}
