package main

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/meetingbot/meetingbot/config"
	"github.com/meetingbot/meetingbot/monitor"
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

// listen opens the listeners cfg asks for. With HTTP_ADDR alone, it serves
// the detailed /healthz and /metrics, which name calendars and channels.
// With METRICS_ADDR too, those move to that private listener, and
// HTTP_ADDR's /healthz, which Slack, Google or anyone may reach, says only
// ok or how many subscriptions fail. The HTTP_ADDR server comes first.
// netListen opens each listener: net.Listen but in tests.
func listen(cfg config.Config, mon *monitor.Monitor, log *slog.Logger, netListen func(network, addr string) (net.Listener, error)) ([]*httpServer, error) {
	type plan struct {
		name, addr, what string
		handler          http.Handler
	}
	plans := []plan{{"HTTP_ADDR", cfg.HTTPAddr, "/healthz and /metrics", mon.Handler()}}
	if cfg.MetricsAddr != "" {
		plans = []plan{
			{"HTTP_ADDR", cfg.HTTPAddr, "/healthz", mon.PublicHandler()},
			{"METRICS_ADDR", cfg.MetricsAddr, "/metrics and the detailed /healthz", mon.Handler()},
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
