package selfservice

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"
)

// person is what the bot needs to know about a Slack user.
type person struct {
	ID    string
	Email string // lower case; "" when Slack did not say (no users:read.email)
	TZ    string // IANA zone
	Name  string
	// Admin is a workspace admin or owner.
	Admin bool
}

// people reads users.info and keeps each answer for ttl, so a burst of
// clicks costs one call.
type people struct {
	api *slack.Client
	now func() time.Time
	ttl time.Duration

	mu    sync.Mutex
	cache map[string]cachedPerson
}

type cachedPerson struct {
	p   person
	got time.Time
}

// get returns the person with Slack user ID id.
func (ps *people) get(ctx context.Context, id string) (person, error) {
	now := ps.now()
	ps.mu.Lock()
	c, ok := ps.cache[id]
	ps.mu.Unlock()
	if ok && now.Sub(c.got) < ps.ttl && now.Sub(c.got) >= 0 {
		return c.p, nil
	}
	u, err := ps.api.GetUserInfoContext(ctx, id)
	if err != nil {
		return person{}, fmt.Errorf("users.info %s: %w", id, err)
	}
	p := person{
		ID: u.ID, Email: strings.ToLower(strings.TrimSpace(u.Profile.Email)), TZ: u.TZ,
		Name:  u.Name,
		Admin: u.IsAdmin || u.IsOwner || u.IsPrimaryOwner,
	}
	ps.mu.Lock()
	ps.cache[id] = cachedPerson{p: p, got: now}
	ps.mu.Unlock()
	return p, nil
}

// lookupFailed is the answer when users.info failed.
func lookupFailed(err error) string {
	return fmt.Sprintf("I couldn't look you up in Slack just now (%s). Nothing changed; try again in a minute.", escape(err.Error()))
}

// noEmail is the answer for a person whose email the bot cannot see.
const noEmail = "I can't see an email address in your Slack profile, so I don't know which calendar is yours. " +
	"If your profile has one, the bot needs the `users:read.email` scope: ask whoever installed it to add the scope and reinstall. Nothing changed."

// isAdmin reports whether p may post any calendar in a channel: a
// workspace admin or owner, or someone listed in SLACK_ADMINS by user ID or
// email.
func (a *App) isAdmin(p person) bool {
	return p.Admin || a.admins[strings.ToLower(p.ID)] || (p.Email != "" && a.admins[p.Email])
}

// mayPost says whether p may post calendarID's reminders in a channel, and
// if not, why, in a sentence for p.
func (a *App) mayPost(p person, calendarID string) (bool, string) {
	if a.isAdmin(p) || (p.Email != "" && strings.EqualFold(p.Email, calendarID)) {
		return true, ""
	}
	return false, fmt.Sprintf("Only the calendar's owner, workspace admins and owners, and the people in SLACK_ADMINS may post a calendar in a channel, and %s is not yours: "+
		"otherwise anyone could show someone else's meeting titles here. Ask one of them, or post your own calendar with `%s subscribe %s`. Nothing changed.",
		escape(calendarID), a.command, escape(cmp.Or(p.Email, "you@example.com")))
}

// mayChange says whether p may unsubscribe or mute sub, a channel
// subscription made from Slack: its creator, the calendar's owner and
// those who may post any calendar.
func (a *App) mayChange(p person, createdBy, calendarID string) (bool, string) {
	if p.ID == createdBy {
		return true, ""
	}
	if ok, _ := a.mayPost(p, calendarID); ok {
		return true, ""
	}
	return false, fmt.Sprintf("Only <@%s>, who set it up, the calendar's owner, workspace admins and owners, and the people in SLACK_ADMINS may change how %s is posted here. Nothing changed.", createdBy, escape(calendarID))
}

// permanent reports whether err says the calendar cannot be read until
// someone acts (see Calendars).
func permanent(err error) bool {
	var p interface{ Permanent() bool }
	return errors.As(err, &p) && p.Permanent()
}

// unreadable explains why calendarID cannot be read and what to do, for
// the person who asked; retry says how to try again ("`/meetingbot on`").
func (a *App) unreadable(calendarID, retry string, err error) string {
	if errors.Is(err, errTooSoon) {
		return fmt.Sprintf("I read %s moments ago, more than once; try %s again in a minute. Nothing changed.", escape(calendarID), retry)
	}
	if !permanent(err) {
		return fmt.Sprintf("I couldn't reach Google Calendar just now to read %s (%s). Nothing changed; try again in a minute.", escape(calendarID), escape(short(err)))
	}
	var fix string
	switch {
	case a.access.Impersonate:
		fix = fmt.Sprintf("I read calendars by domain-wide delegation, and it is not granted for %s. A Google Workspace admin must grant it: Admin console > Security > API controls > Domain-wide delegation, client ID `%s`, scope `https://www.googleapis.com/auth/calendar.readonly`. Then try %s again.",
			escape(calendarID), escape(cmp.Or(a.access.ClientID, "(the service account's client_id)")), retry)
	case a.access.ServiceAccount != "":
		fix = fmt.Sprintf("Share it with me: in Google Calendar open Settings > *%s* > Share with specific people, add `%s` with *See all event details*, then try %s again.",
			escape(calendarID), escape(a.access.ServiceAccount), retry)
	default:
		fix = fmt.Sprintf("Share it, with *See all event details*, with the Google account the bot signs in as, then try %s again.", retry)
	}
	switch {
	case a.googleEnabled() && a.access.ServiceAccount == "" && !a.access.Impersonate:
		fix = fmt.Sprintf("I read only the calendars of people who connected their own Google account: if it is yours, `%s connect`, then try %s again.", a.command, retry)
	case a.googleEnabled():
		fix = fmt.Sprintf("If it is your own calendar, connect your Google account and I read it with your own access: `%s connect`. Or: %s", a.command, fix)
	}
	return fmt.Sprintf("I can't read the calendar %s. %s Nothing changed.\n_Google said: %s_", escape(calendarID), fix, escape(short(err)))
}

// short cuts an error to what fits in a message.
func short(err error) string {
	s := err.Error()
	if r := []rune(s); len(r) > 300 {
		s = string(r[:300]) + "…"
	}
	return s
}
