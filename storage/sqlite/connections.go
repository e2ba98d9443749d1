package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/meetingbot/meetingbot"
)

// The accounts people connect (migration 009): their connections, whose
// tokens come sealed by the keyring and are kept as the bytes given, and
// the steps of flows being made.

const connectionColumns = `provider, user_id, account, scopes, token, state, reason, created_ms, updated_ms`

// PutConnection stores c as userID's connection to c.Provider, replacing
// the one they had, and drops any other person's connection of the same
// account: an account is connected by one person at a time. Its error
// matches meetingbot.ErrInvalid for a connection Check refuses.
func (s *Store) PutConnection(ctx context.Context, c meetingbot.Connection) error {
	if err := c.Check(); err != nil {
		return fmt.Errorf("storage: %w", err)
	}
	s.write.Lock()
	defer s.write.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("storage: put connection: %w", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `DELETE FROM connections WHERE provider = ? AND account = ? AND user_id <> ?`,
		string(c.Provider), c.Account, c.UserID); err != nil {
		return fmt.Errorf("storage: put connection: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO connections (`+connectionColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (provider, user_id) DO UPDATE SET account = excluded.account, scopes = excluded.scopes, token = excluded.token,
			state = excluded.state, reason = excluded.reason, created_ms = excluded.created_ms, updated_ms = excluded.updated_ms`,
		string(c.Provider), c.UserID, c.Account, strings.Join(c.Scopes, " "), c.Token, string(c.State), c.Reason, ms(c.CreatedAt), ms(c.UpdatedAt)); err != nil {
		return fmt.Errorf("storage: put connection: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("storage: put connection: %w", err)
	}
	return nil
}

// Connection returns userID's connection to provider, and whether there is
// one.
func (s *Store) Connection(ctx context.Context, provider meetingbot.Provider, userID string) (meetingbot.Connection, bool, error) {
	cs, err := s.connections(ctx, `WHERE provider = ? AND user_id = ?`, string(provider), userID)
	if err != nil || len(cs) == 0 {
		return meetingbot.Connection{}, false, err
	}
	return cs[0], true, nil
}

// ConnectionOf returns the connection of account (a Google email in lower
// case, a Slack user ID) to provider, and whether there is one.
func (s *Store) ConnectionOf(ctx context.Context, provider meetingbot.Provider, account string) (meetingbot.Connection, bool, error) {
	cs, err := s.connections(ctx, `WHERE provider = ? AND account = ?`, string(provider), account)
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
	rows, err := s.db.QueryContext(ctx, `SELECT `+connectionColumns+` FROM connections `+where, args...)
	if err != nil {
		return nil, fmt.Errorf("storage: read connections: %w", err)
	}
	defer rows.Close()
	var out []meetingbot.Connection
	for rows.Next() {
		var c meetingbot.Connection
		var provider, scopes, state string
		var created, updated int64
		if err := rows.Scan(&provider, &c.UserID, &c.Account, &scopes, &c.Token, &state, &c.Reason, &created, &updated); err != nil {
			return nil, fmt.Errorf("storage: read connections: %w", err)
		}
		c.Provider, c.State, c.Scopes = meetingbot.Provider(provider), meetingbot.ConnectionState(state), strings.Fields(scopes)
		c.CreatedAt, c.UpdatedAt = fromMS(created), fromMS(updated)
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("storage: read connections: %w", err)
	}
	return out, nil
}

// SetConnectionToken replaces the token and scopes of c's connection, a
// refreshed or resealed grant, and reports whether it did: only while the
// connection stored is the one c was read as (the same CreatedAt) and is
// active, so that a refresh finishing late never brings back a
// connection deleted, broken or made again meanwhile.
func (s *Store) SetConnectionToken(ctx context.Context, c meetingbot.Connection) (bool, error) {
	if len(c.Token) == 0 {
		return false, fmt.Errorf("storage: set connection token: no token: %w", ErrInvalid)
	}
	res, err := s.db.ExecContext(ctx, `UPDATE connections SET token = ?, scopes = ?, updated_ms = ?
		WHERE provider = ? AND user_id = ? AND created_ms = ? AND state = 'active'`,
		c.Token, strings.Join(c.Scopes, " "), ms(c.UpdatedAt), string(c.Provider), c.UserID, ms(c.CreatedAt))
	return affected(res, err, "set connection token")
}

// ResealConnection replaces the token of c's connection, active or
// broken, with c.Token, the same grant sealed under another key, and
// reports whether it did: only while the connection stored is the one c
// was read as and still holds sealed, so that a reseal never undoes a
// refresh or a reconnection made meanwhile.
func (s *Store) ResealConnection(ctx context.Context, c meetingbot.Connection, sealed []byte) (bool, error) {
	if len(c.Token) == 0 {
		return false, fmt.Errorf("storage: reseal connection: no token: %w", ErrInvalid)
	}
	res, err := s.db.ExecContext(ctx, `UPDATE connections SET token = ?
		WHERE provider = ? AND user_id = ? AND created_ms = ? AND token = ?`,
		c.Token, string(c.Provider), c.UserID, ms(c.CreatedAt), sealed)
	return affected(res, err, "reseal connection")
}

// BreakConnection marks c's connection broken, with the reason a person
// is told, and reports whether this call did: only one of several callers
// (replicas) that find the grant refused at once gets true, and tells the
// person. Like SetConnectionToken it changes only the connection c was
// read as.
func (s *Store) BreakConnection(ctx context.Context, c meetingbot.Connection, reason string, at time.Time) (bool, error) {
	res, err := s.db.ExecContext(ctx, `UPDATE connections SET state = 'broken', reason = ?, updated_ms = ?
		WHERE provider = ? AND user_id = ? AND created_ms = ? AND state = 'active'`,
		reason, ms(at), string(c.Provider), c.UserID, ms(c.CreatedAt))
	return affected(res, err, "break connection")
}

// DeleteConnection deletes userID's connection to provider and reports
// whether there was one.
func (s *Store) DeleteConnection(ctx context.Context, provider meetingbot.Provider, userID string) (bool, error) {
	res, err := s.db.ExecContext(ctx, `DELETE FROM connections WHERE provider = ? AND user_id = ?`, string(provider), userID)
	return affected(res, err, "delete connection")
}

func affected(res sql.Result, err error, what string) (bool, error) {
	if err != nil {
		return false, fmt.Errorf("storage: %s: %w", what, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("storage: %s: %w", what, err)
	}
	return n > 0, nil
}

// PutOAuthState stores a step of a flow. An ID stored already is refused.
func (s *Store) PutOAuthState(ctx context.Context, st meetingbot.OAuthState) error {
	if err := st.Check(); err != nil {
		return fmt.Errorf("storage: %w", err)
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO oauth_states (id, step, provider, user_id, binding, verifier, expires_ms, scopes) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		st.ID, string(st.Step), string(st.Provider), st.UserID, st.Binding, st.Verifier, ms(st.ExpiresAt), strings.Join(st.Scopes, " "))
	if err != nil {
		return fmt.Errorf("storage: put oauth state: %w", err)
	}
	return nil
}

// TakeOAuthState deletes the step with id and returns it, expired or not,
// and whether there was one: of several callers taking one step (a
// replayed link, two replicas), one gets it.
func (s *Store) TakeOAuthState(ctx context.Context, id string) (meetingbot.OAuthState, bool, error) {
	st := meetingbot.OAuthState{ID: id}
	var step, provider, scopes string
	var expires int64
	err := s.db.QueryRowContext(ctx, `DELETE FROM oauth_states WHERE id = ? RETURNING step, provider, user_id, binding, verifier, expires_ms, scopes`, id).
		Scan(&step, &provider, &st.UserID, &st.Binding, &st.Verifier, &expires, &scopes)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return meetingbot.OAuthState{}, false, nil
	case err != nil:
		return meetingbot.OAuthState{}, false, fmt.Errorf("storage: take oauth state: %w", err)
	}
	st.Step, st.Provider, st.ExpiresAt = meetingbot.OAuthStep(step), meetingbot.Provider(provider), fromMS(expires)
	st.Scopes = strings.Fields(scopes)
	return st, true, nil
}

// OAuthState returns the step with id without taking it, expired or
// not, and whether there is one.
func (s *Store) OAuthState(ctx context.Context, id string) (meetingbot.OAuthState, bool, error) {
	st := meetingbot.OAuthState{ID: id}
	var step, provider, scopes string
	var expires int64
	err := s.db.QueryRowContext(ctx, `SELECT step, provider, user_id, binding, verifier, expires_ms, scopes FROM oauth_states WHERE id = ?`, id).
		Scan(&step, &provider, &st.UserID, &st.Binding, &st.Verifier, &expires, &scopes)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return meetingbot.OAuthState{}, false, nil
	case err != nil:
		return meetingbot.OAuthState{}, false, fmt.Errorf("storage: oauth state: %w", err)
	}
	st.Step, st.Provider, st.ExpiresAt = meetingbot.OAuthStep(step), meetingbot.Provider(provider), fromMS(expires)
	st.Scopes = strings.Fields(scopes)
	return st, true, nil
}

// PruneOAuthStates deletes the steps that expired before before and
// returns how many.
func (s *Store) PruneOAuthStates(ctx context.Context, before time.Time) (int64, error) {
	res, err := s.db.ExecContext(ctx, `DELETE FROM oauth_states WHERE expires_ms < ?`, ms(before))
	if err != nil {
		return 0, fmt.Errorf("storage: prune oauth states: %w", err)
	}
	return res.RowsAffected()
}

// StatusSettingsOf returns userID's status settings, and whether they set
// any.
func (s *Store) StatusSettingsOf(ctx context.Context, userID string) (meetingbot.StatusSettings, bool, error) {
	set := meetingbot.StatusSettings{UserID: userID}
	var titles, ooo, updated int64
	err := s.db.QueryRowContext(ctx, `SELECT titles, out_of_office, updated_ms FROM status_settings WHERE user_id = ?`, userID).Scan(&titles, &ooo, &updated)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return set, false, nil
	case err != nil:
		return set, false, fmt.Errorf("storage: status settings of %s: %w", userID, err)
	}
	set.Titles, set.OutOfOffice, set.UpdatedAt = titles == 1, ooo == 1, fromMS(updated)
	return set, true, nil
}

// PutStatusSettings stores set.
func (s *Store) PutStatusSettings(ctx context.Context, set meetingbot.StatusSettings) error {
	if set.UserID == "" {
		return fmt.Errorf("storage: status settings: no user: %w", ErrInvalid)
	}
	bit := func(b bool) int {
		if b {
			return 1
		}
		return 0
	}
	_, err := s.db.ExecContext(ctx, `INSERT INTO status_settings (user_id, titles, out_of_office, updated_ms) VALUES (?, ?, ?, ?)
		ON CONFLICT (user_id) DO UPDATE SET titles = excluded.titles, out_of_office = excluded.out_of_office, updated_ms = excluded.updated_ms`,
		set.UserID, bit(set.Titles), bit(set.OutOfOffice), ms(set.UpdatedAt))
	if err != nil {
		return fmt.Errorf("storage: put status settings of %s: %w", set.UserID, err)
	}
	return nil
}
