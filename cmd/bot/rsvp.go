package main

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/audit"
	"github.com/meetingbot/meetingbot/calendar"
	"github.com/meetingbot/meetingbot/config"
	"github.com/meetingbot/meetingbot/notify"
	"github.com/meetingbot/meetingbot/rsvp"
	"github.com/meetingbot/meetingbot/selfservice"
	"github.com/meetingbot/meetingbot/storage/postgres"
	"github.com/meetingbot/meetingbot/storage/sqlite"
)

// Answering invitations from Slack (package rsvp): the Going / Maybe /
// No of reminders and notices, written with people's own Google
// accounts, and the notices of new invitations.

// The adapters provide what the answers consume.
var (
	_ rsvp.Calendar           = (*calendar.Source)(nil)
	_ rsvp.Accounts           = (*lateAccounts)(nil)
	_ rsvp.Notifier           = (*notify.Slack)(nil)
	_ selfservice.Answers     = (*rsvp.Service)(nil)
	_ selfservice.InviteStore = (*sqlite.Store)(nil)
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

// noticeStore is what the notices keep in the bot's store: who turned
// them on, and the ledger's claims.
type noticeStore interface {
	rsvp.Settings
	rsvp.Ledger
}

// Both stores provide the notices' state, and what bot audit reads of it.
var (
	_ noticeStore   = (*sqlite.Store)(nil)
	_ noticeStore   = (*postgres.Store)(nil)
	_ audit.Notices = (*sqlite.Store)(nil)
	_ audit.Notices = (*postgres.Store)(nil)
)

// meetingsFunc reads a calendar's meetings: the mirror's, built after the
// notices.
type meetingsFunc func(ctx context.Context, sub meetingbot.Subscription, from, to time.Time) ([]meetingbot.Meeting, error)

func (f meetingsFunc) Meetings(ctx context.Context, sub meetingbot.Subscription, from, to time.Time) ([]meetingbot.Meeting, error) {
	return f(ctx, sub, from, to)
}

// newNotices returns the notices of new invitations for cfg, or nil when
// nobody can answer from Slack (answers is nil) or the store keeps no
// settings for them. Their calendars are read through meetings (the
// mirror), their DMs posted by slack.
func newNotices(cfg config.Config, st store, conns *connections, answers *rsvp.Service, meetings meetingsFunc, slack *notify.Slack, log *slog.Logger) (*rsvp.Engine, error) {
	if answers == nil || conns == nil {
		return nil, nil
	}
	ns, ok := st.(noticeStore)
	if !ok {
		return nil, nil
	}
	return rsvp.New(ns, conns.accounts, meetings, slack, ns, rsvp.Options{
		Interval: cfg.TickInterval,
		Lease:    claimLease(cfg),
		Logger:   log,
	})
}

// bothCalendars returns the calendars a and b return, either nil.
func bothCalendars(a, b func(ctx context.Context) ([]string, error)) func(ctx context.Context) ([]string, error) {
	switch {
	case a == nil:
		return b
	case b == nil:
		return a
	}
	return func(ctx context.Context) ([]string, error) {
		x, err := a(ctx)
		if err != nil {
			return nil, err
		}
		y, err := b(ctx)
		if err != nil {
			return nil, err
		}
		return append(x, y...), nil
	}
}
