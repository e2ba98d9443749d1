package audit

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/meetingbot/meetingbot"
)

// Paused is a person's connected account that stopped (the provider
// refused its grant, or no key of TOKEN_ENCRYPTION_KEY opens its token),
// and the subscriptions whose reminders wait for that person to
// reconnect: the bot does not sweep them meanwhile, so they are not
// audited as missing, and the report names them instead.
type Paused struct {
	Provider string    `json:"provider"`
	Account  string    `json:"account"`
	UserID   string    `json:"user_id"`
	Since    time.Time `json:"since"`
	Reason   string    `json:"reason"`
	// Subscriptions are the IDs of the subscriptions on Account's
	// calendar; empty when none is.
	Subscriptions []string `json:"subscriptions"`
}

// PausedReader lists the connections that stopped, and the subscriptions
// each pauses (PausedConnections reads them from the store).
type PausedReader func(ctx context.Context) ([]Paused, error)

// ConnectionsStore is what PausedConnections reads: people's connections
// and the subscriptions they made in Slack.
type ConnectionsStore interface {
	Connections(ctx context.Context) ([]meetingbot.Connection, error)
	SlackSubscriptions(ctx context.Context) ([]meetingbot.SlackSubscription, error)
}

// PausedConnections lists, for bot audit, the connections that stopped
// and the subscriptions each pauses until its person reconnects: those on
// a stopped Google account's calendar, the status one of a stopped Slack
// user. st is the audit's store.
func PausedConnections(st ConnectionsStore) PausedReader {
	return func(ctx context.Context) ([]Paused, error) {
		conns, err := st.Connections(ctx)
		if err != nil {
			return nil, err
		}
		var subs []meetingbot.SlackSubscription
		for _, c := range conns {
			if c.Provider == meetingbot.ProviderGoogle && c.State == meetingbot.ConnectionBroken {
				if subs, err = st.SlackSubscriptions(ctx); err != nil {
					return nil, err
				}
				break
			}
		}
		var out []Paused
		for _, c := range conns {
			if c.State != meetingbot.ConnectionBroken {
				continue
			}
			p := Paused{Provider: string(c.Provider), Account: c.Account, UserID: c.UserID, Since: c.UpdatedAt.UTC(), Reason: c.Reason, Subscriptions: []string{}}
			switch c.Provider {
			case meetingbot.ProviderGoogle:
				for _, s := range subs {
					if strings.EqualFold(s.CalendarID, c.Account) {
						p.Subscriptions = append(p.Subscriptions, s.ID)
					}
				}
			case meetingbot.ProviderSlack:
				p.Subscriptions = append(p.Subscriptions, meetingbot.StatusSubscription(c.UserID))
			}
			out = append(out, p)
		}
		return out, nil
	}
}

// readPaused fills r's paused connections from p.Paused, or says why it
// could not.
func readPaused(ctx context.Context, p period, r *Report) {
	if p.Paused == nil {
		return
	}
	paused, err := p.Paused(ctx)
	if err != nil {
		r.PausedError = fmt.Sprintf("read connections: %v", err)
		return
	}
	r.Paused = paused
}

// writePaused writes the report's paused connections for people, one line
// each.
func (r Report) writePaused(w io.Writer) {
	if len(r.Paused) == 0 && r.PausedError == "" {
		return
	}
	fmt.Fprintln(w)
	if r.PausedError != "" {
		fmt.Fprintf(w, "paused reminders not listed: %s\n", cell(r.PausedError))
	}
	for _, p := range r.Paused {
		subs := "no subscription"
		if len(p.Subscriptions) > 0 {
			subs = strings.Join(p.Subscriptions, ", ")
		}
		fmt.Fprintf(w, "PAUSED  the %s connection of %s (Slack user %s) stopped at %s: %s; its reminders wait for a reconnection: %s\n",
			cell(p.Provider), cell(p.Account), cell(p.UserID), stamp(p.Since), cell(strings.TrimSuffix(p.Reason, ".")), cell(subs))
	}
}
