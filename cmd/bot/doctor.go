package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/meetingbot/meetingbot/config"
	"github.com/meetingbot/meetingbot/doctor"
)

// runDoctor is `bot doctor`: every check of package doctor, one line each,
// and exit 0 when all pass, 1 otherwise (2 for flags or a configuration
// that does not parse, as for the bot).
func runDoctor(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bot doctor", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, "print the checks as JSON, for scripts")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: bot doctor [--json]\n\nChecks the configuration in the environment against Slack, Google Calendar, the\ndatabase and PUBLIC_URL, changing nothing: one line per check, with the fix.\nExit status: 0 all pass, 1 one fails, 2 bad flags or configuration.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return usageError{"bot doctor: " + err.Error()}
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("bot doctor: unexpected argument %q: configuration comes from environment variables", fs.Arg(0))}
	}
	cfg, err := config.Parse(getenv)
	if err != nil {
		return err
	}
	if cfg.Demo {
		return usageError{"bot doctor: no configuration: doctor checks the bot's environment (SLACK_BOT_TOKEN, Google credentials, CALENDARS or self-service, DATABASE_PATH or DATABASE_URL); with none set, bot runs the demo"}
	}
	failed, err := doctor.Run(ctx, cfg, stdout, *asJSON)
	switch {
	case err != nil:
		return err
	case failed > 0:
		return exitStatus(1)
	}
	return nil
}
