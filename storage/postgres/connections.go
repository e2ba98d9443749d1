package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/meetingbot/meetingbot"
)

// The accounts people connect (migration 009), as package storage keeps
// them: see its PutConnection and the rest for what each promises.

const connectionColumns = `provider, user_id, account, scopes, token, state, reason, created_at, updated_at`

// PutConnection stores c as userID's connection to c.Provider, replacing
// the one they had, and drops any other person's connection of the same
// account. Its error matches meetingbot.ErrInvalid for a connection Check
// refuses.
func (s *Store) PutConnection(ctx context.Context, c meetingbot.Connection) error {
	if err := c.Check(); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	ctx, cancel := s.op(ctx)
	defer cancel()
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM connections WHERE provider = $1 AND account = $2 AND user_id <> $3`,
			string(c.Provider), c.Account, c.UserID); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO connections (`+connectionColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
			ON CONFLICT (provider, user_id) DO UPDATE SET account = excluded.account, scopes = excluded.scopes, token = excluded.token,
				state = excluded.state, reason = excluded.reason, created_at = excluded.created_at, updated_at = excluded.updated_at`,
			string(c.Provider), c.UserID, c.Account, strings.Join(c.Scopes, " "), c.Token, string(c.State), c.Reason, milli(c.CreatedAt), milli(c.UpdatedAt))
		return err
	})
	if err != nil {
		return fmt.Errorf("postgres: put connection: %w", s.lost(err))
	}
	return nil
}

// milli is t as the connection tables keep it: UTC, to the millisecond,
// as SQLite keeps it.
func milli(t time.Time) time.Time { return t.UTC().Truncate(time.Millisecond) }

// Connection returns userID's connection to provider, and whether there is
// one.
func (s *Store) Connection(ctx context.Context, provider meetingbot.Provider, userID string) (meetingbot.Connection, bool, error) {
	cs, err := s.connections(ctx, `WHERE provider = $1 AND user_id = $2`, string(provider), userID)
	if err != nil || len(cs) == 0 {
		return meetingbot.Connection{}, false, err
	}
	return cs[0], true, nil
}

// ConnectionOf returns the connection of account to provider, and whether
// there is one.
func (s *Store) ConnectionOf(ctx context.Context, provider meetingbot.Provider, account string) (meetingbot.Connection, bool, error) {
	cs, err := s.connections(ctx, `WHERE provider = $1 AND account = $2`, string(provider), account)
	if err != nil || len(cs) == 0 {
		return meetingbot.Connection{}, false, err
	}
	return cs[0], true, nil
}

// Connections returns every connection, by provider and user.
func (s *Store) Connections(ctx context.Context) ([]meetingbot.Connection, error) {
	return s.connections(ctx, `ORDER BY provider, user_id`)
}

func (s *Store) connections(ctx context.Context, where string, args ...any) ([]meetingbot.Connection, error) {
	ctx, cancel := s.op(ctx)
	defer cancel()
	rows, err := s.pool.Query(ctx, `SELECT `+connectionColumns+` FROM connections `+where, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: read connections: %w", s.lost(err))
	}
	var out []meetingbot.Connection
	var c meetingbot.Connection
	var provider, scopes, state string
	_, err = pgx.ForEachRow(rows, []any{&provider, &c.UserID, &c.Account, &scopes, &c.Token, &state, &c.Reason, &c.CreatedAt, &c.UpdatedAt}, func() error {
		got := c
		got.Provider, got.State, got.Scopes = meetingbot.Provider(provider), meetingbot.ConnectionState(state), strings.Fields(scopes)
		got.Token = append([]byte(nil), c.Token...)
		got.CreatedAt, got.UpdatedAt = c.CreatedAt.UTC(), c.UpdatedAt.UTC()
		out = append(out, got)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: read connections: %w", s.lost(err))
	}
	return out, nil
}

// SetConnectionToken replaces the token and scopes of c's connection and
// reports whether it did: only while the connection stored is the one c
// was read as (the same CreatedAt) and is active.
func (s *Store) SetConnectionToken(ctx context.Context, c meetingbot.Connection) (bool, error) {
	if len(c.Token) == 0 {
		return false, fmt.Errorf("postgres: set connection token: no token: %w", meetingbot.ErrInvalid)
	}
	return s.changed(ctx, "set connection token", `UPDATE connections SET token = $1, scopes = $2, updated_at = $3
		WHERE provider = $4 AND user_id = $5 AND created_at = $6 AND state = 'active'`,
		c.Token, strings.Join(c.Scopes, " "), milli(c.UpdatedAt), string(c.Provider), c.UserID, milli(c.CreatedAt))
}

// ResealConnection replaces the token of c's connection, active or
// broken, with c.Token and reports whether it did: only while the
// connection stored is the one c was read as and still holds sealed.
func (s *Store) ResealConnection(ctx context.Context, c meetingbot.Connection, sealed []byte) (bool, error) {
	if len(c.Token) == 0 {
		return false, fmt.Errorf("postgres: reseal connection: no token: %w", meetingbot.ErrInvalid)
	}
	return s.changed(ctx, "reseal connection", `UPDATE connections SET token = $1
		WHERE provider = $2 AND user_id = $3 AND created_at = $4 AND token = $5`,
		c.Token, string(c.Provider), c.UserID, milli(c.CreatedAt), sealed)
}

// BreakConnection marks c's connection broken with reason and reports
// whether this call did; only one of several callers gets true.
func (s *Store) BreakConnection(ctx context.Context, c meetingbot.Connection, reason string, at time.Time) (bool, error) {
	return s.changed(ctx, "break connection", `UPDATE connections SET state = 'broken', reason = $1, updated_at = $2
		WHERE provider = $3 AND user_id = $4 AND created_at = $5 AND state = 'active'`,
		reason, milli(at), string(c.Provider), c.UserID, milli(c.CreatedAt))
}

// DeleteConnection deletes userID's connection to provider and reports
// whether there was one.
func (s *Store) DeleteConnection(ctx context.Context, provider meetingbot.Provider, userID string) (bool, error) {
	return s.changed(ctx, "delete connection", `DELETE FROM connections WHERE provider = $1 AND user_id = $2`, string(provider), userID)
}

// PutOAuthState stores a step of a flow. An ID stored already is refused.
func (s *Store) PutOAuthState(ctx context.Context, st meetingbot.OAuthState) error {
	if err := st.Check(); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	ctx, cancel := s.op(ctx)
	defer cancel()
	_, err := s.pool.Exec(ctx, `INSERT INTO oauth_states (id, step, provider, user_id, binding, verifier, expires_at, scopes) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		st.ID, string(st.Step), string(st.Provider), st.UserID, st.Binding, st.Verifier, milli(st.ExpiresAt), strings.Join(st.Scopes, " "))
	if err != nil {
		return fmt.Errorf("postgres: put oauth state: %w", s.lost(err))
	}
	return nil
}

// TakeOAuthState deletes the step with id and returns it, expired or not,
// and whether there was one: of several callers taking one step, one gets
// it.
func (s *Store) TakeOAuthState(ctx context.Context, id string) (meetingbot.OAuthState, bool, error) {
	ctx, cancel := s.op(ctx)
	defer cancel()
	st := meetingbot.OAuthState{ID: id}
	var step, provider, scopes string
	err := s.pool.QueryRow(ctx, `DELETE FROM oauth_states WHERE id = $1 RETURNING step, provider, user_id, binding, verifier, expires_at, scopes`, id).
		Scan(&step, &provider, &st.UserID, &st.Binding, &st.Verifier, &st.ExpiresAt, &scopes)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return meetingbot.OAuthState{}, false, nil
	case err != nil:
		return meetingbot.OAuthState{}, false, fmt.Errorf("postgres: take oauth state: %w", s.lost(err))
	}
	st.Step, st.Provider, st.ExpiresAt = meetingbot.OAuthStep(step), meetingbot.Provider(provider), st.ExpiresAt.UTC()
	st.Scopes = strings.Fields(scopes)
	return st, true, nil
}

// OAuthState returns the step with id without taking it, expired or
// not, and whether there is one.
func (s *Store) OAuthState(ctx context.Context, id string) (meetingbot.OAuthState, bool, error) {
	ctx, cancel := s.op(ctx)
	defer cancel()
	st := meetingbot.OAuthState{ID: id}
	var step, provider, scopes string
	err := s.pool.QueryRow(ctx, `SELECT step, provider, user_id, binding, verifier, expires_at, scopes FROM oauth_states WHERE id = $1`, id).
		Scan(&step, &provider, &st.UserID, &st.Binding, &st.Verifier, &st.ExpiresAt, &scopes)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return meetingbot.OAuthState{}, false, nil
	case err != nil:
		return meetingbot.OAuthState{}, false, fmt.Errorf("postgres: oauth state: %w", s.lost(err))
	}
	st.Step, st.Provider, st.ExpiresAt = meetingbot.OAuthStep(step), meetingbot.Provider(provider), st.ExpiresAt.UTC()
	st.Scopes = strings.Fields(scopes)
	return st, true, nil
}

// PruneOAuthStates deletes the steps that expired before before and
// returns how many.
func (s *Store) PruneOAuthStates(ctx context.Context, before time.Time) (int64, error) {
	ctx, cancel := s.op(ctx)
	defer cancel()
	tag, err := s.pool.Exec(ctx, `DELETE FROM oauth_states WHERE expires_at < $1`, milli(before))
	if err != nil {
		return 0, fmt.Errorf("postgres: prune oauth states: %w", s.lost(err))
	}
	return tag.RowsAffected(), nil
}

// StatusSettingsOf returns userID's status settings, and whether they set
// any.
func (s *Store) StatusSettingsOf(ctx context.Context, userID string) (meetingbot.StatusSettings, bool, error) {
	ctx, cancel := s.op(ctx)
	defer cancel()
	set := meetingbot.StatusSettings{UserID: userID}
	err := s.pool.QueryRow(ctx, `SELECT titles, out_of_office, updated_at FROM status_settings WHERE user_id = $1`, userID).Scan(&set.Titles, &set.OutOfOffice, &set.UpdatedAt)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return meetingbot.StatusSettings{UserID: userID}, false, nil
	case err != nil:
		return set, false, fmt.Errorf("postgres: status settings of %s: %w", userID, s.lost(err))
	}
	set.UpdatedAt = set.UpdatedAt.UTC()
	return set, true, nil
}

// PutStatusSettings stores set.
func (s *Store) PutStatusSettings(ctx context.Context, set meetingbot.StatusSettings) error {
	if set.UserID == "" {
		return fmt.Errorf("postgres: status settings: no user: %w", meetingbot.ErrInvalid)
	}
	ctx, cancel := s.op(ctx)
	defer cancel()
	if _, err := s.exec(ctx, `INSERT INTO status_settings (user_id, titles, out_of_office, updated_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (user_id) DO UPDATE SET titles = excluded.titles, out_of_office = excluded.out_of_office, updated_at = excluded.updated_at`,
		set.UserID, set.Titles, set.OutOfOffice, milli(set.UpdatedAt)); err != nil {
		return fmt.Errorf("postgres: put status settings of %s: %w", set.UserID, err)
	}
	return nil
}
