package mirror

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/meetingbot/meetingbot"
)

// reloadEvery bounds how often a notification naming a channel this
// process does not know reads the channels from the store (another
// replica may have opened it): forged IDs cannot make every request a
// database read.
const reloadEvery = time.Second

// openAtOnce bounds the watches in flight.
const openAtOnce = 16

// PushGap is the least time between the starts of two syncs of one
// calendar that notifications ask for. A change is synced at once when
// its calendar's last push-triggered sync started PushGap ago or more,
// the common case; notifications that arrive while a sync runs or within
// the gap make one more sync, at the gap's end, whatever their number.
// Google sends a notification per change, and an edit is often two or
// three in as many seconds: 2 s keeps such a change planned within about
// 2 s (and the fire-time check reads the calendar anyway), while someone
// editing another person's calendar in a loop costs at most 30 syncs a
// minute of it, not one per notification out of the service account's
// 600 a minute.
const PushGap = 2 * time.Second

// pushSyncs coalesces the syncs notifications ask for: per calendar, at
// most one running and one queued; per channel, the highest message
// number seen, so that a replayed notification changes nothing. It also
// keeps whether Google refuses the notification address. The
// numbers are this process's: a replay to another replica costs that
// replica one sync, within its own gap. m.mu guards it; the zero value
// is ready.
type pushSyncs struct {
	cals    map[string]*pushState
	numbers map[string]int64
	// unverified is set while Google refuses the address (since
	// unverifiedAt, on the elapsed clock).
	unverified   bool
	unverifiedAt time.Duration
}

// AddressRetry is how long after Google refused the notification address
// (its domain not verified, meetingbot.ErrPushAddressUnverified) the
// mirror tries one watch again: every watch to that address is refused
// alike, so asking for each calendar every minute would only spend the
// quota, and the operator's fix (verifying the domain) takes longer.
const AddressRetry = 10 * time.Minute

// probeAddress reports whether the address was refused and AddressRetry
// has passed: the next watch finds out whether it is accepted now.
func (m *Mirror) probeAddress() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.pushes.unverified && m.clock.Elapsed()-m.pushes.unverifiedAt >= AddressRetry
}

// addressRefused reports whether Google refused the address within
// AddressRetry, so that no watch is tried.
func (m *Mirror) addressRefused() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.pushes.unverified && m.clock.Elapsed()-m.pushes.unverifiedAt < AddressRetry
}

// refuseAddress notes that Google refused the address and says so: the
// first time with the fix, as an error (the first maintenance runs at
// start-up); then once per retry still refused.
func (m *Mirror) refuseAddress(err error) {
	m.mu.Lock()
	first := !m.pushes.unverified
	again := !first && m.clock.Elapsed()-m.pushes.unverifiedAt >= AddressRetry
	if first || again {
		m.pushes.unverified, m.pushes.unverifiedAt = true, m.clock.Elapsed()
	}
	m.mu.Unlock()
	switch {
	case first:
		m.log.Error("Google refuses push notifications to PUBLIC_URL's address, so no calendar gets a push channel: its domain must be verified for the Google Cloud project; "+
			"calendars are synced every CALENDAR_RESYNC_INTERVAL meanwhile, and a watch is tried again every "+AddressRetry.String(), "address", m.opts.Address, "err", err)
	case again:
		m.log.Warn("Google still refuses push notifications to PUBLIC_URL's address (domain not verified); trying again in "+AddressRetry.String(), "address", m.opts.Address)
	}
}

// acceptAddress notes that a watch to the address was accepted.
func (m *Mirror) acceptAddress() {
	m.mu.Lock()
	was := m.pushes.unverified
	m.pushes.unverified = false
	m.mu.Unlock()
	if was {
		m.log.Info("Google accepts push notifications to PUBLIC_URL's address now: opening the calendars' channels", "address", m.opts.Address)
	}
}

// pushState is one calendar's push-triggered syncs.
type pushState struct {
	running bool          // a sync, or the wait for the gap before one, is in flight
	queued  bool          // a notification came during it: sync once more after
	started time.Duration // on the elapsed clock: when the last sync started
	synced  bool          // one has started already
}

// serveNotify verifies one notification and, when it is genuine, marks
// its calendar for Run to sync.
func (m *Mirror) serveNotify(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	if m.opts.Address == "" {
		http.NotFound(w, r)
		return
	}
	ch, ok := m.channel(r.Context(), m.opts.Push.ChannelID(r.Header))
	state, number, refusal := "", int64(0), "channel"
	if ok {
		state, number, refusal = m.opts.Push.Verify(r.Header, ch)
	}
	if refusal != "" {
		m.notified(refusal)
		status := http.StatusForbidden // not one of ours: a 4xx, which Google does not retry
		if refusal == "state" || refusal == "message_number" {
			status = http.StatusBadRequest
		}
		m.log.Debug("push notification refused", "reason", refusal)
		http.Error(w, http.StatusText(status), status)
		return
	}
	m.mu.Lock()
	if !m.newNumber(ch.ID, number) {
		m.mu.Unlock()
		// Google numbers a channel's notifications in increasing order: a
		// number seen already is a replay, or one overtaken by a later
		// one, whose sync covers its change. Answered as accepted, so
		// that Google has nothing to retry.
		m.notified("replayed")
		m.log.Debug("push notification replayed; nothing to do", "channel", ch.ID, "number", number)
		w.WriteHeader(http.StatusOK)
		return
	}
	m.notified("accepted")
	// A renewed channel's first notification ("sync") says only that it
	// is open; the channel it replaces was live all along, so there is
	// nothing to catch up. A new channel's is worth a sync: a change made
	// between the calendar's last sync and the watch has no notification;
	// unless a sync that started after the watch was sent covers it (see
	// pushed).
	switch {
	case state != "sync":
		m.pending[ch.CalendarID] = true
		m.changeAt[ch.CalendarID] = m.clock.Now()
	case !m.renewal[ch.ID]:
		m.pending[ch.CalendarID] = true
		if at, ok := m.opened[ch.ID]; ok {
			m.since[ch.CalendarID] = at
		}
	}
	delete(m.renewal, ch.ID)
	delete(m.opened, ch.ID)
	m.mu.Unlock()
	select {
	case m.kick <- struct{}{}:
	default:
	}
	w.WriteHeader(http.StatusOK)
}

func (m *Mirror) notified(outcome string) {
	if m.opts.Observer != nil {
		m.opts.Observer.Notified(outcome)
	}
}

// channel returns the channel id, looking in the store when this process
// does not know it, at most once every reloadEvery.
func (m *Mirror) channel(ctx context.Context, id string) (meetingbot.PushChannel, bool) {
	if id == "" {
		return meetingbot.PushChannel{}, false
	}
	m.mu.Lock()
	ch, ok := m.channels[id]
	reload := !ok && m.clock.Elapsed()-m.reloaded >= reloadEvery
	if reload {
		m.reloaded = m.clock.Elapsed()
	}
	m.mu.Unlock()
	if ok || !reload {
		return ch, ok
	}
	if err := m.reload(ctx); err != nil {
		m.log.Warn("read the push channels", "err", err)
		return meetingbot.PushChannel{}, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	ch, ok = m.channels[id]
	return ch, ok
}

// reload adds the store's channels to those known.
func (m *Mirror) reload(ctx context.Context) error {
	chs, err := m.store.Channels(ctx)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, ch := range chs {
		m.channels[ch.ID] = ch
	}
	m.rewatch()
	return nil
}

// rewatch recomputes which calendars have a channel open, and until when,
// from the channels known (see Mirror.resync). m.mu must be held.
func (m *Mirror) rewatch() {
	clear(m.watched)
	for _, ch := range m.channels {
		if ch.ResourceID != "" { // not one being opened
			m.watch(ch)
		}
	}
}

// watch notes that ch is open on its calendar. m.mu must be held.
func (m *Mirror) watch(ch meetingbot.PushChannel) {
	exp, ok := m.watched[ch.CalendarID]
	if !ok || (!exp.IsZero() && (ch.Expiration.IsZero() || ch.Expiration.After(exp))) {
		m.watched[ch.CalendarID] = ch.Expiration
	}
}

// Run does the mirror's background work until ctx ends: it syncs each
// calendar a notification names within a second of it and wakes the
// scheduler, and every Options.Maintain it opens a channel on each
// calendar subscribed (with push on), replaces those close to their end,
// stops those of calendars no longer subscribed and drops their mirrors.
// At start it reuses the live channels the store keeps. It returns nil
// once ctx has ended and its syncs in flight have finished; channels stay
// open for the next start.
func (m *Mirror) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	maintain := make(chan struct{}, 1)
	for {
		m.maintain(ctx)
		t := m.clock.AfterFunc(m.opts.Maintain, func() {
			select {
			case maintain <- struct{}{}:
			default:
			}
		})
	wait:
		for {
			select {
			case <-ctx.Done():
				t.Stop()
				return nil
			case <-maintain:
				break wait
			case <-m.maintainNow:
				t.Stop()
				break wait
			case <-m.kick:
				m.mu.Lock()
				cals := make([]string, 0, len(m.pending))
				for c := range m.pending {
					cals = append(cals, c)
				}
				clear(m.pending)
				m.mu.Unlock()
				for _, c := range cals {
					if m.startPush(c) {
						wg.Go(func() { m.pushSyncs(ctx, c) })
					}
				}
			}
		}
	}
}

// MaintainNow asks Run to look at the channels at once rather than at its
// next Options.Maintain: a replica that has just learnt which calendars
// it holds (Options.Watch) opens their channels.
func (m *Mirror) MaintainNow() {
	select {
	case m.maintainNow <- struct{}{}:
	default:
	}
}

// newNumber records number as channel's latest message number and
// reports whether it is above the one before. m.mu must be held.
func (m *Mirror) newNumber(channel string, number int64) bool {
	if m.pushes.numbers == nil {
		m.pushes.numbers = map[string]int64{}
	}
	if last, ok := m.pushes.numbers[channel]; ok && number <= last {
		return false
	}
	m.pushes.numbers[channel] = number
	return true
}

// startPush reports whether a goroutine must start the push-triggered
// syncs of calendarID (pushSyncs); when they run already, it queues one
// more.
func (m *Mirror) startPush(calendarID string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.pushes.cals == nil {
		m.pushes.cals = map[string]*pushState{}
	}
	st := m.pushes.cals[calendarID]
	if st == nil {
		st = &pushState{}
		m.pushes.cals[calendarID] = st
	}
	if st.running {
		st.queued = true
		return false
	}
	st.running = true
	return true
}

// pushSyncs syncs calendarID for its notifications until none is queued,
// each sync starting PushGap at least after the one before, and waking
// the scheduler after each.
func (m *Mirror) pushSyncs(ctx context.Context, calendarID string) {
	for {
		m.mu.Lock()
		st := m.pushes.cals[calendarID]
		wait := time.Duration(0)
		if st.synced {
			wait = st.started + PushGap - m.clock.Elapsed()
		}
		m.mu.Unlock()
		if wait > 0 {
			done := make(chan struct{})
			t := m.clock.AfterFunc(wait, func() { close(done) })
			select {
			case <-ctx.Done():
				t.Stop()
				m.mu.Lock()
				st.running, st.queued = false, false
				m.mu.Unlock()
				return
			case <-done:
			}
		}
		m.mu.Lock()
		st.started, st.synced, st.queued = m.clock.Elapsed(), true, false
		m.mu.Unlock()
		m.pushed(ctx, calendarID)
		m.mu.Lock()
		if !st.queued || ctx.Err() != nil {
			st.running, st.queued = false, false
			m.mu.Unlock()
			return
		}
		m.mu.Unlock()
	}
}

// pushed syncs a calendar a notification named and wakes the scheduler.
// The sync is as urgent as a call needed now: the notification says the
// mirror of the calendar is behind it, and a change it tells of may be a
// meeting moved to start in minutes. When the quota cannot serve every
// call at once (10,000 calendars' reminders at one instant), it goes
// before the checks of reminders still to come, whose calendars are most
// likely current, rather than after every one of them.
func (m *Mirror) pushed(ctx context.Context, calendarID string) {
	// A new channel's first notification needs a sync from its watch on,
	// and a change's from its arrival on: one that started after both,
	// the calendar's first sync as often as not, covers them. At
	// start-up that is a sync per calendar saved, 10,000 for as many.
	m.mu.Lock()
	since, opened := m.since[calendarID]
	delete(m.since, calendarID)
	need := since
	if at := m.changeAt[calendarID]; at.After(need) {
		need = at
	}
	m.mu.Unlock()
	if opened {
		if last, ok := m.lastSync(ctx, calendarID); ok && !last.Before(need) {
			m.log.Debug("a new channel's first notification needs no sync: one since its watch covers it", "calendar", calendarID)
			return
		}
	}
	if err := m.Sync(meetingbot.WithUrgency(ctx, m.clock.Now()), calendarID); err != nil {
		if ctx.Err() == nil {
			// The change it told of is unread: the next sweep syncs
			// the calendar, not the resync 30 minutes on.
			m.mu.Lock()
			m.dirty[calendarID] = true
			m.mu.Unlock()
			m.log.Warn("sync a calendar after its notification; the next sweep retries", "calendar", calendarID, "err", err)
		}
		return
	}
	m.mu.Lock()
	woken := m.onWake
	m.mu.Unlock()
	for _, f := range woken {
		f(ctx, calendarID)
	}
}

// maintain brings the channels and mirrors in line with the calendars
// subscribed now; a failure is logged and tried again next time.
func (m *Mirror) maintain(ctx context.Context) {
	if m.opts.Calendars == nil {
		return
	}
	cals, err := m.opts.Calendars(ctx)
	if err != nil {
		if ctx.Err() == nil {
			m.log.Warn("read the calendars subscribed, to keep their channels and mirrors", "err", err)
		}
		return
	}
	wanted := make(map[string]bool, len(cals))
	for _, c := range cals {
		wanted[c] = true
	}
	m.forgetUnwanted(ctx, wanted)
	if err := m.reload(ctx); err != nil {
		m.log.Warn("read the push channels", "err", err)
		return
	}
	m.mu.Lock()
	byCal := map[string][]meetingbot.PushChannel{}
	for _, ch := range m.channels {
		if ch.ResourceID != "" { // not one being opened
			byCal[ch.CalendarID] = append(byCal[ch.CalendarID], ch)
		}
	}
	m.mu.Unlock()
	// Stop the channels of calendars no longer subscribed, and every
	// channel once push is turned off.
	for c, chs := range byCal {
		if !wanted[c] || m.opts.Address == "" {
			why := "its calendar is no longer subscribed"
			if m.opts.Address == "" {
				why = "push is off (no PUBLIC_URL)"
			}
			for _, ch := range chs {
				m.stop(ctx, ch, why)
			}
		}
	}
	if m.opts.Address != "" {
		m.keepChannels(ctx, cals, byCal)
	}
	m.countChannels()
}

// forgetUnwanted drops the mirrors of the calendars no longer wanted.
func (m *Mirror) forgetUnwanted(ctx context.Context, wanted map[string]bool) {
	mirrored, err := m.store.MirroredCalendars(ctx)
	if err != nil {
		m.log.Warn("read the mirrored calendars", "err", err)
	}
	for _, c := range mirrored {
		if !wanted[c] {
			if err := m.store.ForgetMirror(ctx, c); err != nil {
				m.log.Warn("drop the mirror of a calendar no longer subscribed", "calendar", c, "err", err)
			}
		}
	}
}

// keepChannels keeps one live channel on each of cals this replica keeps,
// whose channels now are byCal's: it opens one where none serves past
// RenewBefore, and stops the others (renewed, expired, or another
// replica's duplicate).
func (m *Mirror) keepChannels(ctx context.Context, cals []string, byCal map[string][]meetingbot.PushChannel) {
	now := m.clock.Now()
	// Channels open 16 at a time: a first start opens one per calendar,
	// and at 150 ms a watch 1,000 calendars take 10 s, within the quota;
	// 4 at a time took 40 s, during which changes to calendars still
	// without a channel waited for their resync (see docs/performance.md's
	// figures).
	var wg sync.WaitGroup
	parallel := openAtOnce
	if m.probeAddress() {
		parallel = 1 // one watch tells whether the address is accepted now
	}
	limit := make(chan struct{}, parallel)
	for _, c := range cals {
		if m.opts.Watch != nil && !m.opts.Watch(c) {
			continue // another replica's to keep
		}
		chs := byCal[c]
		// The newest channel serves; the others are renewed ones, or
		// another replica's duplicate, and are stopped.
		slices.SortFunc(chs, func(a, b meetingbot.PushChannel) int { return b.Expiration.Compare(a.Expiration) })
		keep := -1
		if len(chs) > 0 && (chs[0].Expiration.IsZero() || chs[0].Expiration.Sub(now) > m.opts.RenewBefore) {
			keep = 0
		}
		limit <- struct{}{}
		wg.Go(func() {
			defer func() { <-limit }()
			if keep < 0 && !m.renew(ctx, c, chs, now) {
				return // keep the old channel while there is no new one
			}
			for i, ch := range chs {
				if i != keep {
					why := "renewed"
					if !ch.Expiration.IsZero() && !ch.Expiration.After(now) {
						why = "expired"
					}
					m.stop(ctx, ch, why)
				}
			}
		})
	}
	wg.Wait()
	m.mu.Lock()
	m.rewatch() // the channels stopped are gone
	m.mu.Unlock()
}

// renew opens a new channel on calendar c, whose channels now are chs,
// and reports whether it did.
func (m *Mirror) renew(ctx context.Context, c string, chs []meetingbot.PushChannel, now time.Time) bool {
	if m.addressRefused() {
		return false // every watch to the address is refused alike
	}
	live := len(chs) > 0 && (chs[0].Expiration.IsZero() || chs[0].Expiration.After(now))
	_, err := m.open(ctx, c, live)
	switch {
	case errors.Is(err, meetingbot.ErrPushAddressUnverified):
		m.refuseAddress(err)
		return false
	case err != nil:
		if ctx.Err() == nil {
			m.log.Warn("open a push channel; the calendar is synced every CALENDAR_RESYNC_INTERVAL meanwhile", "calendar", c, "err", err)
		}
		return false
	}
	m.acceptAddress()
	return true
}

func (m *Mirror) countChannels() {
	if m.opts.Observer == nil {
		return
	}
	m.mu.Lock()
	n := 0
	for _, ch := range m.channels {
		if ch.ResourceID != "" {
			n++
		}
	}
	m.mu.Unlock()
	m.opts.Observer.ChannelsOpen(n)
}

// open opens a channel on calendarID with a random ID and token, known to
// the handler before Watch is sent (its first notification may come
// before Watch's answer), and keeps it in the store.
func (m *Mirror) open(ctx context.Context, calendarID string, renewal bool) (meetingbot.PushChannel, error) {
	for attempt := 0; ; attempt++ {
		pending := meetingbot.PushChannel{ID: "meetingbot-" + random(16, true), CalendarID: calendarID, Token: random(32, false)}
		m.mu.Lock()
		m.channels[pending.ID] = pending
		if renewal {
			m.renewal[pending.ID] = true
		}
		m.mu.Unlock()
		watch := ctx
		if renewal {
			watch = meetingbot.WithRenewal(ctx)
		}
		m.mu.Lock()
		if !renewal {
			m.opened[pending.ID] = m.clock.Now()
		}
		m.mu.Unlock()
		ch, err := m.opts.Push.Watch(watch, calendarID, pending.ID, pending.Token, m.opts.Address, m.opts.ChannelTTL)
		if err == nil {
			err = m.store.PutChannel(ctx, ch)
			if err != nil {
				// Not kept, it could leak at a restart: stop it now.
				if serr := m.opts.Push.StopChannel(ctx, ch); serr != nil {
					m.log.Warn("stop a channel that could not be kept; it ends at its expiration", "channel", ch.ID, "err", serr)
				}
			}
		}
		m.mu.Lock()
		if err != nil {
			delete(m.channels, pending.ID)
			delete(m.renewal, pending.ID)
			delete(m.opened, pending.ID)
		} else {
			m.channels[ch.ID] = ch
			m.watch(ch)
		}
		m.mu.Unlock()
		if err != nil && errors.Is(err, meetingbot.ErrChannelIDTaken) && attempt < 2 {
			continue
		}
		if err == nil {
			m.log.Info("push channel open", "calendar", calendarID, "channel", ch.ID, "expiration", ch.Expiration)
		}
		return ch, err
	}
}

// stop ends ch with Google and forgets it; a failure keeps it for the
// next try.
func (m *Mirror) stop(ctx context.Context, ch meetingbot.PushChannel, why string) {
	expired := !ch.Expiration.IsZero() && !ch.Expiration.After(m.clock.Now())
	if !expired && m.opts.Push != nil {
		if err := m.opts.Push.StopChannel(ctx, ch); err != nil {
			if ctx.Err() == nil {
				m.log.Warn("stop a push channel; trying again later", "calendar", ch.CalendarID, "channel", ch.ID, "err", err)
			}
			return
		}
	}
	if err := m.store.DeleteChannel(ctx, ch.ID); err != nil {
		m.log.Warn("forget a stopped push channel", "channel", ch.ID, "err", err)
		return
	}
	m.mu.Lock()
	delete(m.channels, ch.ID)
	delete(m.pushes.numbers, ch.ID)
	delete(m.opened, ch.ID)
	m.mu.Unlock()
	m.log.Info("push channel stopped", "calendar", ch.CalendarID, "channel", ch.ID, "why", why)
}

// random returns n random bytes as hex or unpadded base64url.
func random(n int, hexa bool) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	if hexa {
		return hex.EncodeToString(b)
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// StopChannels stops the push channels that account, a person's
// connected Google account, opened and forgets them, while it can still
// stop them: Google lets only the identity that opened a channel stop it.
// It is called before a person's connection is revoked
// (connect.Hooks.Disconnecting); a channel that cannot be stopped ends at
// its expiration. Channels the bot's credentials opened on the same
// calendar stay.
func (m *Mirror) StopChannels(ctx context.Context, account string) {
	if m.opts.Push == nil {
		return
	}
	chs, err := m.store.Channels(ctx)
	if err != nil {
		m.log.Warn("cannot list the push channels to stop", "account", account, "err", err)
		return
	}
	for _, ch := range chs {
		opener, _ := meetingbot.ParseReading(ch.Opener)
		if ch.Opener == "" || !strings.EqualFold(opener, account) {
			continue
		}
		if err := m.opts.Push.StopChannel(ctx, ch); err != nil {
			m.log.Warn("cannot stop a push channel of a calendar being disconnected; it ends at its expiration", "calendar", ch.CalendarID, "channel", ch.ID, "err", err)
		}
		if err := m.store.DeleteChannel(ctx, ch.ID); err != nil {
			m.log.Warn("cannot forget a stopped push channel", "calendar", ch.CalendarID, "channel", ch.ID, "err", err)
		}
		m.mu.Lock()
		delete(m.channels, ch.ID)
		m.mu.Unlock()
	}
}
