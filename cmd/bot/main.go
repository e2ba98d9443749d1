// Command bot posts a Slack reminder before each Google Calendar meeting.
//
// Configuration comes only from environment variables; run `bot -h` for the
// list. With neither a Slack token nor Google credentials it runs the
// built-in demo against local emulators. `bot demo` runs the demo
// explicitly; `bot audit` compares the ledger with Slack.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/meetingbot/meetingbot/config"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		// After the first signal, a second one kills at once.
		<-ctx.Done()
		stop()
	}()
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}

// exitCode prints err, if any, and returns the exit status for it: 0 for
// none, 2 for a malformed configuration or command line, a subcommand's
// own status, 1 otherwise.
func exitCode(err error, stderr io.Writer) int {
	var status exitStatus
	switch {
	case err == nil:
		return 0
	case errors.As(err, &status):
		return int(status) // the subcommand has said why
	case config.IsConfig(err), errors.As(err, new(usageError)):
		fmt.Fprintln(stderr, err)
		return 2
	default:
		fmt.Fprintln(stderr, "bot:", err)
		return 1
	}
}
