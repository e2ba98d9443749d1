package postgres

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/meetingbot/meetingbot"
)

// How the replicas share the work.
//
// Each subscription has a lease row: an owner and an expiry on the
// database's clock. At every round the scheduler calls Share, which, in
// one transaction:
//
//  1. renews this replica's row (its heartbeat, and that it is sharing);
//  2. adds a lease row, held by nobody, for each subscription new to it;
//  3. works out this replica's target: the subscriptions divided evenly
//     among the replicas sharing now (in the order of their names, the
//     first ones taking one more when they do not divide), so that the
//     targets add up to the subscriptions;
//  4. renews the leases it holds;
//  5. offers what it holds above its target, when another replica is
//     below its own (a replica that just started gets work); it keeps
//     sweeping what it offers until another takes it, so that a handover
//     never leaves a subscription unswept;
//  6. takes, up to its target, leases nobody holds, leases whose holder
//     stopped renewing and leases offered; and, when no other replica is
//     below its target, every lease nobody holds (a subscription held by
//     nobody is swept by someone).
//
// The transactions of all replicas take one advisory lock, so that each
// sees the last one's result: a handful of replicas each run one short
// transaction a tick, and a consistent view keeps the shares from
// overshooting. FOR UPDATE SKIP LOCKED is what a queue's many workers need
// to take different items without waiting; it would let two replicas
// balance on stale counts. Session advisory locks held per subscription
// would die with a connection (a replica still sweeping would lose them on
// a database restart) and fill the server's lock table with thousands of
// subscriptions.
//
// A replica that dies stops renewing; its leases run out LeaseTicks
// intervals after its last round (its heartbeat at most one interval
// later), and the others take its subscriptions on their next round. A replica that closes hands its
// leases back at once. A subscription whose lease changes hands may be
// swept by both replicas for up to a tick; the claims on its reminders
// keep that from sending anything twice.

// heartbeat renews this replica's row once an interval until Close.
func (s *Store) heartbeat() {
	t := time.NewTicker(s.opts.Interval)
	defer t.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), s.opts.Timeout)
		_ = s.beat(ctx) // a failure shows in Share and the ledger's calls; the next beat retries
		cancel()
	}
}

// beat registers this replica, or renews its heartbeat.
func (s *Store) beat(ctx context.Context) error {
	ctx, cancel := s.op(ctx)
	defer cancel()
	sent := time.Now()
	_, err := s.exec(ctx, `INSERT INTO replicas (owner, started_at, alive_until) VALUES ($2, `+dbNow+`, `+dbNow+` + $3::bigint * interval '1 millisecond')
		ON CONFLICT (owner) DO UPDATE SET alive_until = excluded.alive_until`, s.now(), s.owner, s.ttl.Milliseconds())
	if err != nil {
		return fmt.Errorf("postgres: %s: heartbeat of replica %s: %w", s.where, s.owner, err)
	}
	s.heldFrom(sent)
	return nil
}

// Share returns this replica's share of subs: those it holds a lease on
// after renewing, handing back and taking leases as the comment above
// says. It fits scheduler.Options.Share. On an error (the database
// unreachable) nothing changed; the caller keeps its last share, and the
// leases it cannot renew run out after LeaseTicks intervals.
func (s *Store) Share(ctx context.Context, subs []meetingbot.Subscription) ([]meetingbot.Subscription, error) {
	ids := make([]string, 0, len(subs))
	for _, sub := range subs {
		ids = append(ids, sub.ID)
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	ctx, cancel := s.op(ctx)
	defer cancel()
	var held []string
	sent := time.Now() // the transaction renews the heartbeat too
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		held, err = s.rebalance(ctx, tx, ids)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: %s: share subscriptions: %w", s.where, s.lost(err))
	}
	s.heldFrom(sent)
	mine := make(map[string]bool, len(held))
	for _, id := range held {
		mine[id] = true
	}
	out := make([]meetingbot.Subscription, 0, len(held))
	for _, sub := range subs {
		if mine[sub.ID] {
			out = append(out, sub)
			delete(mine, sub.ID) // once, should subs name one twice
		}
	}
	return out, nil
}

// rebalance is Share's transaction; ids are sorted and unique. It returns
// the IDs this replica holds.
func (s *Store) rebalance(ctx context.Context, tx pgx.Tx, ids []string) ([]string, error) {
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext(current_schema() || '.meetingbot_share'))`); err != nil {
		return nil, err
	}
	var now time.Time
	if err := tx.QueryRow(ctx, `SELECT `+dbNow, s.now()).Scan(&now); err != nil {
		return nil, err
	}
	until := now.Add(s.ttl)
	if err := s.renew(ctx, tx, ids, now, until); err != nil {
		return nil, err
	}
	mine, othersBelow, err := s.targets(ctx, tx, ids, now)
	if err != nil {
		return nil, err
	}
	held, err := collectIDs(ctx, tx, `UPDATE subscription_leases SET expires_at = $1
		WHERE owner = $2 AND subscription = ANY($3) RETURNING subscription`, until, s.owner, ids)
	if err != nil {
		return nil, err
	}
	// Offer what is above the target while another replica is below its
	// own, and keep sweeping it until that one takes it: a handover
	// leaves no subscription unswept. Offers nobody needs are withdrawn.
	slices.Sort(held)
	var offer []string
	if len(held) > mine && othersBelow {
		offer = held[mine:]
	}
	if _, err := tx.Exec(ctx, `UPDATE subscription_leases SET handover = (subscription = ANY($1))
		WHERE owner = $2 AND subscription = ANY($3) AND handover <> (subscription = ANY($1))`, offer, s.owner, ids); err != nil {
		return nil, err
	}
	// Take, up to the target, what nobody holds, what its holder stopped
	// renewing, and what is offered; and, when no other replica is below
	// its target, everything nobody holds.
	take := func(limit int, offers bool) error {
		taken, err := collectIDs(ctx, tx, `UPDATE subscription_leases SET owner = $1, expires_at = $2, taken_at = $3, handover = false
			WHERE subscription IN (
				SELECT subscription FROM subscription_leases
				WHERE subscription = ANY($4) AND owner <> $1 AND (owner = '' OR expires_at <= $3 OR (handover AND $6))
				ORDER BY (owner = '' OR expires_at <= $3) DESC, subscription LIMIT $5)
			RETURNING subscription`, s.owner, until, now, ids, limit, offers)
		held = append(held, taken...)
		return err
	}
	if want := mine - len(held); want > 0 {
		if err := take(want, true); err != nil {
			return nil, err
		}
	}
	if !othersBelow {
		if err := take(len(ids), false); err != nil {
			return nil, err
		}
	}
	return held, nil
}

// renew renews this replica's row until until, makes a lease of each of ids
// that has none, and drops the leases nobody has wanted for an hour
// (subscriptions removed everywhere) and the replicas gone as long.
func (s *Store) renew(ctx context.Context, tx pgx.Tx, ids []string, now, until time.Time) error {
	if _, err := tx.Exec(ctx, `INSERT INTO replicas (owner, started_at, alive_until, sharing_until) VALUES ($1, $2, $3, $3)
		ON CONFLICT (owner) DO UPDATE SET alive_until = excluded.alive_until, sharing_until = excluded.sharing_until`, s.owner, now, until); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO subscription_leases (subscription) SELECT unnest($1::text[]) ON CONFLICT DO NOTHING`, ids); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `DELETE FROM subscription_leases WHERE expires_at < $1 AND NOT (subscription = ANY($2))`, now.Add(-time.Hour), ids); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, `DELETE FROM replicas WHERE alive_until < $1`, now.Add(-time.Hour))
	return err
}

// targets returns how many of ids this replica should hold, an even share
// among the replicas sharing now (the first ones, in owner order, one
// more when they do not divide evenly), and whether another replica holds
// fewer than its own share.
func (s *Store) targets(ctx context.Context, tx pgx.Tx, ids []string, now time.Time) (mine int, othersBelow bool, err error) {
	sharing, err := collectIDs(ctx, tx, `SELECT owner FROM replicas WHERE sharing_until > $1 ORDER BY owner`, now)
	if err != nil {
		return 0, false, err
	}
	has := map[string]int{}
	rows, err := tx.Query(ctx, `SELECT owner, count(*)::int FROM subscription_leases
		WHERE subscription = ANY($1) AND owner <> '' AND expires_at > $2 GROUP BY owner`, ids, now)
	if err != nil {
		return 0, false, err
	}
	var owner string
	var n int
	if _, err := pgx.ForEachRow(rows, []any{&owner, &n}, func() error { has[owner] = n; return nil }); err != nil {
		return 0, false, err
	}
	target := func(i int) int {
		n := len(ids) / len(sharing)
		if i < len(ids)%len(sharing) {
			n++
		}
		return n
	}
	for i, owner := range sharing {
		switch {
		case owner == s.owner:
			mine = target(i)
		case has[owner] < target(i):
			othersBelow = true
		}
	}
	return mine, othersBelow, nil
}

// collectIDs runs a query whose rows are one text column each.
func collectIDs(ctx context.Context, tx pgx.Tx, q string, args ...any) ([]string, error) {
	rows, err := tx.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}
