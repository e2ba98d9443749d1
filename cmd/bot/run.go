package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"

	"github.com/meetingbot/meetingbot/config"
	"github.com/meetingbot/meetingbot/daemon"
	"github.com/meetingbot/meetingbot/demo"
	"github.com/meetingbot/meetingbot/internal/logger"
)

// usageError is a command line the bot does not understand; it exits 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// run is the whole program: main only adds signals and the exit status.
// It returns a *config.Error or a usageError for what the operator must
// fix before anything starts, and nil when ctx ends after a clean stop.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cmd := ""
	if len(args) > 0 {
		cmd = args[0]
	}
	switch cmd {
	case "-h", "-help", "--help", "help":
		config.Usage(stdout)
		return nil
	case "audit":
		return runAudit(ctx, args[1:], getenv, stdout, stderr)
	case "doctor":
		return runDoctor(ctx, args[1:], getenv, stdout, stderr)
	case "version", "-version", "--version":
		if len(args) > 1 {
			return usageError{fmt.Sprintf("unexpected argument %q: bot version takes none", args[1])}
		}
		return printVersion(stdout)
	case "", "demo":
	default:
		return usageError{fmt.Sprintf("unknown command %q: want no command, demo, audit, doctor or version (see bot -h)", cmd)}
	}
	if len(args) > 1 {
		return usageError{fmt.Sprintf("unexpected argument %q: configuration comes from environment variables (see bot -h)", args[1])}
	}
	if cmd == "demo" {
		return demo.Run(ctx, getenv, stdout, stderr, version())
	}
	cfg, err := config.Parse(getenv)
	if err != nil {
		return err
	}
	if cfg.Demo {
		return demo.Run(ctx, getenv, stdout, stderr, version())
	}
	return serve(ctx, cfg, newLogger(cfg, stderr))
}

// newLogger builds the one logger of the process, writing to w.
func newLogger(cfg config.Config, w io.Writer) *slog.Logger {
	return logger.New(cfg.LogLevel, cfg.LogFormat, w)
}

// serve runs the bot cfg describes until ctx ends (package daemon), and
// returns nil after a clean stop, or when ctx ended during start-up.
func serve(ctx context.Context, cfg config.Config, log *slog.Logger) error {
	b, err := daemon.New(ctx, cfg, daemon.Options{Logger: log, Version: version()})
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			return nil // stopped during start-up: nothing to finish
		}
		return err
	}
	defer b.Close()
	return b.Run(ctx)
}
