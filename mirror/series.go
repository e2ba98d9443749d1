package mirror

import (
	"context"
	"errors"

	"golang.org/x/sync/errgroup"

	"github.com/meetingbot/meetingbot"
)

// Recurring series in an incremental sync. What Google answers a syncToken
// with after a series is deleted, cut "this and following" or has its rule
// changed is not documented, and what others found differs: a deleted
// series came back as "only six months worth of events with the status
// 'cancelled'", "leaving additional events that should be deleted"
// (googleapis/google-api-ruby-client#860); instances of a deleted series
// "never disappeared" from a client's copy until it purged and synced in
// full (kidd/org-gcal.el#81); a sync listed the master itself
// (phw198/OutlookGoogleCalendarSync#2124); a deleted instance came as a
// sparse record without its recurringEventId
// (KeepSoftwareSimple/compass-calendar#2808). An instance the mirror keeps
// after its series lost it is worse than a missed change: the fire-time
// check confirms a reminder whose meeting the mirror still holds at the
// same start, so it would go out.
//
// So the mirror does not trust what a sync says of a series' instances.
// For every recurring event a sync's items touch (Synced.Series), it reads
// the event's instances in its window again (events.instances, one call a
// series, up to seriesReads at once) and makes them the whole of what it
// holds of that event. A
// tombstone of an ID that is the recurring event of instances it holds is
// the master's: the series was deleted, and its instances leave without a
// call (a deleted master has no live instance; reading them again could
// only disagree with that).
//
// A removal of an ID the mirror does not hold costs nothing: a change of a
// series without an end lists hundreds of instances Google expands far
// past the window (730 of them, some 14 years of a weekly series), each a
// removal "after the horizon", and none was ever in the mirror. Only
// removals of instances it holds are written; a sync whose removals are
// all of that kind writes nothing.

// reconcile returns what the mirror applies of res, an incremental sync
// of st's calendar: the delta with the series it touches read again, and
// only the removals of instances the mirror holds. Its errors are the
// store's and the Calendar's (a read of a series that failed: the sync
// fails, its token unused, and the next one asks again).
func (m *Mirror) reconcile(ctx context.Context, st meetingbot.CalendarSync, res meetingbot.Synced) (meetingbot.Synced, error) {
	if len(res.Series) == 0 && len(res.Removed) == 0 {
		return res, nil
	}
	held, err := m.store.Mirrored(ctx, st.CalendarID, st.From, st.Horizon)
	if err != nil {
		return res, err
	}
	heldIDs := make(map[string]bool, len(held))
	bySeries := map[string][]string{} // held instance IDs by recurring event
	for _, h := range held {
		heldIDs[h.ID] = true
		if h.RecurringEventID != "" {
			bySeries[h.RecurringEventID] = append(bySeries[h.RecurringEventID], h.ID)
		}
	}
	out := meetingbot.Synced{Token: res.Token}
	removed := map[string]bool{}
	remove := func(id string) {
		if heldIDs[id] && !removed[id] {
			removed[id] = true
			out.Removed = append(out.Removed, id)
		}
	}
	settled := map[string]bool{} // recurring events whose instances are known now
	for _, id := range res.Removed {
		if ids, ok := bySeries[id]; ok { // a master's tombstone
			settled[id] = true
			for _, inst := range ids {
				remove(inst)
			}
		}
		remove(id)
	}
	var relist []string
	for _, series := range res.Series {
		if !settled[series] {
			settled[series] = true
			relist = append(relist, series)
		}
	}
	lists, unread, err := m.readSeries(ctx, st, relist)
	if err != nil {
		return res, err
	}
	listed := map[string]bool{}
	for i, series := range relist {
		if unread[i] {
			settled[series] = false // taken as the sync reports it
			continue
		}
		ms := lists[i]
		keep := make(map[string]bool, len(ms))
		for _, x := range ms {
			keep[x.ID] = true
			listed[x.ID] = true
		}
		for _, id := range bySeries[series] {
			if !keep[id] {
				remove(id)
			}
		}
		out.Changed = append(out.Changed, ms...)
		m.log.Debug("series read again", "calendar", st.CalendarID, "series", series, "instances", len(ms), "held", len(bySeries[series]))
	}
	for _, x := range res.Changed {
		if !settled[x.RecurringEventID] && !listed[x.ID] {
			out.Changed = append(out.Changed, x)
		}
	}
	return out, nil
}

// seriesReads bounds the reads of series one sync makes at once; the
// Calendar client's quotas pace them beyond that.
const seriesReads = 8

// readSeries reads the instances of each recurring event of series in st's
// window, several at once, in the order given. A recurring event the
// calendar no longer has reads as none. A read the Calendar API does not
// serve (errors.ErrUnsupported: a server at GOOGLE_API_ENDPOINT without
// events.instances) is marked unread: that series is taken as the sync
// reports it, as before the mirror read series again, rather than as
// deleted, which would lose its reminders.
func (m *Mirror) readSeries(ctx context.Context, st meetingbot.CalendarSync, series []string) (lists [][]meetingbot.Meeting, unread []bool, err error) {
	lists, unread = make([][]meetingbot.Meeting, len(series)), make([]bool, len(series))
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(seriesReads)
	for i, id := range series {
		g.Go(func() error {
			ms, err := m.cal.Instances(ctx, st.CalendarID, id, st.From, st.Horizon)
			switch {
			case errors.Is(err, meetingbot.ErrGone):
				return nil
			case errors.Is(err, errors.ErrUnsupported):
				unread[i] = true
				if m.instancesUnserved.CompareAndSwap(false, true) {
					m.log.Warn("the Calendar API at GOOGLE_API_ENDPOINT does not serve events.instances: recurring series are taken as each sync reports them, and a series deleted may keep instances until the next full sync",
						"calendar", st.CalendarID, "err", err)
				}
				return nil
			}
			lists[i] = ms
			return err
		})
	}
	return lists, unread, g.Wait()
}
