package selfservice

import (
	"context"
	"errors"
	"fmt"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"
)

// RunSocketMode serves Slack's slash commands, interactions and events
// over Socket Mode until ctx ends, then returns nil. client is
// socketmode.New over a slack.Client that carries the app-level token
// (slack.OptionAppLevelToken, xapp-…) besides the bot token. Every envelope
// is acknowledged within 3 s: a slash command's ack carries its reply (or
// "one moment", the reply following through the response_url), others are
// acknowledged at once and handled after. It returns an error when Slack
// refuses the app-level token.
func (a *App) RunSocketMode(ctx context.Context, client *socketmode.Client) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errc := make(chan error, 1)
	go func() { errc <- client.RunContext(ctx) }()
	for {
		select {
		case <-ctx.Done():
			<-errc
			return nil
		case err := <-errc:
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("selfservice: socket mode: %w", err)
		case evt := <-client.Events:
			a.socketEvent(ctx, client, evt)
		}
	}
}

func (a *App) socketEvent(ctx context.Context, client *socketmode.Client, evt socketmode.Event) {
	switch evt.Type {
	case socketmode.EventTypeSlashCommand:
		cmd, ok := evt.Data.(slack.SlashCommand)
		if !ok || evt.Request == nil {
			return
		}
		req := *evt.Request
		if !a.socketForUs(ctx, client, req, cmd.TeamID, cmd.APIAppID) {
			return
		}
		// answerCommand takes up to AckWithin: not on the loop that reads
		// the other envelopes.
		started := a.spawn(ctx, func(ctx context.Context) {
			a.ack(ctx, client, req, ephemeral(a.answerCommand(ctx, cmd)))
		})
		if !started {
			a.ack(ctx, client, req, ephemeral("I'm restarting; try again in a minute."))
		}
	case socketmode.EventTypeInteractive:
		cb, ok := evt.Data.(slack.InteractionCallback)
		if !ok || evt.Request == nil || !a.socketForUs(ctx, client, *evt.Request, cb.Team.ID, cb.APIAppID) {
			return
		}
		answer := a.snoozeClicks(ctx, cb) // a snooze's timer is stored before the ack
		a.ack(ctx, client, *evt.Request, nil)
		a.spawn(ctx, func(ctx context.Context) { answer(ctx); a.interaction(ctx, cb) })
	case socketmode.EventTypeEventsAPI:
		ev, ok := evt.Data.(slackevents.EventsAPIEvent)
		if !ok || evt.Request == nil || !a.socketForUs(ctx, client, *evt.Request, ev.TeamID, ev.APIAppID) {
			return
		}
		// Acknowledged only when it will be handled: during shutdown Slack
		// gets no ack and delivers it again (retry_attempt), maybe to
		// another replica, which handles it unless its event_id was.
		if a.spawn(ctx, func(ctx context.Context) { a.event(ctx, ev) }) {
			a.ack(ctx, client, *evt.Request, nil)
		}
	case socketmode.EventTypeConnected:
		a.log.Info("connected to Slack over Socket Mode")
	case socketmode.EventTypeConnectionError, socketmode.EventTypeIncomingError,
		socketmode.EventTypeErrorBadMessage, socketmode.EventTypeErrorWriteFailed:
		a.log.Warn("socket mode trouble", "event", string(evt.Type), "err", fmt.Sprint(evt.Data))
	case socketmode.EventTypeInvalidAuth:
		a.log.Error("Slack refused the app-level token (SLACK_APP_TOKEN)")
	}
}

// ack acknowledges one envelope, with payload when it is not nil.
func (a *App) ack(ctx context.Context, client *socketmode.Client, req socketmode.Request, payload any) {
	if err := client.AckCtx(ctx, req.EnvelopeID, payload); err != nil {
		a.log.Warn("cannot acknowledge a Socket Mode envelope", "envelope", req.EnvelopeID, "type", req.Type, "err", err)
	}
}

// socketForUs reports whether an envelope names the bot's workspace and
// app (see App.forUs). One that does not is acknowledged, so that Slack
// does not send it again, counted and logged as refused; one that cannot
// be checked (Slack cannot say who the bot is) is left unacknowledged, for
// Slack to deliver again.
func (a *App) socketForUs(ctx context.Context, client *socketmode.Client, req socketmode.Request, team, app string) bool {
	err := a.forUs(ctx, team, app)
	if err == nil {
		return true
	}
	var ref *refusal
	errors.As(err, &ref)
	a.refusals.refused(ref.reason, "socket mode "+req.Type, "", err)
	if !errors.Is(err, errNoIdentity) {
		a.ack(ctx, client, req, nil)
	}
	return false
}
