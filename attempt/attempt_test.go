package attempt_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot/attempt"
)

func TestSleep(t *testing.T) {
	if err := attempt.Sleep(context.Background(), time.Millisecond); err != nil {
		t.Errorf("Sleep(1ms) = %v, want nil", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	if err := attempt.Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("Sleep(1h) on a cancelled context = %v, want context.Canceled", err)
	}
	if took := time.Since(start); took > time.Minute {
		t.Errorf("Sleep(1h) on a cancelled context took %v", took)
	}
}
