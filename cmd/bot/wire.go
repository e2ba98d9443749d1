package main

import (
	"context"
	"fmt"
	"io"

	"github.com/meetingbot/meetingbot/audit"
	"github.com/meetingbot/meetingbot/config"
	"github.com/meetingbot/meetingbot/daemon"
)

// exitStatus is an exit status chosen by a subcommand that has already
// said why.
type exitStatus int

func (e exitStatus) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// runAudit is `bot audit`: it reads the bot's own configuration and ledger
// and compares them with the calendars and Slack.
func runAudit(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	var closeLedger func() error
	defer func() {
		if closeLedger != nil {
			closeLedger()
		}
	}()
	open := func(ctx context.Context) (audit.Deps, error) {
		cfg, err := config.Parse(getenv)
		if err != nil {
			return audit.Deps{}, err
		}
		deps, closer, err := daemon.Audit(ctx, cfg, newLogger(cfg, stderr))
		closeLedger = closer
		return deps, err
	}
	if code := audit.Command(ctx, args, open, stdout, stderr); code != audit.ExitOK {
		return exitStatus(code)
	}
	return nil
}
