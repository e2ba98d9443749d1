package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/meetingbot/meetingbot"
)

// ErrInvalid is returned by the self-service writes for a value the
// database must not hold (an empty ID, an unknown kind, no offsets). It is
// meetingbot.ErrInvalid, which the PostgreSQL store returns too.
var ErrInvalid = meetingbot.ErrInvalid

const slackSubColumns = `id, kind, calendar, destination, offsets, created_by, created_ms, changes_ms, daily, weekly, zone, on_calendar, rules`

// SlackSubscriptions returns every subscription made from Slack, with its
// muted series, ordered by ID. The scheduler calls it on every sweep: what
// it returns is the current set, additions and removals included.
func (s *Store) SlackSubscriptions(ctx context.Context) ([]meetingbot.SlackSubscription, error) {
	return s.slackSubs(ctx, `SELECT `+slackSubColumns+` FROM slack_subscriptions ORDER BY id`)
}

// SlackSubscriptionsTo returns the subscriptions made from Slack that post
// to destination (a user or channel ID), with their muted series, ordered
// by ID.
func (s *Store) SlackSubscriptionsTo(ctx context.Context, destination string) ([]meetingbot.SlackSubscription, error) {
	return s.slackSubs(ctx, `SELECT `+slackSubColumns+` FROM slack_subscriptions WHERE destination = ? ORDER BY id`, destination)
}

// meetingbot.SlackSubscription returns the subscription with id and whether it exists.
func (s *Store) SlackSubscription(ctx context.Context, id string) (meetingbot.SlackSubscription, bool, error) {
	subs, err := s.slackSubs(ctx, `SELECT `+slackSubColumns+` FROM slack_subscriptions WHERE id = ?`, id)
	if err != nil || len(subs) == 0 {
		return meetingbot.SlackSubscription{}, false, err
	}
	return subs[0], true, nil
}

func (s *Store) slackSubs(ctx context.Context, query string, args ...any) ([]meetingbot.SlackSubscription, error) {
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("storage: read slack subscriptions: %w", err)
	}
	defer tx.Rollback()
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("storage: read slack subscriptions: %w", err)
	}
	var subs []meetingbot.SlackSubscription
	for rows.Next() {
		var sub meetingbot.SlackSubscription
		var kind, offsets, rules string
		var created, changes int64
		if err := rows.Scan(&sub.ID, &kind, &sub.CalendarID, &sub.Destination, &offsets, &sub.CreatedBy, &created,
			&changes, &sub.Daily, &sub.Weekly, &sub.Zone, &sub.OnCalendar, &rules); err != nil {
			rows.Close()
			return nil, fmt.Errorf("storage: read slack subscriptions: %w", err)
		}
		sub.Kind, sub.CreatedAt, sub.ChangesSince = meetingbot.SlackKind(kind), fromMS(created), fromMS(changes)
		if sub.Rules, err = meetingbot.ParseRulesJSON(rules); err != nil {
			rows.Close()
			return nil, fmt.Errorf("storage: slack subscription %s: %w", sub.ID, err)
		}
		if sub.Offsets, err = parseOffsets(offsets); err != nil {
			rows.Close()
			return nil, fmt.Errorf("storage: slack subscription %s: %w", sub.ID, err)
		}
		subs = append(subs, sub)
	}
	if err := rows.Close(); err != nil {
		return nil, fmt.Errorf("storage: read slack subscriptions: %w", err)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("storage: read slack subscriptions: %w", err)
	}
	if len(subs) == 0 {
		return nil, nil
	}
	only := "" // all subscriptions' mutes
	if len(subs) == 1 {
		only = subs[0].ID
	}
	muted, err := readMuted(ctx, tx, only)
	if err != nil {
		return nil, err
	}
	for i := range subs {
		for _, m := range muted {
			if m.Subscription == subs[i].ID {
				subs[i].Muted = append(subs[i].Muted, m.Series)
			}
		}
		slices.Sort(subs[i].Muted)
	}
	return subs, nil
}

// AddSlackSubscription stores sub unless a subscription with its ID exists.
// It returns what is stored under the ID afterwards and whether sub was
// added; an existing subscription is left as it was (its offsets too).
// CreatedAt defaults to now.
func (s *Store) AddSlackSubscription(ctx context.Context, sub meetingbot.SlackSubscription) (meetingbot.SlackSubscription, bool, error) {
	if err := checkSlackSub(sub); err != nil {
		return meetingbot.SlackSubscription{}, false, err
	}
	if sub.CreatedAt.IsZero() {
		sub.CreatedAt = time.Now()
	}
	res, err := s.db.ExecContext(ctx, `INSERT INTO slack_subscriptions (`+slackSubColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`,
		sub.ID, string(sub.Kind), sub.CalendarID, sub.Destination, formatOffsets(sub.Offsets), sub.CreatedBy, ms(sub.CreatedAt),
		ms(sub.ChangesSince), sub.Daily, sub.Weekly, sub.Zone, sub.OnCalendar, sub.Rules.JSON())
	if err != nil {
		return meetingbot.SlackSubscription{}, false, fmt.Errorf("storage: add slack subscription %s: %w", sub.ID, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return meetingbot.SlackSubscription{}, false, fmt.Errorf("storage: add slack subscription %s: %w", sub.ID, err)
	}
	stored, ok, err := s.SlackSubscription(ctx, sub.ID)
	if err == nil && !ok {
		// The calendar and destination are taken under another ID.
		err = fmt.Errorf("storage: add slack subscription %s: %w: %s to %s is stored under another ID", sub.ID, ErrInvalid, sub.CalendarID, sub.Destination)
	}
	if err != nil {
		return meetingbot.SlackSubscription{}, false, err
	}
	return stored, n == 1, nil
}

// SetSlackSubscriptionOffsets replaces the offsets of the subscription with
// id and reports whether it exists.
func (s *Store) SetSlackSubscriptionOffsets(ctx context.Context, id string, offsets []time.Duration) (bool, error) {
	if err := checkOffsets(offsets); err != nil {
		return false, fmt.Errorf("storage: slack subscription %s: %w", id, err)
	}
	res, err := s.db.ExecContext(ctx, `UPDATE slack_subscriptions SET offsets = ? WHERE id = ?`, formatOffsets(offsets), id)
	if err != nil {
		return false, fmt.Errorf("storage: set offsets of slack subscription %s: %w", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("storage: set offsets of slack subscription %s: %w", id, err)
	}
	return n == 1, nil
}

// SetSlackSubscriptionFollowing replaces the offsets of the channel
// subscription with id and what it follows (its changes, its agendas),
// and reports whether it exists. Offsets may be none when it follows
// something; ErrInvalid otherwise.
func (s *Store) SetSlackSubscriptionFollowing(ctx context.Context, id string, offsets []time.Duration, f meetingbot.Following) (bool, error) {
	if err := checkReminding(offsets, f.Any()); err != nil {
		return false, fmt.Errorf("storage: slack subscription %s: %w", id, err)
	}
	res, err := s.db.ExecContext(ctx, `UPDATE slack_subscriptions SET offsets = ?, changes_ms = ?, daily = ?, weekly = ?, zone = ?
		WHERE id = ? AND kind = 'channel'`, formatOffsets(offsets), ms(f.ChangesSince), f.Daily, f.Weekly, f.Zone, id)
	if err != nil {
		return false, fmt.Errorf("storage: set slack subscription %s: %w", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("storage: set slack subscription %s: %w", id, err)
	}
	return n == 1, nil
}

// SetSlackSubscriptionReminding replaces how the subscription with id
// reminds: its offsets, whether at its calendar's own reminders too, and
// its rules. It reports whether the subscription exists.
func (s *Store) SetSlackSubscriptionReminding(ctx context.Context, id string, offsets []time.Duration, onCalendar bool, rules meetingbot.Rules) (bool, error) {
	if err := checkReminding(offsets, onCalendar); err != nil {
		return false, fmt.Errorf("storage: slack subscription %s: %w", id, err)
	}
	res, err := s.db.ExecContext(ctx, `UPDATE slack_subscriptions SET offsets = ?, on_calendar = ?, rules = ? WHERE id = ?`,
		formatOffsets(offsets), onCalendar, rules.JSON(), id)
	if err != nil {
		return false, fmt.Errorf("storage: set reminding of slack subscription %s: %w", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("storage: set reminding of slack subscription %s: %w", id, err)
	}
	return n == 1, nil
}

// RemoveSlackSubscription deletes the subscription with id and reports
// whether it existed. Its muted series are kept for when it comes back.
func (s *Store) RemoveSlackSubscription(ctx context.Context, id string) (bool, error) {
	res, err := s.db.ExecContext(ctx, `DELETE FROM slack_subscriptions WHERE id = ?`, id)
	if err != nil {
		return false, fmt.Errorf("storage: remove slack subscription %s: %w", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("storage: remove slack subscription %s: %w", id, err)
	}
	return n == 1, nil
}

// MuteSeries records m and reports whether it was new; muting a muted
// series again changes nothing. MutedAt defaults to now.
func (s *Store) MuteSeries(ctx context.Context, m meetingbot.MutedSeries) (bool, error) {
	if m.Subscription == "" || m.Series == "" {
		return false, fmt.Errorf("storage: mute series: %w: subscription and series are required", ErrInvalid)
	}
	if m.MutedAt.IsZero() {
		m.MutedAt = time.Now()
	}
	res, err := s.db.ExecContext(ctx, `INSERT INTO slack_muted_series (subscription, series, title, muted_by, muted_ms)
		VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`, m.Subscription, m.Series, m.Title, m.MutedBy, ms(m.MutedAt))
	if err != nil {
		return false, fmt.Errorf("storage: mute series %s of %s: %w", m.Series, m.Subscription, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("storage: mute series %s of %s: %w", m.Series, m.Subscription, err)
	}
	return n == 1, nil
}

// UnmuteSeries forgets a muted series and reports whether it was muted.
func (s *Store) UnmuteSeries(ctx context.Context, subscription, series string) (bool, error) {
	res, err := s.db.ExecContext(ctx, `DELETE FROM slack_muted_series WHERE subscription = ? AND series = ?`, subscription, series)
	if err != nil {
		return false, fmt.Errorf("storage: unmute series %s of %s: %w", series, subscription, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("storage: unmute series %s of %s: %w", series, subscription, err)
	}
	return n == 1, nil
}

// MutedSeriesOf returns the series muted for subscription, oldest first.
func (s *Store) MutedSeriesOf(ctx context.Context, subscription string) ([]meetingbot.MutedSeries, error) {
	return readMuted(ctx, s.db, subscription)
}

type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// readMuted reads the muted series of one subscription, or of all when
// subscription is "".
func readMuted(ctx context.Context, q querier, subscription string) ([]meetingbot.MutedSeries, error) {
	query := `SELECT subscription, series, title, muted_by, muted_ms FROM slack_muted_series`
	var args []any
	if subscription != "" {
		query += ` WHERE subscription = ?`
		args = append(args, subscription)
	}
	rows, err := q.QueryContext(ctx, query+` ORDER BY muted_ms, series`, args...)
	if err != nil {
		return nil, fmt.Errorf("storage: read muted series: %w", err)
	}
	defer rows.Close()
	var out []meetingbot.MutedSeries
	for rows.Next() {
		var m meetingbot.MutedSeries
		var at int64
		if err := rows.Scan(&m.Subscription, &m.Series, &m.Title, &m.MutedBy, &at); err != nil {
			return nil, fmt.Errorf("storage: read muted series: %w", err)
		}
		m.MutedAt = fromMS(at)
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("storage: read muted series: %w", err)
	}
	return out, nil
}

// SlackSettingsOf returns the settings of a Slack user and whether any
// were stored; a user without settings gets the zero value with UserID set.
func (s *Store) SlackSettingsOf(ctx context.Context, userID string) (meetingbot.SlackSettings, bool, error) {
	set := meetingbot.SlackSettings{UserID: userID}
	var offsets, rules string
	var updated int64
	err := s.db.QueryRowContext(ctx, `SELECT offsets, agenda, tz, updated_ms, on_calendar, rules FROM slack_settings WHERE user_id = ?`, userID).
		Scan(&offsets, &set.Agenda, &set.TZ, &updated, &set.OnCalendar, &rules)
	if errors.Is(err, sql.ErrNoRows) {
		return set, false, nil
	}
	if err != nil {
		return set, false, fmt.Errorf("storage: read settings of %s: %w", userID, err)
	}
	set.UpdatedAt = fromMS(updated)
	if set.Rules, err = meetingbot.ParseRulesJSON(rules); err != nil {
		return set, false, fmt.Errorf("storage: settings of %s: %w", userID, err)
	}
	if offsets != "" {
		if set.Offsets, err = parseOffsets(offsets); err != nil {
			return set, false, fmt.Errorf("storage: settings of %s: %w", userID, err)
		}
	}
	return set, true, nil
}

// SlackAgendas returns the settings of every Slack user with a daily
// agenda (Agenda not ""), by user ID.
func (s *Store) SlackAgendas(ctx context.Context) ([]meetingbot.SlackSettings, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT user_id, offsets, agenda, tz, updated_ms FROM slack_settings WHERE agenda != '' ORDER BY user_id`)
	if err != nil {
		return nil, fmt.Errorf("storage: read agendas: %w", err)
	}
	defer rows.Close()
	var out []meetingbot.SlackSettings
	for rows.Next() {
		var set meetingbot.SlackSettings
		var offsets string
		var updated int64
		if err := rows.Scan(&set.UserID, &offsets, &set.Agenda, &set.TZ, &updated); err != nil {
			return nil, fmt.Errorf("storage: read agendas: %w", err)
		}
		set.UpdatedAt = fromMS(updated)
		if offsets != "" {
			if set.Offsets, err = parseOffsets(offsets); err != nil {
				return nil, fmt.Errorf("storage: settings of %s: %w", set.UserID, err)
			}
		}
		out = append(out, set)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("storage: read agendas: %w", err)
	}
	return out, nil
}

// PutSlackSettings stores set, replacing the user's settings. UpdatedAt
// defaults to now.
func (s *Store) PutSlackSettings(ctx context.Context, set meetingbot.SlackSettings) error {
	if set.UserID == "" {
		return fmt.Errorf("storage: put settings: %w: no user ID", ErrInvalid)
	}
	offsets := ""
	if len(set.Offsets) > 0 {
		if err := checkOffsets(set.Offsets); err != nil {
			return fmt.Errorf("storage: settings of %s: %w", set.UserID, err)
		}
		offsets = formatOffsets(set.Offsets)
	}
	if set.UpdatedAt.IsZero() {
		set.UpdatedAt = time.Now()
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO slack_settings (user_id, offsets, agenda, tz, updated_ms, on_calendar, rules) VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (user_id) DO UPDATE SET offsets = excluded.offsets, agenda = excluded.agenda, tz = excluded.tz, updated_ms = excluded.updated_ms,
		on_calendar = excluded.on_calendar, rules = excluded.rules`,
		set.UserID, offsets, set.Agenda, set.TZ, ms(set.UpdatedAt), set.OnCalendar, set.Rules.JSON())
	if err != nil {
		return fmt.Errorf("storage: put settings of %s: %w", set.UserID, err)
	}
	return nil
}

func checkSlackSub(sub meetingbot.SlackSubscription) error {
	switch {
	case sub.ID == "" || sub.CalendarID == "" || sub.Destination == "":
		return fmt.Errorf("storage: add slack subscription %q: %w: ID, calendar and destination are required", sub.ID, ErrInvalid)
	case sub.Kind != meetingbot.SlackPersonal && sub.Kind != meetingbot.SlackChannel:
		return fmt.Errorf("storage: add slack subscription %s: %w: kind %q", sub.ID, ErrInvalid, sub.Kind)
	}
	if sub.Kind == meetingbot.SlackPersonal && sub.Following.Any() {
		return fmt.Errorf("storage: add slack subscription %s: %w: a personal subscription follows nothing", sub.ID, ErrInvalid)
	}
	if err := checkReminding(sub.Offsets, sub.OnCalendar || sub.Following.Any()); err != nil {
		return fmt.Errorf("storage: add slack subscription %s: %w", sub.ID, err)
	}
	return nil
}

// checkReminding checks a subscription's offsets: some, or none when
// noneOK (it reminds at its calendar's own reminders, or follows
// something).
func checkReminding(offsets []time.Duration, noneOK bool) error {
	if len(offsets) == 0 && noneOK {
		return nil
	}
	return checkOffsets(offsets)
}

func checkOffsets(offsets []time.Duration) error {
	if len(offsets) == 0 {
		return fmt.Errorf("%w: no offsets", ErrInvalid)
	}
	for _, o := range offsets {
		if o < 0 || o%time.Second != 0 {
			return fmt.Errorf("%w: offset %v is not a non-negative whole number of seconds", ErrInvalid, o)
		}
	}
	return nil
}

// formatOffsets writes offsets as ascending whole seconds: "60,600".
func formatOffsets(offsets []time.Duration) string {
	sorted := slices.Clone(offsets)
	slices.Sort(sorted)
	parts := make([]string, len(sorted))
	for i, o := range sorted {
		parts[i] = strconv.FormatInt(int64(o/time.Second), 10)
	}
	return strings.Join(parts, ",")
}

func parseOffsets(v string) ([]time.Duration, error) {
	if v == "" {
		return nil, nil // the calendar's reminders alone, or a channel subscription that only follows
	}
	var out []time.Duration
	for part := range strings.SplitSeq(v, ",") {
		n, err := strconv.ParseInt(part, 10, 64)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("stored offsets %q are not whole seconds", v)
		}
		out = append(out, time.Duration(n)*time.Second)
	}
	return out, nil
}
