package retry_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot/internal/retry"
)

func TestSleep(t *testing.T) {
	if err := retry.Sleep(context.Background(), time.Millisecond); err != nil {
		t.Errorf("Sleep(1ms) = %v, want nil", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	if err := retry.Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("Sleep(1h) on a cancelled context = %v, want context.Canceled", err)
	}
	if took := time.Since(start); took > time.Minute {
		t.Errorf("Sleep(1h) on a cancelled context took %v", took)
	}
}

func TestBackoff(t *testing.T) {
	tests := []struct {
		p      retry.Policy
		n      int
		lo, hi time.Duration
	}{
		{retry.Policy{}, 1, 500 * time.Millisecond, time.Second},
		{retry.Policy{}, 2, time.Second, 2 * time.Second},
		{retry.Policy{}, 4, 4 * time.Second, 8 * time.Second},
		{retry.Policy{}, 10, 15 * time.Second, 30 * time.Second}, // capped
		{retry.Policy{Base: 100 * time.Millisecond, Max: time.Second}, 3, 200 * time.Millisecond, 400 * time.Millisecond},
		{retry.Policy{Base: 100 * time.Millisecond, Max: time.Second}, 20, 500 * time.Millisecond, time.Second},
	}
	for _, tt := range tests {
		for range 50 {
			if got := tt.p.Backoff(tt.n); got < tt.lo || got > tt.hi {
				t.Errorf("%+v.Backoff(%d) = %v, want within [%v, %v]", tt.p, tt.n, got, tt.lo, tt.hi)
				break
			}
		}
	}
}

func TestAttempts(t *testing.T) {
	if got := (retry.Policy{}).Attempts(); got != retry.DefaultMaxAttempts {
		t.Errorf("Policy{}.Attempts() = %d, want %d", got, retry.DefaultMaxAttempts)
	}
	if got := (retry.Policy{MaxAttempts: 2}).Attempts(); got != 2 {
		t.Errorf("Policy{MaxAttempts: 2}.Attempts() = %d, want 2", got)
	}
}
