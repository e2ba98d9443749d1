package calendartest

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"google.golang.org/api/calendar/v3"
)

// Push notifications, as Google documents them in "Push notifications"
// (https://developers.google.com/workspace/calendar/api/guides/push) and
// in the references of events.watch and channels.stop
// (https://developers.google.com/workspace/calendar/api/v3/reference/events/watch,
// https://developers.google.com/workspace/calendar/api/v3/reference/channels/stop):
//
//   - events.watch takes a Channel: id (unique, at most 64 characters),
//     type "web_hook", address (an HTTPS URL), token (optional, at most 256
//     characters), params.ttl (seconds, default 604800); it answers with
//     the channel, its resourceId (opaque, names the watched collection),
//     resourceUri and expiration (Unix milliseconds);
//   - the server then POSTs a notification with no body to the address:
//     first X-Goog-Resource-State "sync" (X-Goog-Message-Number 1), then
//     "exists" on every change of the calendar's events, each with
//     X-Goog-Channel-ID, X-Goog-Channel-Token, X-Goog-Channel-Expiration,
//     X-Goog-Resource-ID, X-Goog-Resource-URI and an increasing
//     X-Goog-Message-Number;
//   - a channel ends at its expiration or with channels.stop ({id,
//     resourceId}, answered 204); there is no renewal, a new watch with a
//     new id replaces it.
//
// Google calls notifications "not 100% reliable"; the server delivers
// each once, does not retry, and can drop some on purpose
// (DropNotifications, LoseNotifications). Errors Google is reported to answer a bad watch
// with (push.webhookUrlNotHttps, channelIdNotUnique) are not in its
// reference; the server answers them the same way.

// Names of the push methods, as RequestsTo counts them.
const (
	MethodWatch = "events.watch"
	MethodStop  = "channels.stop"
)

// DefaultChannelTTL is a channel's life when the watch names none: the
// default of params.ttl.
const DefaultChannelTTL = 604800 * time.Second

// Channel is a live notification channel, as Channels lists it.
type Channel struct {
	ID         string
	CalendarID string
	ResourceID string
	// Address is where its notifications go, as the watch named it.
	Address    string
	Expiration time.Time
}

// Delivery is one notification the server sent, or tried to.
type Delivery struct {
	ChannelID, CalendarID string
	// State is X-Goog-Resource-State: "sync" or "exists".
	State         string
	MessageNumber int64
	// Address is where it went, after ForwardNotifications.
	Address string
	// Status is the receiver's HTTP status, 0 when there was no answer.
	Status int
	// Err says why there was no answer ("dropped" for DropNotifications
	// and LoseNotifications).
	Err string
	// Queued is when the change (or the watch) made the notification, and
	// At when it was answered, failed or was dropped, on the server's
	// clock (SetClock).
	Queued, At time.Time
}

// channel is a live channel and its queue of notifications not yet sent:
// one channel's notifications go out one at a time, in order.
type channel struct {
	Channel
	token, resourceURI, principal string
	messages                      int64
	queue                         []notification
	sending                       bool
}

type notification struct {
	state  string
	number int64
	queued time.Time
}

// pushState is the server's side of push notifications.
type pushState struct {
	now      func() time.Time
	client   *http.Client
	forwards [][2]string
	// channels are every live channel by ID; each calendar's are also in
	// its calendarState.
	channels map[string]*channel
	drop     map[string]int
	// loss is the share of notifications lost (LoseNotifications), and
	// lossSeed what picks them.
	loss       float64
	lossSeed   uint64
	deliveries []Delivery
	// verified, when not nil, are the only hosts watches may name
	// (RequireVerifiedDomains).
	verified map[string]bool
	faults   map[string][]Fault
	// inflight counts channels with a delivery goroutine; idle is
	// broadcast when it falls to 0.
	inflight int
	ctx      context.Context
	cancel   context.CancelFunc
}

// SetClock replaces the clock channel expirations are computed and checked
// with, and the delta horizon (SetDeltaHorizon) is counted from (time.Now by
// default), so a test can expire a channel without waiting.
func (s *Server) SetClock(now func() time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.push.now = now
}

// SetNotifyClient replaces the HTTP client notifications are posted with,
// e.g. with an httptest TLS server's Client, so that its certificate is
// trusted. The default trusts the system's roots and times out after 10s.
func (s *Server) SetNotifyClient(c *http.Client) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.push.client = c
}

// ForwardNotifications delivers the notifications of channels whose address
// starts with publicURL to the same path under to, as a TLS-terminating
// proxy in front of a bot does: a watch names the bot's public https URL,
// the bot listens on plain HTTP behind it.
func (s *Server) ForwardNotifications(publicURL, to string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.push.forwards = append(s.push.forwards, [2]string{strings.TrimSuffix(publicURL, "/"), strings.TrimSuffix(to, "/")})
}

// DropNotifications makes the next n notifications of calendarID's
// channels get lost, as Google says a small share does.
func (s *Server) DropNotifications(calendarID string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.push.drop[calendarID] += n
}

// LoseNotifications makes each notification, from now on, get lost with
// probability share (0 to 1), as Google says some are ("Notifications
// are not 100% reliable. Expect a small percentage of messages to get
// dropped under normal working conditions", "Push notifications",
// https://developers.google.com/workspace/calendar/api/guides/push). Which
// ones is a hash of seed, the calendar and the message number, so that a
// run that makes the same changes loses the same notifications whatever
// the order they are sent in. Lost ones are in Deliveries with Err
// "dropped".
func (s *Server) LoseNotifications(share float64, seed uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.push.loss, s.push.lossSeed = share, seed
}

// lost reports whether the notification number of a channel on
// calendarID is lost (LoseNotifications).
func (p *pushState) lost(calendarID string, number int64) bool {
	if p.loss <= 0 {
		return false
	}
	h := fnv.New64a()
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], p.lossSeed)
	binary.LittleEndian.PutUint64(b[8:], uint64(number))
	h.Write(b[:])
	h.Write([]byte(calendarID))
	return float64(h.Sum64()>>11)/(1<<53) < p.loss
}

// RequireVerifiedDomains makes events.watch refuse every address whose
// host is not one of hosts or a subdomain of one, as Google does for a
// domain the project has not verified: older Google guides required the
// webhook's domain to be verified in Search Console and added under the
// Cloud console's Domain verification, and reports still see it. The
// answer is the error others report: HTTP 401 with reason
// push.webhookUrlUnauthorized, which Google's Cloud Storage JSON API
// lists under 401 Unauthorized ("Requests to storage.objects.watchAll will
// fail unless you verify you own the domain",
// https://cloud.google.com/storage/docs/json_api/v1/status-codes), and the
// message "Unauthorized WebHook callback channel: <address>"
// (googleapis/google-api-php-client#569, for a Calendar watch). A 401 makes
// a client renew its access token and try again once: the refusal stays.
// No hosts: every watch is refused.
func (s *Server) RequireVerifiedDomains(hosts ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.push.verified = map[string]bool{}
	for _, h := range hosts {
		s.push.verified[strings.ToLower(h)] = true
	}
}

// domainVerified reports whether a watch may name address. s.mu must be
// held.
func (s *Server) domainVerified(address string) bool {
	if s.push.verified == nil {
		return true
	}
	u, err := url.Parse(address)
	if err != nil {
		return false
	}
	for host := strings.ToLower(u.Hostname()); host != ""; {
		if s.push.verified[host] {
			return true
		}
		_, rest, ok := strings.Cut(host, ".")
		if !ok {
			break
		}
		host = rest
	}
	return false
}

// QueueWatchFaults makes the next len(faults) events.watch requests on
// calendarID fail, in order, before any other check.
func (s *Server) QueueWatchFaults(calendarID string, faults ...Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.push.faults[calendarID] = append(s.push.faults[calendarID], faults...)
}

// Channels returns the live channels, expired ones left out, sorted by ID.
func (s *Server) Channels() []Channel {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.push.now()
	var out []Channel
	for _, ch := range s.push.channels {
		if now.Before(ch.Expiration) {
			out = append(out, ch.Channel)
		}
	}
	sortChannels(out)
	return out
}

// Deliveries returns the notifications sent so far, in the order they were
// answered.
func (s *Server) Deliveries() []Delivery {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Delivery(nil), s.push.deliveries...)
}

// FlushNotifications waits until every notification queued so far has been
// delivered or has failed.
func (s *Server) FlushNotifications() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.push.inflight > 0 {
		s.idle.Wait()
	}
}

// serveWatch answers events.watch.
func (s *Server) serveWatch(w http.ResponseWriter, r *http.Request) {
	calendarID := r.PathValue("calendarId")
	var req calendar.Channel
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "global", "parseError", "Parse Error")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if q := s.push.faults[calendarID]; len(q) > 0 {
		s.push.faults[calendarID] = q[1:]
		serveFault(w, q[0])
		return
	}
	principal, personal, ok := s.caller(r)
	if !ok {
		writeError(w, http.StatusUnauthorized, "global", "authError", "Invalid Credentials")
		return
	}
	c := s.calendars[calendarID]
	if !s.mayRead(c, calendarID, principal, personal) {
		writeNotFound(w)
		return
	}
	now := s.push.now()
	expiration, reason, message := checkWatch(&req, now)
	if reason == "" && s.push.channels[req.Id] != nil {
		reason, message = "channelIdNotUnique", "Channel id not unique"
	}
	if reason != "" {
		writeBadRequest(w, reason, message)
		return
	}
	if !s.domainVerified(req.Address) {
		writeError(w, http.StatusUnauthorized, "global", "push.webhookUrlUnauthorized", "Unauthorized WebHook callback channel: "+req.Address)
		return
	}
	ch := &channel{
		Channel: Channel{
			ID: req.Id, CalendarID: calendarID, ResourceID: c.resourceID,
			Address: req.Address, Expiration: expiration,
		},
		token:       req.Token,
		resourceURI: s.Endpoint() + "calendars/" + url.PathEscape(calendarID) + "/events?alt=json",
		principal:   principal,
	}
	s.push.channels[ch.ID] = ch
	c.channels[ch.ID] = ch
	// The sync message may reach the receiver before this answer does,
	// as Google warns it can.
	s.notify(ch, "sync")
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	json.NewEncoder(w).Encode(&calendar.Channel{
		Kind:        "api#channel",
		Id:          ch.ID,
		ResourceId:  ch.ResourceID,
		ResourceUri: ch.resourceURI,
		Token:       ch.token,
		Expiration:  expiration.UnixMilli(),
	})
}

// checkWatch checks a watch request and returns the channel's expiration,
// or the reason and message of a 400 answer.
func checkWatch(req *calendar.Channel, now time.Time) (expiration time.Time, reason, message string) {
	switch {
	case req.Id == "":
		return expiration, "required", "Required channel id"
	case len(req.Id) > 64:
		return expiration, "invalid", "Channel id too long: at most 64 characters"
	case req.Type != "web_hook" && req.Type != "webhook":
		return expiration, "push.channelTypeNotSupported", fmt.Sprintf("Unsupported channel type: %q", req.Type)
	case len(req.Token) > 256:
		return expiration, "invalid", "Channel token too long: at most 256 characters"
	}
	if u, err := url.Parse(req.Address); err != nil || u.Scheme != "https" || u.Host == "" {
		return expiration, "push.webhookUrlNotHttps", "WebHook callback must be HTTPS: " + req.Address
	}
	ttl := DefaultChannelTTL
	if v, ok := req.Params["ttl"]; ok {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			return expiration, "invalid", "Invalid value for params.ttl: " + v
		}
		ttl = time.Duration(n) * time.Second
	} else if req.Expiration > 0 {
		if at := time.UnixMilli(req.Expiration); at.After(now) {
			return at, "", ""
		}
		return expiration, "invalid", "Channel expiration is in the past"
	}
	return now.Add(ttl), "", ""
}

// serveStop answers channels.stop: the channel ends, whatever was queued
// for it is not sent. Only the principal that opened it may stop it; any
// other request naming it, or a channel that ended, is 404 notFound,
// "Channel '…' not found for project '…'", as Google answers a channel
// stopped with another identity's token
// (googleapis/google-api-nodejs-client#627).
func (s *Server) serveStop(w http.ResponseWriter, r *http.Request) {
	var req calendar.Channel
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "global", "parseError", "Parse Error")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	principal, ok := s.principal(r)
	if !ok {
		writeError(w, http.StatusUnauthorized, "global", "authError", "Invalid Credentials")
		return
	}
	ch := s.push.channels[req.Id]
	if ch == nil || ch.ResourceID != req.ResourceId || ch.principal != principal || !s.push.now().Before(ch.Expiration) {
		writeError(w, http.StatusNotFound, "global", "notFound", fmt.Sprintf("Channel '%s' not found for project '%s'", req.Id, "meetingbot-test"))
		return
	}
	s.endChannel(ch)
	w.WriteHeader(http.StatusNoContent)
}

// endChannel forgets ch and drops what was queued for it. s.mu must be
// held.
func (s *Server) endChannel(ch *channel) {
	delete(s.push.channels, ch.ID)
	if c := s.calendars[ch.CalendarID]; c != nil {
		delete(c.channels, ch.ID)
	}
	ch.queue = nil
}

// notifyChanged queues an "exists" notification to every live channel on
// c, and ends those that expired. s.mu must be held.
func (s *Server) notifyChanged(c *calendarState) {
	now := s.push.now()
	for _, ch := range c.channels {
		if !now.Before(ch.Expiration) {
			s.endChannel(ch)
			continue
		}
		s.notify(ch, "exists")
	}
}

// notify queues a notification of state for ch and starts its delivery
// goroutine if it has none. s.mu must be held.
func (s *Server) notify(ch *channel, state string) {
	ch.messages++
	n := notification{state: state, number: ch.messages, queued: s.push.now()}
	if s.push.drop[ch.CalendarID] > 0 || s.push.lost(ch.CalendarID, n.number) {
		if s.push.drop[ch.CalendarID] > 0 {
			s.push.drop[ch.CalendarID]--
		}
		s.push.deliveries = append(s.push.deliveries, Delivery{
			ChannelID: ch.ID, CalendarID: ch.CalendarID, State: state, MessageNumber: n.number, Address: ch.Address, Err: "dropped",
			Queued: n.queued, At: n.queued,
		})
		return
	}
	ch.queue = append(ch.queue, n)
	if !ch.sending {
		ch.sending = true
		s.push.inflight++
		go s.deliver(ch)
	}
}

// deliver sends ch's queued notifications one at a time until none is
// left or the server closes.
func (s *Server) deliver(ch *channel) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for len(ch.queue) > 0 && s.push.ctx.Err() == nil {
		n := ch.queue[0]
		ch.queue = ch.queue[1:]
		req, address, err := s.notificationRequest(ch, n)
		client := s.push.client
		s.mu.Unlock()
		d := Delivery{ChannelID: ch.ID, CalendarID: ch.CalendarID, State: n.state, MessageNumber: n.number, Address: address, Queued: n.queued}
		var resp *http.Response
		if err == nil {
			resp, err = client.Do(req)
		}
		if err != nil {
			d.Err = err.Error()
		} else {
			io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
			resp.Body.Close()
			d.Status = resp.StatusCode
		}
		s.mu.Lock()
		d.At = s.push.now()
		s.push.deliveries = append(s.push.deliveries, d)
	}
	ch.queue = nil
	ch.sending = false
	s.push.inflight--
	if s.push.inflight == 0 {
		s.idle.Broadcast()
	}
}

// notificationRequest builds the POST of n to ch's address, with Google's
// headers. s.mu must be held.
func (s *Server) notificationRequest(ch *channel, n notification) (*http.Request, string, error) {
	address := ch.Address
	for _, f := range s.push.forwards {
		if rest, ok := strings.CutPrefix(address, f[0]); ok && (rest == "" || rest[0] == '/' || rest[0] == '?') {
			address = f[1] + rest
			break
		}
	}
	req, err := http.NewRequestWithContext(s.push.ctx, http.MethodPost, address, http.NoBody)
	if err != nil {
		return nil, address, err
	}
	h := req.Header
	h.Set("User-Agent", "APIs-Google; (+https://developers.google.com/webmasters/APIs-Google.html)")
	h.Set("X-Goog-Channel-ID", ch.ID)
	if ch.token != "" {
		h.Set("X-Goog-Channel-Token", ch.token)
	}
	h.Set("X-Goog-Channel-Expiration", ch.Expiration.UTC().Format(http.TimeFormat))
	h.Set("X-Goog-Resource-ID", ch.ResourceID)
	h.Set("X-Goog-Resource-URI", ch.resourceURI)
	h.Set("X-Goog-Resource-State", n.state)
	h.Set("X-Goog-Message-Number", strconv.FormatInt(n.number, 10))
	return req, address, nil
}

func sortChannels(chs []Channel) {
	slices.SortFunc(chs, func(a, b Channel) int { return strings.Compare(a.ID, b.ID) })
}
