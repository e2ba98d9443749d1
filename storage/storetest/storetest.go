// Package storetest is the store contract: the behaviour every backend of
// the bot's state (the SQLite store in package storage, the PostgreSQL
// store in storage/postgres) must show, as one suite of tests that each
// backend runs against itself with Run.
//
// It covers what the scheduler, the audit and self-service rely on:
// claims and their owners, orphans, renew, release and record, cursors,
// pruning, entries and ranges, the self-service tables, and the mirror of
// calendars with their push channels, the keys remembered against
// Slack's replays and retries, and the channel names Slack listed. What only one
// backend has (SQLite's file checks, PostgreSQL's replica leases) is
// tested beside that backend.
package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
)

// Store is what both backends provide.
type Store interface {
	// Owner names the claims of this store.
	Owner() string
	// Close ends the store as a process's clean exit does.
	Close() error

	Claim(ctx context.Context, e meetingbot.Entry, now, leaseUntil time.Time) (meetingbot.ClaimStatus, meetingbot.Entry, error)
	Renew(ctx context.Context, e meetingbot.Entry, leaseUntil time.Time) error
	Record(ctx context.Context, e meetingbot.Entry, now time.Time) error
	Release(ctx context.Context, e meetingbot.Entry, reason string) error
	Orphans(ctx context.Context, subscription string, now time.Time) ([]meetingbot.Entry, error)
	Entries(ctx context.Context, subscription string, keys []string) (map[string]meetingbot.Entry, error)
	Range(ctx context.Context, subscription string, from, to time.Time) ([]meetingbot.Entry, error)
	Prune(ctx context.Context, before time.Time) (int64, error)
	Count(ctx context.Context) (int64, error)
	Cursor(ctx context.Context, subscription string) (time.Time, bool, error)
	Cursors(ctx context.Context) (map[string]time.Time, error)
	AdvanceCursors(ctx context.Context, cursors map[string]time.Time) error
	Followed(ctx context.Context, subscription string, now time.Time) ([]meetingbot.Entry, error)
	ClaimEdit(ctx context.Context, e meetingbot.Entry, now, leaseUntil time.Time) (meetingbot.ClaimStatus, meetingbot.Entry, error)
	RecordEdit(ctx context.Context, e meetingbot.Entry) error

	SlackSubscriptions(ctx context.Context) ([]meetingbot.SlackSubscription, error)
	SlackSubscriptionsTo(ctx context.Context, destination string) ([]meetingbot.SlackSubscription, error)
	SlackSubscription(ctx context.Context, id string) (meetingbot.SlackSubscription, bool, error)
	AddSlackSubscription(ctx context.Context, sub meetingbot.SlackSubscription) (meetingbot.SlackSubscription, bool, error)
	SetSlackSubscriptionOffsets(ctx context.Context, id string, offsets []time.Duration) (bool, error)
	SetSlackSubscriptionFollowing(ctx context.Context, id string, offsets []time.Duration, f meetingbot.Following) (bool, error)
	SetSlackSubscriptionReminding(ctx context.Context, id string, offsets []time.Duration, onCalendar bool, rules meetingbot.Rules) (bool, error)
	RemoveSlackSubscription(ctx context.Context, id string) (bool, error)
	MuteSeries(ctx context.Context, m meetingbot.MutedSeries) (bool, error)
	UnmuteSeries(ctx context.Context, subscription, series string) (bool, error)
	MutedSeriesOf(ctx context.Context, subscription string) ([]meetingbot.MutedSeries, error)
	SlackSettingsOf(ctx context.Context, userID string) (meetingbot.SlackSettings, bool, error)
	PutSlackSettings(ctx context.Context, set meetingbot.SlackSettings) error
	SlackAgendas(ctx context.Context) ([]meetingbot.SlackSettings, error)

	CalendarSync(ctx context.Context, calendarID string) (meetingbot.CalendarSync, bool, error)
	ReplaceMirror(ctx context.Context, st meetingbot.CalendarSync, meetings []meetingbot.Meeting) error
	UpdateMirror(ctx context.Context, st meetingbot.CalendarSync, changed []meetingbot.Meeting, removed []string) error
	Mirrored(ctx context.Context, calendarID string, from, to time.Time) ([]meetingbot.Meeting, error)
	ForgetMirror(ctx context.Context, calendarID string) error
	MirroredCalendars(ctx context.Context) ([]string, error)
	PutChannel(ctx context.Context, ch meetingbot.PushChannel) error
	Channels(ctx context.Context) ([]meetingbot.PushChannel, error)
	DeleteChannel(ctx context.Context, id string) error

	Remember(ctx context.Context, key string, now, expires time.Time) (bool, error)

	FeedSeen(ctx context.Context, sub string) (map[string]meetingbot.Meeting, time.Time, error)
	PutFeedSeen(ctx context.Context, sub string, primed time.Time, put []meetingbot.Meeting, drop []string) error
	ForgetFeed(ctx context.Context, sub string) error
	FeedPending(ctx context.Context, sub string) (map[string]meetingbot.FeedPending, error)
	PutFeedPending(ctx context.Context, sub string, ps []meetingbot.FeedPending) error
	DropFeedPending(ctx context.Context, sub string, events []string) error

	ChannelNames(ctx context.Context) (map[string]string, error)
	PutChannelNames(ctx context.Context, names map[string]string, seen time.Time) error
	ForgetChannelNames(ctx context.Context, before time.Time, name string) error
}

// OwnClock is a Store that writes and judges claims' instants (ClaimedAt,
// LeaseUntil) on a clock of its own, the database's, rather than on the
// instants its callers give, which then count only as lengths: the
// PostgreSQL store, whose replicas' clocks may disagree. The contract
// checks such a store's lengths, not its instants.
type OwnClock interface {
	Store
	// OwnClock is only a mark.
	OwnClock()
}

func ownClock(s Store) bool {
	_, ok := s.(OwnClock)
	return ok
}

// Opener opens a Store on one database, as another process would, and
// closes it when the test ends (Close may also be called by the test).
type Opener func(t *testing.T) Store

// Run runs the contract. fresh makes an empty database for one test and
// returns its Opener; every call of the Opener is one more process on that
// database. The tests run in parallel, each on its own database.
func Run(t *testing.T, fresh func(t *testing.T) Opener) {
	tests := []struct {
		name string
		fn   func(t *testing.T, open Opener)
	}{
		{"ClaimSettleLifecycle", testClaimSettleLifecycle},
		{"ReleasedClaimIsLookedUpBeforeAnyResend", testReleasedClaim},
		{"OwnClaimIsTheCallersToJudge", testOwnClaim},
		{"ClosedOwnersClaimIsOrphanedAtOnce", testClosedOwner},
		{"OneClaimWinsAmongManyProcesses", testOneClaimWins},
		{"FailuresRetryableOrFinal", testFailures},
		{"OrphansCursorsPrune", testOrphansCursorsPrune},
		{"EntriesKeepTheirKind", testEntryKinds},
		{"PruneDropsDeadClaimsPastRetention", testPruneDeadClaims},
		{"CursorOfOneSubscription", testCursor},
		{"EntriesOfManyKeys", testEntriesOfManyKeys},
		{"RangeByTriggerTime", testRange},
		{"InstantsInUTCToTheMillisecond", testInstants},
		{"SlackSubscriptionsSurviveRestartAndKeepTheirID", testSlackSubscriptionsSurviveRestart},
		{"AddSlackSubscriptionTwiceChangesNothing", testAddSlackSubscriptionTwice},
		{"SlackWritesRefuseWhatTheSchedulerCannotUse", testSlackWritesRefuse},
		{"MuteAndUnmuteSeries", testMuteAndUnmute},
		{"SlackSettings", testSlackSettings},
		{"RemindingAndRulesSurviveRestart", testReminding},
		{"SlackAgendas", testSlackAgendas},
		{"FollowedListsSentRemindersWhoseMeetingIsAhead", testFollowed},
		{"EditClaimLifecycle", testEditClaimLifecycle},
		{"AMessageSaysYouDeclined", testEditDeclined},
		{"MirrorFullThenIncrementalSurvivesRestart", testMirror},
		{"ForgetMirrorKeepsOtherCalendars", testForgetMirror},
		{"PushChannelsSurviveRestart", testChannels},
		{"RememberOnceAmongProcesses", testRememberOnceAmongProcesses},
		{"ChannelNamesSurviveRestartUntilAListingMissesThem", testChannelNames},
		{"AChannelFollowsChangesAndAgendasWithoutOffsets", testFollowing},
		{"FeedSeenFromTheFirstReadingAcrossProcesses", testFeedSeen},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.fn(t, fresh(t))
		})
	}
}
