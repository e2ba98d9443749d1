package main

import (
	"log/slog"
	"strings"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/notify"
)

// keepChannelNames makes slack keep the channel names it lists in st, and
// says at start-up, once, that the #name destinations of subs cost a
// listing of the workspace's channels where a channel ID costs nothing.
// It says so at INFO, not WARN: the configuration is valid, and a deploy
// that works must log nothing an operator alerting on warnings is paged
// for (TestSIGTERMDuringATickLogsNoError).
func keepChannelNames(slack *notify.Slack, st notify.ChannelNames, subs []meetingbot.Subscription, log *slog.Logger) {
	slack.KeepNames(st)
	var named []string
	seen := map[string]bool{}
	for _, s := range subs {
		if d := strings.TrimSpace(s.Destination); strings.HasPrefix(d, "#") && !seen[d] {
			seen[d] = true
			named = append(named, d)
		}
	}
	if len(named) > 0 {
		log.Info("CALENDARS names channels by #name: the bot finds each by listing the workspace's channels (conversations.list, "+
			"which Slack allows about 20 pages a minute; a large workspace takes minutes) and keeps what it found in its database; "+
			"a channel ID (C…, at the bottom of the channel's details in Slack) needs no listing and survives a rename",
			"channels", strings.Join(named, ","))
	}
}
