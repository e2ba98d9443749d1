package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/meetingbot/meetingbot"
)

// slackSubColumns are a subscription's columns and its muted series,
// sorted, read in the same statement so that they agree.
const slackSubColumns = `s.id, s.kind, s.calendar, s.destination, s.offsets, s.created_by, s.created_at,
	s.changes_at, s.daily, s.weekly, s.zone, s.on_calendar, s.rules,
	coalesce((SELECT array_agg(m.series ORDER BY m.series) FROM slack_muted_series m WHERE m.subscription = s.id), '{}')`

// SlackSubscriptions returns every subscription made from Slack, with its
// muted series, ordered by ID. The scheduler calls it on every sweep: what
// it returns is the current set, additions and removals by any replica
// included.
func (s *Store) SlackSubscriptions(ctx context.Context) ([]meetingbot.SlackSubscription, error) {
	return s.slackSubs(ctx, `SELECT `+slackSubColumns+` FROM slack_subscriptions s ORDER BY s.id`)
}

// SlackSubscriptionsTo returns the subscriptions made from Slack that post
// to destination (a user or channel ID), with their muted series, ordered
// by ID.
func (s *Store) SlackSubscriptionsTo(ctx context.Context, destination string) ([]meetingbot.SlackSubscription, error) {
	return s.slackSubs(ctx, `SELECT `+slackSubColumns+` FROM slack_subscriptions s WHERE s.destination = $1 ORDER BY s.id`, destination)
}

// SlackSubscription returns the subscription with id and whether it exists.
func (s *Store) SlackSubscription(ctx context.Context, id string) (meetingbot.SlackSubscription, bool, error) {
	subs, err := s.slackSubs(ctx, `SELECT `+slackSubColumns+` FROM slack_subscriptions s WHERE s.id = $1`, id)
	if err != nil || len(subs) == 0 {
		return meetingbot.SlackSubscription{}, false, err
	}
	return subs[0], true, nil
}

func (s *Store) slackSubs(ctx context.Context, query string, args ...any) ([]meetingbot.SlackSubscription, error) {
	ctx, cancel := s.op(ctx)
	defer cancel()
	rows, err := s.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: read slack subscriptions: %w", s.lost(err))
	}
	var subs []meetingbot.SlackSubscription
	var sub meetingbot.SlackSubscription
	var kind, rules string
	var offsets []int32
	var created time.Time
	var changes *time.Time
	_, err = pgx.ForEachRow(rows, []any{&sub.ID, &kind, &sub.CalendarID, &sub.Destination, &offsets, &sub.CreatedBy, &created,
		&changes, &sub.Daily, &sub.Weekly, &sub.Zone, &sub.OnCalendar, &rules, &sub.Muted}, func() error {
		got := sub
		got.Kind, got.CreatedAt, got.Offsets = meetingbot.SlackKind(kind), created.UTC(), durations(offsets)
		var err error
		if got.Rules, err = meetingbot.ParseRulesJSON(rules); err != nil {
			return fmt.Errorf("slack subscription %s: %w", got.ID, err)
		}
		got.ChangesSince = time.Time{}
		if changes != nil {
			got.ChangesSince = changes.UTC()
		}
		if len(got.Muted) == 0 {
			got.Muted = nil
		}
		if len(got.Offsets) == 0 {
			got.Offsets = nil // the calendar's reminders alone
		}
		subs = append(subs, got)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: read slack subscriptions: %w", s.lost(err))
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
	ctx, cancel := s.op(ctx)
	defer cancel()
	tag, err := s.exec(ctx, `INSERT INTO slack_subscriptions (id, kind, calendar, destination, offsets, created_by, created_at,
			changes_at, daily, weekly, zone, on_calendar, rules)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) ON CONFLICT DO NOTHING`,
		sub.ID, string(sub.Kind), sub.CalendarID, sub.Destination, seconds(sub.Offsets), sub.CreatedBy, ts(sub.CreatedAt),
		ts(sub.ChangesSince), sub.Daily, sub.Weekly, sub.Zone, sub.OnCalendar, sub.Rules.JSON())
	if err != nil {
		return meetingbot.SlackSubscription{}, false, fmt.Errorf("postgres: add slack subscription %s: %w", sub.ID, err)
	}
	stored, ok, err := s.SlackSubscription(ctx, sub.ID)
	if err == nil && !ok {
		// The calendar and destination are taken under another ID.
		err = fmt.Errorf("postgres: add slack subscription %s: %w: %s to %s is stored under another ID", sub.ID, meetingbot.ErrInvalid, sub.CalendarID, sub.Destination)
	}
	if err != nil {
		return meetingbot.SlackSubscription{}, false, err
	}
	return stored, tag.RowsAffected() == 1, nil
}

// SetSlackSubscriptionOffsets replaces the offsets of the subscription with
// id and reports whether it exists.
func (s *Store) SetSlackSubscriptionOffsets(ctx context.Context, id string, offsets []time.Duration) (bool, error) {
	if err := checkOffsets(offsets); err != nil {
		return false, fmt.Errorf("postgres: slack subscription %s: %w", id, err)
	}
	return s.changed(ctx, "set offsets of slack subscription "+id, `UPDATE slack_subscriptions SET offsets = $1 WHERE id = $2`, seconds(offsets), id)
}

// SetSlackSubscriptionFollowing replaces the offsets of the channel
// subscription with id and what it follows (its changes, its agendas),
// and reports whether it exists. Offsets may be none when it follows
// something; meetingbot.ErrInvalid otherwise.
func (s *Store) SetSlackSubscriptionFollowing(ctx context.Context, id string, offsets []time.Duration, f meetingbot.Following) (bool, error) {
	if err := checkReminding(offsets, f.Any()); err != nil {
		return false, fmt.Errorf("postgres: slack subscription %s: %w", id, err)
	}
	return s.changed(ctx, "set slack subscription "+id, `UPDATE slack_subscriptions SET offsets = $1, changes_at = $2, daily = $3, weekly = $4, zone = $5
		WHERE id = $6 AND kind = 'channel'`, seconds(offsets), ts(f.ChangesSince), f.Daily, f.Weekly, f.Zone, id)
}

// SetSlackSubscriptionReminding replaces how the subscription with id
// reminds: its offsets, whether at its calendar's own reminders too, and
// its rules. It reports whether the subscription exists.
func (s *Store) SetSlackSubscriptionReminding(ctx context.Context, id string, offsets []time.Duration, onCalendar bool, rules meetingbot.Rules) (bool, error) {
	if err := checkReminding(offsets, onCalendar); err != nil {
		return false, fmt.Errorf("postgres: slack subscription %s: %w", id, err)
	}
	return s.changed(ctx, "set reminding of slack subscription "+id, `UPDATE slack_subscriptions SET offsets = $1, on_calendar = $2, rules = $3 WHERE id = $4`,
		seconds(offsets), onCalendar, rules.JSON(), id)
}

// RemoveSlackSubscription deletes the subscription with id and reports
// whether it existed. Its muted series are kept for when it comes back.
func (s *Store) RemoveSlackSubscription(ctx context.Context, id string) (bool, error) {
	return s.changed(ctx, "remove slack subscription "+id, `DELETE FROM slack_subscriptions WHERE id = $1`, id)
}

// MuteSeries records m and reports whether it was new; muting a muted
// series again changes nothing. MutedAt defaults to now.
func (s *Store) MuteSeries(ctx context.Context, m meetingbot.MutedSeries) (bool, error) {
	if m.Subscription == "" || m.Series == "" {
		return false, fmt.Errorf("postgres: mute series: %w: subscription and series are required", meetingbot.ErrInvalid)
	}
	if m.MutedAt.IsZero() {
		m.MutedAt = time.Now()
	}
	return s.changed(ctx, "mute series "+m.Series+" of "+m.Subscription, `INSERT INTO slack_muted_series (subscription, series, title, muted_by, muted_at)
		VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`, m.Subscription, m.Series, m.Title, m.MutedBy, ts(m.MutedAt))
}

// UnmuteSeries forgets a muted series and reports whether it was muted.
func (s *Store) UnmuteSeries(ctx context.Context, subscription, series string) (bool, error) {
	return s.changed(ctx, "unmute series "+series+" of "+subscription, `DELETE FROM slack_muted_series WHERE subscription = $1 AND series = $2`, subscription, series)
}

// changed runs a statement and reports whether it changed a row.
func (s *Store) changed(ctx context.Context, what, q string, args ...any) (bool, error) {
	ctx, cancel := s.op(ctx)
	defer cancel()
	tag, err := s.exec(ctx, q, args...)
	if err != nil {
		return false, fmt.Errorf("postgres: %s: %w", what, err)
	}
	return tag.RowsAffected() == 1, nil
}

// MutedSeriesOf returns the series muted for subscription, oldest first.
func (s *Store) MutedSeriesOf(ctx context.Context, subscription string) ([]meetingbot.MutedSeries, error) {
	ctx, cancel := s.op(ctx)
	defer cancel()
	rows, err := s.pool.Query(ctx, `SELECT subscription, series, title, muted_by, muted_at FROM slack_muted_series
		WHERE subscription = $1 ORDER BY muted_at, series`, subscription)
	if err != nil {
		return nil, fmt.Errorf("postgres: read muted series: %w", s.lost(err))
	}
	var out []meetingbot.MutedSeries
	var m meetingbot.MutedSeries
	_, err = pgx.ForEachRow(rows, []any{&m.Subscription, &m.Series, &m.Title, &m.MutedBy, &m.MutedAt}, func() error {
		got := m
		got.MutedAt = got.MutedAt.UTC()
		out = append(out, got)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: read muted series: %w", s.lost(err))
	}
	return out, nil
}

// SlackSettingsOf returns the settings of a Slack user and whether any
// were stored; a user without settings gets the zero value with UserID set.
func (s *Store) SlackSettingsOf(ctx context.Context, userID string) (meetingbot.SlackSettings, bool, error) {
	ctx, cancel := s.op(ctx)
	defer cancel()
	set := meetingbot.SlackSettings{UserID: userID}
	var offsets []int32
	var updated pgtype.Timestamptz
	var rules string
	err := s.pool.QueryRow(ctx, `SELECT offsets, agenda, tz, updated_at, on_calendar, rules FROM slack_settings WHERE user_id = $1`, userID).
		Scan(&offsets, &set.Agenda, &set.TZ, &updated, &set.OnCalendar, &rules)
	if errors.Is(err, pgx.ErrNoRows) {
		return set, false, nil
	}
	if err != nil {
		return set, false, fmt.Errorf("postgres: read settings of %s: %w", userID, s.lost(err))
	}
	set.UpdatedAt = instant(updated)
	if set.Rules, err = meetingbot.ParseRulesJSON(rules); err != nil {
		return set, false, fmt.Errorf("postgres: settings of %s: %w", userID, err)
	}
	if len(offsets) > 0 {
		set.Offsets = durations(offsets)
	}
	return set, true, nil
}

// SlackAgendas returns the settings of every Slack user with a daily
// agenda (Agenda not ""), by user ID.
func (s *Store) SlackAgendas(ctx context.Context) ([]meetingbot.SlackSettings, error) {
	ctx, cancel := s.op(ctx)
	defer cancel()
	rows, err := s.pool.Query(ctx, `SELECT user_id, offsets, agenda, tz, updated_at FROM slack_settings WHERE agenda <> '' ORDER BY user_id`)
	if err != nil {
		return nil, fmt.Errorf("postgres: read agendas: %w", s.lost(err))
	}
	defer rows.Close()
	var out []meetingbot.SlackSettings
	for rows.Next() {
		var set meetingbot.SlackSettings
		var offsets []int32
		var updated pgtype.Timestamptz
		if err := rows.Scan(&set.UserID, &offsets, &set.Agenda, &set.TZ, &updated); err != nil {
			return nil, fmt.Errorf("postgres: read agendas: %w", s.lost(err))
		}
		set.UpdatedAt = instant(updated)
		if offsets != nil {
			set.Offsets = durations(offsets)
		}
		out = append(out, set)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("postgres: read agendas: %w", s.lost(err))
	}
	return out, nil
}

// PutSlackSettings stores set, replacing the user's settings. UpdatedAt
// defaults to now.
func (s *Store) PutSlackSettings(ctx context.Context, set meetingbot.SlackSettings) error {
	if set.UserID == "" {
		return fmt.Errorf("postgres: put settings: %w: no user ID", meetingbot.ErrInvalid)
	}
	var offsets []int32
	if len(set.Offsets) > 0 {
		if err := checkOffsets(set.Offsets); err != nil {
			return fmt.Errorf("postgres: settings of %s: %w", set.UserID, err)
		}
		offsets = seconds(set.Offsets)
	}
	if set.UpdatedAt.IsZero() {
		set.UpdatedAt = time.Now()
	}
	ctx, cancel := s.op(ctx)
	defer cancel()
	_, err := s.exec(ctx, `INSERT INTO slack_settings (user_id, offsets, agenda, tz, updated_at, on_calendar, rules) VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (user_id) DO UPDATE SET offsets = excluded.offsets, agenda = excluded.agenda, tz = excluded.tz, updated_at = excluded.updated_at,
		on_calendar = excluded.on_calendar, rules = excluded.rules`,
		set.UserID, offsets, set.Agenda, set.TZ, ts(set.UpdatedAt), set.OnCalendar, set.Rules.JSON())
	if err != nil {
		return fmt.Errorf("postgres: put settings of %s: %w", set.UserID, err)
	}
	return nil
}

func checkSlackSub(sub meetingbot.SlackSubscription) error {
	switch {
	case sub.ID == "" || sub.CalendarID == "" || sub.Destination == "":
		return fmt.Errorf("postgres: add slack subscription %q: %w: ID, calendar and destination are required", sub.ID, meetingbot.ErrInvalid)
	case sub.Kind != meetingbot.SlackPersonal && sub.Kind != meetingbot.SlackChannel:
		return fmt.Errorf("postgres: add slack subscription %s: %w: kind %q", sub.ID, meetingbot.ErrInvalid, sub.Kind)
	}
	if sub.Kind == meetingbot.SlackPersonal && sub.Following.Any() {
		return fmt.Errorf("postgres: add slack subscription %s: %w: a personal subscription follows nothing", sub.ID, meetingbot.ErrInvalid)
	}
	if err := checkReminding(sub.Offsets, sub.OnCalendar || sub.Following.Any()); err != nil {
		return fmt.Errorf("postgres: add slack subscription %s: %w", sub.ID, err)
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

// maxOffset keeps an offset in an integer column of seconds.
const maxOffset = 1<<31 - 1

func checkOffsets(offsets []time.Duration) error {
	if len(offsets) == 0 {
		return fmt.Errorf("%w: no offsets", meetingbot.ErrInvalid)
	}
	for _, o := range offsets {
		if o < 0 || o%time.Second != 0 || o/time.Second > maxOffset {
			return fmt.Errorf("%w: offset %v is not a non-negative whole number of seconds", meetingbot.ErrInvalid, o)
		}
	}
	return nil
}

// seconds writes offsets as ascending whole seconds.
func seconds(offsets []time.Duration) []int32 {
	out := make([]int32, len(offsets))
	for i, o := range offsets {
		out[i] = int32(o / time.Second)
	}
	slices.Sort(out)
	return out
}

func durations(secs []int32) []time.Duration {
	out := make([]time.Duration, len(secs))
	for i, v := range secs {
		out[i] = time.Duration(v) * time.Second
	}
	return out
}
