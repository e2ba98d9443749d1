// Package rsvp answers invitations from Slack and tells people of new
// ones (docs/design.md, "Reminder actions").
//
// Service is the click's side: a person clicks Going, Maybe or No on a
// reminder or a notice, and their own answer is written to the event on
// their own connected calendar (calendar.Source.Respond reads the event,
// changes only their attendee entry and writes it back with its ETag).
// Nobody answers for anyone else: the calendar a button names must be the
// clicker's own connected account.
//
// Engine is the notices' side: for each person who turned invitation
// notices on (/meetingbot invites on), each pass reads their calendar's
// mirror for invitations they have not answered, organised by someone
// else, and DMs one notice of each, once: claimed, sent and recorded in
// the ledger as a reminder is (meetingbot.InviteKey), so that a crash or
// another replica never makes a second.
package rsvp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/meetingbot/meetingbot"
)

// Service answers invitations for the people who click. Create it with
// NewService.
type Service struct {
	cal      Calendar
	accounts Accounts
	refresh  func(ctx context.Context, calendarID string)
	log      *slog.Logger
}

// NewService returns a Service writing answers through cal for the people
// of accounts. refresh, if set, is called after an answer changed a
// calendar's event: the mirror syncs that calendar and the scheduler
// plans it at once, so that a declined meeting's other reminders stop and
// its reminders already sent say so.
func NewService(cal Calendar, accounts Accounts, refresh func(ctx context.Context, calendarID string), log *slog.Logger) (*Service, error) {
	if cal == nil || accounts == nil {
		return nil, errors.New("rsvp: calendar and accounts are required")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Service{cal: cal, accounts: accounts, refresh: refresh, log: log}, nil
}

// Answer sets user's answer r to the invitation t names, on user's own
// connected Google calendar, and returns what the write left (Was equal
// to Response: nothing changed; Calendar as t names it, else the
// account). calendar, when set, must be that calendar.
//
// Errors, each permanent and of package meetingbot: ErrNotConnected (no
// Google account connected), ErrConnectionBroken (Google no longer
// honours the grant), ErrNotYourCalendar (t names someone else's
// calendar), ErrNeedsWrite (the grant is read-only: ConsentLink asks for
// more), ErrCannotEdit, ErrNotInvited, ErrGone. Others (Google or the
// store unreachable, a rate limit) are transient.
func (s *Service) Answer(ctx context.Context, user, calendar, event string, r meetingbot.Response) (meetingbot.Answered, error) {
	out := meetingbot.Answered{Calendar: calendar, Event: event, Response: r}
	if !r.Answer() || event == "" {
		return out, meetingbot.Permanent(fmt.Errorf("rsvp: answer %q to %q: not an answer to an event", r, event))
	}
	c, ok, err := s.accounts.Connection(ctx, meetingbot.ProviderGoogle, user)
	switch {
	case err != nil:
		return out, fmt.Errorf("rsvp: connection of %s: %w", user, err)
	case !ok:
		return out, meetingbot.Permanent(fmt.Errorf("rsvp: %s: %w", user, meetingbot.ErrNotConnected))
	case c.State != meetingbot.ConnectionActive:
		return out, meetingbot.Permanent(fmt.Errorf("rsvp: %s: %w", user, meetingbot.ErrConnectionBroken))
	case calendar != "" && !strings.EqualFold(calendar, c.Account):
		s.log.Warn("an answer for a calendar other than the clicker's own was refused", "user", user, "calendar", calendar)
		return out, meetingbot.Permanent(fmt.Errorf("rsvp: %s clicked for %s: %w", user, calendar, meetingbot.ErrNotYourCalendar))
	case !c.CanAnswer():
		return out, meetingbot.Permanent(fmt.Errorf("rsvp: %s: %w", user, meetingbot.ErrNeedsWrite))
	}
	a, err := s.cal.Respond(ctx, meetingbot.ReadAs(c.Account, c.UserID), event, r)
	if calendar != "" {
		// The calendar as the button names it, as the mirror and the
		// subscriptions do (its email's case may differ from the
		// account's, which is lower case): Refresh reads that one.
		a.Calendar = calendar
	}
	if err != nil && (errors.Is(err, meetingbot.ErrNotConnected) || s.stopped(ctx, user)) {
		// It was active a moment ago: Google refused its grant since
		// (invalid_grant), and the connection stopped.
		return a, meetingbot.Permanent(fmt.Errorf("rsvp: %s: %w: %w", user, meetingbot.ErrConnectionBroken, err))
	}
	if err != nil {
		return a, err
	}
	s.log.Info("invitation answered", "user", user, "calendar", a.Calendar, "event", a.Event, "was", a.Was, "answer", a.Response)
	return a, nil
}

// stopped reports whether user's Google connection is no longer in use:
// a write refused for the grant (Google answered invalid_grant to its
// refresh) stops the connection, whatever the error says on its way back.
func (s *Service) stopped(ctx context.Context, user string) bool {
	c, ok, err := s.accounts.Connection(ctx, meetingbot.ProviderGoogle, user)
	return err == nil && (!ok || c.State != meetingbot.ConnectionActive)
}

// Refresh has calendarID read again now, after an answer changed one of
// its events: its mirror syncs and its subscriptions are planned, so that
// a declined meeting's other reminders stop at once and its reminders
// already sent are edited to say "You declined".
func (s *Service) Refresh(ctx context.Context, calendarID string) {
	if s.refresh != nil {
		s.refresh(ctx, calendarID)
	}
}

// ConsentLink returns a link, for user only, that connects their Google
// account with the scope answering needs (meetingbot.ScopeCalendarEvents)
// beside those granted before: Google asks once, and people who never
// answer from Slack keep a read-only grant.
func (s *Service) ConsentLink(ctx context.Context, user string) (string, error) {
	return s.accounts.LinkScopes(ctx, meetingbot.ProviderGoogle, user, []string{meetingbot.ScopeCalendarEvents})
}
