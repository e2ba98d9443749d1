package main

import (
	"context"
	"errors"
	"log/slog"
	"sync"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/calendar"
	"github.com/meetingbot/meetingbot/rsvp"
	"github.com/meetingbot/meetingbot/selfservice"
	"github.com/meetingbot/meetingbot/storage"
	"github.com/meetingbot/meetingbot/storage/postgres"
)

// Answering invitations from Slack (package rsvp): the Going / Maybe /
// No of reminders and notices, written with people's own Google
// accounts, and the notices of new invitations.

// The adapters provide what the answers consume.
var (
	_ rsvp.Calendar           = (*calendar.Source)(nil)
	_ rsvp.Accounts           = (*lateAccounts)(nil)
	_ selfservice.Answers     = (*rsvp.Service)(nil)
	_ selfservice.InviteStore = (*storage.Store)(nil)
	_ selfservice.InviteStore = (*postgres.Store)(nil)
)

// newAnswers returns the answers of invitations for cfg, or nil when
// people cannot connect their Google accounts (an answer is written with
// the person's own). refresh is set once the mirror and the scheduler
// are built.
func newAnswers(source *calendar.Source, late *lateAccounts, refresh *lateRefresh, log *slog.Logger) (*rsvp.Service, error) {
	if late == nil || !late.Enabled(meetingbot.ProviderGoogle) {
		return nil, nil
	}
	return rsvp.NewService(source, late, refresh.refresh, log)
}

// lateRefresh reads a calendar again after an answer changed it: set
// once the mirror and the scheduler are built, after self-service.
type lateRefresh struct {
	mu sync.Mutex
	f  func(ctx context.Context, calendarID string)
}

func (l *lateRefresh) set(f func(ctx context.Context, calendarID string)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.f = f
}

func (l *lateRefresh) refresh(ctx context.Context, calendarID string) {
	l.mu.Lock()
	f := l.f
	l.mu.Unlock()
	if f != nil {
		f(ctx, calendarID)
	}
}

// LinkScopes serves the answers, which are built before the accounts.
func (l *lateAccounts) LinkScopes(ctx context.Context, p meetingbot.Provider, userID string, scopes []string) (string, error) {
	if a := l.get(); a != nil {
		return a.LinkScopes(ctx, p, userID, scopes)
	}
	return "", errors.New("connect: starting")
}

// answerable reports whether calendarID's owner can answer its
// invitations from Slack: their Google account is connected and in use.
func (l *lateAccounts) answerable(ctx context.Context, calendarID string) bool {
	_, _, err := l.Account(ctx, calendarID)
	return err == nil
}
