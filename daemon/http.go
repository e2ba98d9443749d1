package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/config"
	"github.com/meetingbot/meetingbot/connect"
)

// timeouts bound every connection to the bot's HTTP servers, so that
// neither a slow client nor an idle one holds a connection for long.
type timeouts struct {
	readHeader, read, write, idle time.Duration
}

// serverTimeouts are the bounds of the serving process: a request's
// headers in 5s and all of it in 10s, an answer written in 30s, a
// keep-alive connection idle for at most a minute.
var serverTimeouts = timeouts{readHeader: 5 * time.Second, read: 10 * time.Second, write: 30 * time.Second, idle: time.Minute}

// httpServer is one of the bot's listeners and the server on it.
type httpServer struct {
	name string // the variable that set its address
	what string // what it serves, for the log
	ln   net.Listener
	srv  *http.Server
}

// listen opens the listeners and mounts what they serve: /healthz and
// /metrics, and on HTTP_ADDR Slack's request URLs (with self-service),
// Google's push notifications (with PUBLIC_URL) and the sign-ins of
// people's own accounts. Self-service is made here, last: it answers
// Slack with every other part.
func (b *Bot) listen(ctx context.Context) error {
	netListen := net.Listen
	if b.opts.Listen != nil {
		netListen = b.opts.Listen
	}
	servers, err := listeners(b.cfg, b.mon.Handler(), b.mon.PublicHandler(), b.log, netListen)
	if err != nil {
		return err
	}
	b.servers = servers
	if err := b.makeSelfService(); err != nil {
		return err
	}
	if b.handler != nil {
		b.mount("/slack/", b.handler, " and Slack's request URLs (/slack/commands, /slack/interactivity, /slack/events)")
		b.sayExposed("HTTP_ADDR serves Slack's request URLs, so Slack must reach it")
	}
	if b.cfg.PublicURL != "" {
		b.mount(config.NotifyPath, b.mir.Handler(), " and Google's push notifications ("+config.NotifyPath+")")
		b.sayExposed("HTTP_ADDR serves Google's push notifications, so Google must reach it")
	}
	if b.accounts != nil {
		for _, p := range []meetingbot.Provider{meetingbot.ProviderGoogle, meetingbot.ProviderSlack} {
			if b.accounts.Enabled(p) {
				b.mount("/"+string(p)+"/oauth/", b.accounts.Handler(),
					fmt.Sprintf(" and the %s sign-in of people's own accounts (%s, %s)", p, connect.StartPath(p), connect.CallbackPath(p)))
			}
		}
	}
	return nil
}

// listeners opens the listeners cfg asks for. With HTTP_ADDR alone, it
// serves detailed, the detailed /healthz and /metrics, which name
// calendars and channels. With METRICS_ADDR too, those move to that
// private listener, and HTTP_ADDR's /healthz, which Slack, Google or
// anyone may reach, serves public, which says only ok or how many
// subscriptions fail. The HTTP_ADDR server comes first. netListen opens
// each listener: net.Listen but in tests.
func listeners(cfg config.Config, detailed, public http.Handler, log *slog.Logger, netListen func(network, addr string) (net.Listener, error)) ([]*httpServer, error) {
	type plan struct {
		name, addr, what string
		handler          http.Handler
	}
	plans := []plan{{"HTTP_ADDR", cfg.HTTPAddr, "/healthz and /metrics", detailed}}
	if cfg.MetricsAddr != "" {
		plans = []plan{
			{"HTTP_ADDR", cfg.HTTPAddr, "/healthz", public},
			{"METRICS_ADDR", cfg.MetricsAddr, "/metrics and the detailed /healthz", detailed},
		}
	}
	var servers []*httpServer
	for _, l := range plans {
		ln, err := netListen("tcp", l.addr)
		if err != nil {
			for _, s := range servers {
				s.ln.Close()
			}
			return nil, fmt.Errorf("listen on %s: %w", l.name, err)
		}
		servers = append(servers, &httpServer{name: l.name, what: l.what, ln: ln, srv: newServer(l.handler, serverTimeouts, log)})
	}
	return servers, nil
}

// newServer returns a server of h whose connections t bounds.
func newServer(h http.Handler, t timeouts, log *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: t.readHeader,
		ReadTimeout:       t.read,
		WriteTimeout:      t.write,
		IdleTimeout:       t.idle,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
}

// mount serves h at pattern on the HTTP_ADDR server, beside what it
// served already; what says so in the start-up log.
func (b *Bot) mount(pattern string, h http.Handler, what string) {
	srv := b.servers[0]
	mux := http.NewServeMux()
	mux.Handle(pattern, h)
	mux.Handle("/", srv.srv.Handler)
	srv.srv.Handler = mux
	srv.what += what
}

// sayExposed says, when HTTP_ADDR is the only listener, that what the
// world reaches there includes /metrics and the detailed /healthz.
func (b *Bot) sayExposed(why string) {
	if len(b.servers) == 1 {
		b.log.Info(why + "; /metrics and the detailed /healthz, which name calendars and channels, are there too: set METRICS_ADDR (e.g. 127.0.0.1:9091) to move them to a private listener")
	}
}

// runSocketMode serves Socket Mode until ctx ends. A refused
// SLACK_APP_TOKEN is logged with the fix; reminders go on without it.
func (b *Bot) runSocketMode(ctx context.Context) {
	if err := b.app.RunSocketMode(ctx, b.socket); err != nil && !errors.Is(err, context.Canceled) {
		b.log.Error("Slack refused SLACK_APP_TOKEN, so /meetingbot, the Home tab and buttons get no answer over Socket Mode until it is replaced and the bot restarted: "+
			"generate an app-level token with the scope connections:write (Basic Information > App-Level Tokens) and check that Socket Mode is on (Settings > Socket Mode); reminders go on", "err", err)
	}
}
