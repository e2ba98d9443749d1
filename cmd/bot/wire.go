package main

import (
	"context"
	"errors"
	"io"
	"log/slog"

	"github.com/meetingbot/meetingbot/config"
	"github.com/meetingbot/meetingbot/monitor"
	"github.com/meetingbot/meetingbot/scheduler"
)

// backends builds the Calendar source and the Slack notifier for cfg,
// reporting their calls to mon.
func backends(ctx context.Context, cfg config.Config, log *slog.Logger, mon *monitor.Monitor) (scheduler.Source, scheduler.Notifier, error) {
	return nil, nil, errors.New("the calendar and notify clients are not wired in yet")
}

// demo runs the built-in demo.
func demo(ctx context.Context, getenv func(string) string, stdout, stderr io.Writer) error {
	return errors.New("the demo needs the calendar and notify emulators, not wired in yet")
}
