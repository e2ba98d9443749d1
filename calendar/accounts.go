package calendar

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/oauth2"
	"google.golang.org/api/calendar/v3"
	"google.golang.org/api/option"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/internal/outbound"
)

// Accounts are the Google accounts people connected to the bot (package
// connect provides them). A person's own calendar is read with their own
// token for what they set up (a reading of theirs, see
// meetingbot.Subscription.Reader): their reminders, agenda, Home tab
// checks, answers and push channels, whose requests count against their
// per-user quota, not the service account's. Nothing else is read with
// it: a subscription someone else made of their calendar, or one of
// CALENDARS, reads with the bot's own credentials.
type Accounts interface {
	// Account returns the token source of user's connected account when
	// it is calendarID's owner (the account is calendarID), and the
	// connection's name, which changes when the person connects again.
	// An error matching meetingbot.ErrNotConnected means none is in use:
	// the calendar is read with the credentials, if any.
	Account(ctx context.Context, user, calendarID string) (oauth2.TokenSource, string, error)
	// Renew says the API refused the access token the connection last
	// handed out (401): its next token is a refreshed one.
	Renew(connection string)
	// Refused says the API refused the connection's token after a refresh
	// (401 twice): the connection stops.
	Refused(ctx context.Context, connection string, err error)
}

// errNoCredentials is loadCredentials's error when none are configured,
// which Accounts make optional.
var errNoCredentials = errors.New("no credentials")

// errNotConnected is the error of a read of a calendar no connected
// account and no credentials can read; explain says what to do.
func errNotConnected(string) error { return meetingbot.Permanent(meetingbot.ErrNotConnected) }

// service returns the API client of reading (meetingbot.ReadAs): its
// reader's own connected account when that reader owns the calendar and
// is connected, else the credentials'.
func (s *Source) service(ctx context.Context, reading string) (*calendar.Service, error) {
	calendarID, reader := meetingbot.ParseReading(reading)
	if s.cfg.Accounts == nil || calendarID == "" || reader == "" {
		return s.credentialService(ctx, calendarID)
	}
	ts, name, err := s.cfg.Accounts.Account(ctx, reader, calendarID)
	switch {
	case errors.Is(err, meetingbot.ErrNotConnected):
		s.mu.Lock()
		delete(s.connected, reading)
		s.mu.Unlock()
		return s.credentialService(ctx, calendarID)
	case err != nil:
		return nil, err // transient: the store did not answer
	}
	key := "connected:" + name
	s.mu.Lock()
	defer s.mu.Unlock()
	s.connected[reading] = name
	if svc := s.services[key]; svc != nil {
		return svc, nil
	}
	// The token source keeps this context for its refreshes, which outlive
	// this call.
	tokenCtx := context.WithValue(context.WithoutCancel(ctx), oauth2.HTTPClient, s.httpClient)
	client := oauth2.NewClient(tokenCtx, ts)
	client.Timeout = s.httpClient.Timeout
	client.CheckRedirect = outbound.CheckRedirect
	svc, err := calendar.NewService(ctx, option.WithHTTPClient(client), option.WithEndpoint(s.endpoint))
	if err != nil {
		return nil, fmt.Errorf("new service: %w", err)
	}
	s.services[key] = svc
	return svc, nil
}

// readsAs names who the last service of reading read with: reading
// itself when its reader's connected account did, "" for the credentials.
func (s *Source) readsAs(reading string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.connected[reading]; ok {
		return reading
	}
	return ""
}

// forget drops the API client of reading, and with it the cached token,
// so that the next read asks for a new one (a connected account's is
// refreshed: Renew).
func (s *Source) forget(reading string) {
	s.mu.Lock()
	name, ok := s.connected[reading]
	if ok {
		delete(s.services, "connected:"+name)
	}
	s.mu.Unlock()
	if !ok {
		calendarID, _ := meetingbot.ParseReading(reading)
		s.forgetCredential(calendarID)
		return
	}
	s.cfg.Accounts.Renew(name)
}

// reader names whose per-user quota a request of reading counts against:
// the connected account that reads it (its email, the calendar ID), else
// the credentials' principal (quotaPrincipal).
func (s *Source) reader(ctx context.Context, reading string) string {
	calendarID, reader := meetingbot.ParseReading(reading)
	if s.cfg.Accounts != nil && calendarID != "" && reader != "" {
		if _, _, err := s.cfg.Accounts.Account(ctx, reader, calendarID); err == nil {
			return strings.ToLower(calendarID)
		}
	}
	return s.quotaPrincipal(calendarID)
}

// refused tells Accounts that a connected account's token was refused
// after a refresh.
func (s *Source) refused(ctx context.Context, reading string, err error) {
	s.mu.Lock()
	name, ok := s.connected[reading]
	s.mu.Unlock()
	if ok {
		s.cfg.Accounts.Refused(ctx, name, err)
	}
}

// connectedFix explains a read that no connected account can make any
// more.
func connectedFix(calendarID string) string {
	return fmt.Sprintf("the Google account of %s is no longer connected (it was revoked, expired, or disconnected): its owner reconnects it with /meetingbot connect in Slack", calendarID)
}
