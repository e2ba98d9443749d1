package notify

import (
	"context"
	"errors"
	"maps"
	"time"

	"github.com/slack-go/slack"
	"golang.org/x/sync/singleflight"
)

// Channels by name. Slack has no method that finds a channel by its name:
// a #name destination costs a listing of the workspace's channels,
// conversations.list, which Slack rates at Tier 2, "20+ per minute"
// (its reference page and the rate limits guide), and whose pages may
// hold fewer channels than asked, or none, before the end ("Fewer than
// the requested number of items may be returned, even if the end of the
// list hasn't been reached"). In a large workspace that is slow: a client
// found a new channel "on page 135, and the pagination sequence takes
// 7m38.503s to resolve with 20 calls per minute (tier 2 rate limit)"
// (slackapi/python-slack-sdk#1494). So the bot lists as little as it can:
//
//   - with exclude_archived=true and the types a destination can be
//     (public_channel, private_channel), in pages as large as Slack takes
//     (999: "Must be an integer under 1000"; fewer, larger requests are what
//     the tier counts);
//   - at the tier's pace, a page every listPace, so that a listing never
//     draws 429s and leaves the rest of the tier to other lookups;
//   - once for all the lookups that miss at the same time, each of which
//     gets its channel as soon as the page that has it arrives;
//   - not again within relistAfter of a listing that ended, for a name
//     that is not there (a typo in CALENDARS must not list the workspace
//     on every reminder);
//   - keeping every name it found in the store (ChannelNames), so that a
//     restart, or another replica, finds the channel without listing.
//
// A name kept may have gone stale (its channel archived, or renamed and
// the name taken by another): a post or a check that Slack answers
// channel_not_found or is_archived forgets it, and the next lookup lists
// again. Channel IDs (C…) need none of this, which is why start-up says so.

// ChannelNames keeps the workspace's channel names and IDs across
// restarts and for every replica; sqlite.Store and postgres.Store
// provide it, wired by cmd/bot.
type ChannelNames interface {
	// ChannelNames returns every name kept, with its channel's ID.
	ChannelNames(ctx context.Context) (map[string]string, error)
	// PutChannelNames keeps names (name to ID), found by a listing at seen.
	PutChannelNames(ctx context.Context, names map[string]string, seen time.Time) error
	// ForgetChannelNames forgets the names last found before before, and
	// name unless it is "".
	ForgetChannelNames(ctx context.Context, before time.Time, name string) error
}

// Timings of channel listings; see the comment above.
const (
	// listPage is the limit of one conversations.list page.
	listPage = 999
	// listPace is the least time between two pages of a listing: Tier 2's
	// 20 requests a minute.
	listPace = 3 * time.Second
	// listTimeout bounds one listing, every page and the client's retries
	// included: 300 pages at the tier's pace.
	listTimeout = 15 * time.Minute
	// relistAfter is how long a listing that ended answers for the names
	// it did not find.
	relistAfter = 10 * time.Minute
)

// names is what a Slack keeps of the workspace's channel names. Its
// fields are guarded by Slack.mu.
type names struct {
	byName   map[string]string // channel name -> ID
	store    ChannelNames      // nil: in memory only
	listedAt time.Time         // when the last listing ended, by Config.Now
	page     chan struct{}     // closed when a listing's page arrives
	listing  singleflight.Group
}

// KeepNames makes s keep the channel names it lists in store, and look a
// name up there before listing. Call it before s is used.
func (s *Slack) KeepNames(store ChannelNames) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.names.store = store
}

// channelID returns the ID of the channel called name: from what s knows,
// else from the store, else from a listing of the workspace's channels.
func (s *Slack) channelID(ctx context.Context, name string) (string, error) {
	label := destination{name: "#" + name}
	notFound := func() (string, error) {
		return "", s.explain("conversations.list", label, slack.SlackErrorResponse{Err: "channel_not_found"})
	}
	if id, ok := s.knownName(ctx, name); ok {
		return id, nil
	}
	s.mu.Lock()
	recent := !s.names.listedAt.IsZero() && s.cfg.Now().Sub(s.names.listedAt) < relistAfter
	s.mu.Unlock()
	if recent {
		return notFound()
	}
	// The listing outlives a caller that stops waiting (a lookup ending at
	// its trigger), so that the others sharing it still get it, until
	// Close.
	listed := s.names.listing.DoChan("", func() (any, error) {
		ctx, cancel, ok := s.detach(ctx, listTimeout)
		if !ok {
			return nil, errClosed
		}
		defer cancel()
		return s.listChannels(ctx)
	})
	for {
		s.mu.Lock()
		id, ok := s.names.byName[name]
		page := s.names.page
		s.mu.Unlock()
		if ok {
			return id, nil
		}
		select {
		case <-ctx.Done():
			return "", s.explain("conversations.list", label, ctx.Err())
		case <-page:
		case r := <-listed:
			if r.Err != nil {
				return "", s.explain("conversations.list", label, r.Err)
			}
			if id, ok := r.Val.(map[string]string)[name]; ok {
				return id, nil
			}
			return notFound()
		}
	}
}

// knownName returns name's channel ID if s knows it, else if the store
// has it: kept by an earlier run, or listed by another replica since. A store that fails is logged and
// passed over: the listing answers instead.
func (s *Slack) knownName(ctx context.Context, name string) (string, bool) {
	s.mu.Lock()
	id, ok := s.names.byName[name]
	store := s.names.store
	s.mu.Unlock()
	if ok || store == nil {
		return id, ok
	}
	kept, err := store.ChannelNames(ctx)
	if err != nil {
		s.log.WarnContext(ctx, "could not read the channel names kept; listing Slack's instead", "err", err)
		return "", false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for n, id := range kept {
		if _, ok := s.names.byName[n]; !ok {
			s.names.byName[n] = id
		}
	}
	id, ok = s.names.byName[name]
	return id, ok
}

// listChannels lists every channel a destination can be (see the comment
// above), remembering and keeping each page's names as it arrives, and
// returns them by name. A listing that ends replaces what s knew, and
// forgets in the store what it did not find.
func (s *Slack) listChannels(ctx context.Context) (map[string]string, error) {
	started := s.cfg.Now()
	found := map[string]string{}
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > 0 {
			if err := s.cfg.Sleep(ctx, listPace); err != nil {
				return nil, err
			}
		}
		var chans []slack.Channel
		var next string
		err := s.call(ctx, "conversations.list", policy{}, func(ctx context.Context) error {
			var err error
			chans, next, err = s.api.GetConversationsContext(ctx, &slack.GetConversationsParameters{
				Cursor: cursor, Limit: listPage, ExcludeArchived: true,
				Types: []string{"public_channel", "private_channel"},
			})
			return err
		})
		if err != nil {
			return nil, err
		}
		page := make(map[string]string, len(chans))
		for _, c := range chans {
			page[c.Name] = c.ID
		}
		maps.Copy(found, page)
		// Kept first, then told: a lookup that this page answers finds
		// its name in the store too when it returns.
		s.mu.Lock()
		store := s.names.store
		s.mu.Unlock()
		if store != nil {
			if err := store.PutChannelNames(ctx, page, started); err != nil {
				s.log.WarnContext(ctx, "could not keep the channel names listed", "err", err)
			}
		}
		s.mu.Lock()
		maps.Copy(s.names.byName, page)
		close(s.names.page)
		s.names.page = make(chan struct{})
		s.mu.Unlock()
		if cursor = next; cursor == "" {
			s.log.DebugContext(ctx, "channels listed", "channels", len(found), "pages", pages+1)
			break
		}
	}
	s.mu.Lock()
	s.names.byName = maps.Clone(found)
	s.names.listedAt = s.cfg.Now()
	store := s.names.store
	s.mu.Unlock()
	if store != nil {
		if err := store.ForgetChannelNames(ctx, started, ""); err != nil {
			s.log.WarnContext(ctx, "could not forget the channel names no longer listed", "err", err)
		}
	}
	return found, nil
}

// forgetStaleName forgets the name d was looked up by when err says its
// channel is gone (channel_not_found, is_archived): the name may be
// another channel's now, which the next lookup lists Slack to find.
func (s *Slack) forgetStaleName(ctx context.Context, d destination, err error) {
	var se slack.SlackErrorResponse
	if d.name == "" || !errors.As(err, &se) || (se.Err != "channel_not_found" && se.Err != "is_archived") {
		return
	}
	name := d.name[1:]
	s.cache.Delete(d.raw)
	s.mu.Lock()
	delete(s.names.byName, name)
	s.names.listedAt = time.Time{}
	store := s.names.store
	s.mu.Unlock()
	if store != nil {
		if err := store.ForgetChannelNames(ctx, time.Time{}, name); err != nil {
			s.log.WarnContext(ctx, "could not forget a stale channel name", "channel", d.name, "err", err)
		}
	}
}
