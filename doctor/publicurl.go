package doctor

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/meetingbot/meetingbot/config"
	"github.com/meetingbot/meetingbot/internal/outbound"
)

// runWhereTheBotRuns says how to run doctor beside the deployed bot, with
// its secrets: on Fly.io through the image's entrypoint (which runs it as
// the bot's user), on Kubernetes in the bot's container.
const runWhereTheBotRuns = `run bot doctor where the bot runs, with its environment: ` +
	`fly ssh console -C "/usr/local/bin/entrypoint doctor" (Fly.io), ` +
	`kubectl exec deploy/meetingbot -- bot doctor (Kubernetes), ` +
	`or on the bot's host with its environment file (systemd, docs/setup.md)`

// publicURLChecks fetch PUBLIC_URL/healthz from outside, as Google reaches
// the bot, over https with the certificate checked. Before the first
// deploy nothing answers there yet: when no bot answers on HTTP_ADDR here
// either, the check waits for the deploy rather than failing, and says
// where to run doctor once the bot runs.
func publicURLChecks(d *doctorEnv) []check {
	if d.cfg.PublicURL == "" {
		return nil
	}
	url := d.cfg.PublicURL + "/healthz"
	return []check{{"PUBLIC_URL", func(ctx context.Context) outcome {
		ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		defer cancel()
		first, status, err := fetchHealth(ctx, url)
		var o outcome
		switch {
		case err != nil:
			o = fail(url+" cannot be reached: "+err.Error(),
				"Google posts to PUBLIC_URL over https with a valid certificate: check its DNS name, the certificate and the proxy in front of HTTP_ADDR, and that the bot runs")
		case botHealth(status, first):
			return pass("%s answers from outside: %s", url, first)
		default:
			o = fail(fmt.Sprintf("%s answered %s, not this bot's /healthz", url, status),
				"PUBLIC_URL must be the base URL that reaches HTTP_ADDR (the proxy in front of the bot forwards PUBLIC_URL/… to it), e.g. "+
					"https://meetingbot.fly.dev, without "+config.NotifyPath)
		}
		if local := localHealthURL(d.cfg.HTTPAddr); local != "" {
			if first, status, err := fetchHealth(ctx, local); err == nil && botHealth(status, first) {
				return o // the bot runs here, so PUBLIC_URL should reach it
			}
		}
		return wait("no bot answers at "+url+" yet, nor on HTTP_ADDR here: this check waits for the first deploy ("+o.detail+")",
			"deploy, then "+runWhereTheBotRuns)
	}}}
}

// fetchHealth gets url and returns the first line of its body and the
// response's status.
func fetchHealth(ctx context.Context, url string) (first, status string, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", "", err
	}
	resp, err := outbound.Client(nil).Do(req)
	if err != nil {
		return "", "", err
	}
	defer resp.Body.Close()
	first, _ = bufio.NewReader(resp.Body).ReadString('\n')
	return strings.TrimSpace(first), resp.Status, nil
}

// botHealth reports whether an answer is this bot's /healthz: 200 ok, or
// 503 unhealthy: with the reasons.
func botHealth(status, first string) bool {
	return (strings.HasPrefix(status, "200 ") || strings.HasPrefix(status, "503 ")) &&
		(strings.HasPrefix(first, "ok") || strings.HasPrefix(first, "unhealthy:"))
}

// localHealthURL is /healthz on HTTP_ADDR as seen from this host (an
// empty or unspecified host is the loopback), or "" when HTTP_ADDR names
// no fixed port.
func localHealthURL(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || port == "" || port == "0" {
		return ""
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + "/healthz"
}
