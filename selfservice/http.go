package selfservice

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
)

// The paths of Slack's request URLs, as docs/design.md gives them.
const (
	PathCommands      = "/slack/commands"
	PathInteractivity = "/slack/interactivity"
	PathEvents        = "/slack/events"
)

// Handler returns the handler of Slack's request URLs: POST PathCommands,
// PathInteractivity and PathEvents (mount it at "/slack/"). Every request
// is checked before it is read: a body over MaxBody (MaxInteractionBody
// on PathInteractivity) is refused with 413,
// and one without a valid v0 signature under signingSecret, with a
// timestamp more than MaxSkew from the clock, or seen before by any
// replica on the store, with 401; one the store cannot check against
// those seen with 503. A refused request has no effect. It fails without
// a signing secret.
func (a *App) Handler(signingSecret string) (http.Handler, error) {
	if signingSecret == "" {
		return nil, errors.New("selfservice: no signing secret (SLACK_SIGNING_SECRET)")
	}
	return &handler{
		app:     a,
		verify:  &verifier{secret: []byte(signingSecret), now: a.now, seen: a.store},
		refused: a.refusals,
	}, nil
}

type handler struct {
	app     *App
	verify  *verifier
	refused *refusals
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case PathCommands, PathInteractivity, PathEvents:
	default:
		http.NotFound(w, r)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "use POST", http.StatusMethodNotAllowed)
		return
	}
	limit := int64(MaxBody)
	if r.URL.Path == PathInteractivity {
		limit = MaxInteractionBody
	}
	tooLarge := func() {
		h.refused.refused(RefusedTooLarge, r.URL.Path, r.RemoteAddr, errTooLarge)
		http.Error(w, fmt.Sprintf("request body over %d KiB", limit>>10), http.StatusRequestEntityTooLarge)
	}
	if r.ContentLength > limit {
		tooLarge()
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	switch {
	case err != nil:
		http.Error(w, "cannot read the request body", http.StatusBadRequest)
		return
	case int64(len(body)) > limit:
		tooLarge()
		return
	}
	if err := h.verify.check(r.Context(), r.Header, body); err != nil {
		status, why, reason := http.StatusUnauthorized, err.Error(), RefusedSignature
		var ref *refusal
		if errors.As(err, &ref) {
			reason = ref.reason
		}
		if errors.Is(err, errUnchecked) {
			// Slack retries; the store's error is for the log alone.
			status, why = http.StatusServiceUnavailable, errUnchecked.Error()
		}
		h.refused.refused(reason, r.URL.Path, r.RemoteAddr, err)
		http.Error(w, "refused: "+why, status)
		return
	}
	switch r.URL.Path {
	case PathCommands:
		h.commands(w, r, body)
	case PathInteractivity:
		h.interactivity(w, r, body)
	case PathEvents:
		h.events(w, r, body)
	}
}

// errTooLarge is the refusal of a body over the bound.
var errTooLarge = &refusal{RefusedTooLarge, "request body over its bound"}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_ = json.NewEncoder(w).Encode(v)
}

// ephemeral is a reply only its reader sees.
func ephemeral(text string) map[string]any {
	return map[string]any{"response_type": "ephemeral", "text": text}
}

// slashCommand reads a slash command's form, as slack.SlashCommandParse.
func slashCommand(form url.Values) slack.SlashCommand {
	return slack.SlashCommand{
		Token: form.Get("token"), TeamID: form.Get("team_id"), TeamDomain: form.Get("team_domain"),
		EnterpriseID: form.Get("enterprise_id"), EnterpriseName: form.Get("enterprise_name"),
		IsEnterpriseInstall: form.Get("is_enterprise_install") == "true",
		ChannelID:           form.Get("channel_id"), ChannelName: form.Get("channel_name"),
		UserID: form.Get("user_id"), UserName: form.Get("user_name"), Command: form.Get("command"),
		Text: form.Get("text"), ResponseURL: form.Get("response_url"), TriggerID: form.Get("trigger_id"),
		APIAppID: form.Get("api_app_id"),
	}
}

func (h *handler) commands(w http.ResponseWriter, r *http.Request, body []byte) {
	form, err := url.ParseQuery(string(body))
	if err != nil || form.Get("user_id") == "" {
		http.Error(w, "not a slash command", http.StatusBadRequest)
		return
	}
	if !h.forUs(w, r, form.Get("team_id"), form.Get("api_app_id")) {
		return
	}
	writeJSON(w, ephemeral(h.app.answerCommand(r.Context(), slashCommand(form))))
}

func (h *handler) interactivity(w http.ResponseWriter, r *http.Request, body []byte) {
	form, err := url.ParseQuery(string(body))
	var cb slack.InteractionCallback
	if err != nil || json.Unmarshal([]byte(form.Get("payload")), &cb) != nil || cb.User.ID == "" {
		http.Error(w, "not an interaction payload", http.StatusBadRequest)
		return
	}
	if !h.forUs(w, r, cb.Team.ID, cb.APIAppID) {
		return
	}
	// A snooze's timer is stored before Slack hears back.
	answer := h.app.snoozeClicks(r.Context(), cb)
	if !h.app.spawn(r.Context(), func(ctx context.Context) { answer(ctx); h.app.interaction(ctx, cb) }) {
		http.Error(w, "shutting down", http.StatusServiceUnavailable)
		return
	}
	w.WriteHeader(http.StatusOK) // an empty 200 acknowledges
}

func (h *handler) events(w http.ResponseWriter, r *http.Request, body []byte) {
	ev, err := slackevents.ParseEvent(body, slackevents.OptionNoVerifyToken())
	if err != nil {
		http.Error(w, "not an Events API request", http.StatusBadRequest)
		return
	}
	switch ev.Type {
	case slackevents.URLVerification:
		v, _ := ev.Data.(*slackevents.EventsAPIURLVerificationEvent)
		if v == nil {
			http.Error(w, "no challenge", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		_, _ = io.WriteString(w, v.Challenge)
		return
	case slackevents.CallbackEvent:
		if !h.forUs(w, r, ev.TeamID, ev.APIAppID) {
			return
		}
		// A retry (X-Slack-Retry-Num) is handled like the first delivery:
		// that one may have been answered 503 below, by this bot or
		// another replica. event drops it when its event_id was handled.
		if !h.app.spawn(r.Context(), func(ctx context.Context) { h.app.event(ctx, ev) }) {
			http.Error(w, "shutting down", http.StatusServiceUnavailable) // Slack retries
			return
		}
	}
	w.WriteHeader(http.StatusOK)
}

// event handles an Events API event once, whichever replica Slack
// delivers it to and however often (first delivery, retries, duplicates):
// app_home_opened publishes the Home tab; a message in the bot's DM
// (message.im) gets a short help answer (answerDM). An event whose
// event_id was handled already, by any replica on the store, is dropped.
func (a *App) event(ctx context.Context, ev slackevents.EventsAPIEvent) {
	if !a.firstDelivery(ctx, eventID(ev)) {
		return
	}
	if a.revokedEvent(ctx, ev.InnerEvent.Data) {
		return
	}
	switch e := ev.InnerEvent.Data.(type) {
	case *slackevents.AppHomeOpenedEvent:
		if e.Tab == "home" {
			a.publishHome(ctx, e.User, "")
		}
	case *slackevents.MessageEvent:
		a.answerDM(ctx, e)
	}
}

// firstDelivery reports whether the event id is handled here: it was not
// handled before, by any replica on the store, within seenFor. An event
// without an ID, or one the store cannot check, is handled: an answer
// twice is better than none.
func (a *App) firstDelivery(ctx context.Context, id string) bool {
	if id == "" {
		return true
	}
	now := a.now()
	first, err := a.store.Remember(ctx, "event:"+id, now, now.Add(seenFor))
	if err != nil {
		a.log.Warn("cannot check whether a Slack event was handled already; handling it", "event", id, "err", err)
		return true
	}
	if !first {
		a.log.Debug("Slack event handled already", "event", id)
	}
	return first
}

// answerCommand answers a slash command within AckWithin: with the reply
// itself when the work is done by then, else with "one moment" while the
// work goes on and its reply follows through the response_url.
func (a *App) answerCommand(parent context.Context, cmd slack.SlashCommand) string {
	var (
		mu    sync.Mutex
		acked bool
		done  = make(chan string, 1)
	)
	started := a.spawn(parent, func(ctx context.Context) {
		text := a.answer(ctx, cmd)
		mu.Lock()
		late := acked
		if !late {
			done <- text
		}
		mu.Unlock()
		if late {
			a.respond(ctx, cmd.ResponseURL, cmd.ChannelID, cmd.UserID, text)
		}
	})
	if !started {
		return "I'm restarting; try again in a minute."
	}
	t := time.NewTimer(a.ackIn)
	defer t.Stop()
	select {
	case text := <-done:
		return text
	case <-t.C:
	}
	mu.Lock()
	defer mu.Unlock()
	select {
	case text := <-done:
		return text
	default:
		acked = true
	}
	if w := strings.Fields(strings.ToLower(cmd.Text)); len(w) > 0 && (w[0] == string(verbOn) || w[0] == string(verbSubscribe)) {
		return "One moment: I'm reading the calendar…"
	}
	return "One moment…"
}

// respond sends text to the person who acted: through the response_url,
// or else as an ephemeral message in channel.
func (a *App) respond(ctx context.Context, responseURL, channel, user, text string) {
	if responseURL != "" {
		err := slack.PostWebhookCustomHTTPContext(ctx, responseURL, a.http, &slack.WebhookMessage{ResponseType: slack.ResponseTypeEphemeral, Text: text})
		if err == nil {
			return
		}
		a.log.Warn("cannot answer through the response_url", "user", user, "err", err)
	}
	if channel == "" || user == "" {
		return
	}
	if _, err := a.api.PostEphemeralContext(ctx, channel, user, slack.MsgOptionText(text, false)); err != nil {
		a.log.Warn("cannot answer with an ephemeral message", "user", user, "channel", channel, "err", err)
	}
}
