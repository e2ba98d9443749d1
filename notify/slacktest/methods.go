package slacktest

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
)

// The handlers below run with s.mu unlocked; each takes it itself.

func (s *Server) postMessage(form url.Values) response {
	s.mu.Lock()
	defer s.mu.Unlock()
	channel := form.Get("channel")
	if code := s.canUse(channel); code != "" {
		return slackErr(code)
	}
	text, blocks := form.Get("text"), form.Get("blocks")
	if text == "" && blocks == "" {
		return slackErr("no_text")
	}
	text, truncated := truncate(text)
	msg := Message{Channel: channel, Text: text, User: BotUserID, BotID: BotID}
	if blocks != "" {
		var v []map[string]any
		if json.Unmarshal([]byte(blocks), &v) != nil {
			return slackErr("invalid_blocks")
		}
		if errs := checkBlocks(v); len(errs) > 0 {
			return invalidBlocks(errs)
		}
		s.recordType(kindBlocks, "chat.postMessage", blocks)
		msg.Blocks = json.RawMessage(blocks)
	}
	if raw := form.Get("metadata"); raw != "" {
		s.recordType(kindMetadata, "chat.postMessage", raw)
		var md Metadata
		if json.Unmarshal([]byte(raw), &md) != nil || md.EventType == "" {
			return slackErr("invalid_metadata_format")
		}
		msg.Metadata = &md
	}
	msg.Posted = s.now()
	msg.TS = s.nextTS(msg.Posted.UnixMicro())
	s.store(msg)
	body := map[string]any{"ok": true, "channel": channel, "ts": msg.TS, "message": messageJSON(msg, false)}
	if truncated {
		body["response_metadata"] = map[string]any{
			"warnings": []string{"message_truncated"},
			"messages": []string{fmt.Sprintf("[WARN] Your message was truncated but still posted. The `text` field accepts up to %d characters.", maxText)},
		}
	}
	return response{status: 200, posted: &msg, body: body}
}

// nextTS hands out Slack-style "seconds.micros" timestamps, unique and
// increasing even when the clock stands still.
func (s *Server) nextTS(micros int64) string {
	if micros <= s.lastTS {
		micros = s.lastTS + 1
	}
	s.lastTS = micros
	return fmt.Sprintf("%d.%06d", micros/1e6, micros%1e6)
}

// canUse says why the bot cannot post to or read channel, or "" if it can.
func (s *Server) canUse(channel string) string {
	if _, ok := s.dms[channel]; ok {
		return ""
	}
	for _, c := range s.channels {
		if c.ID != channel {
			continue
		}
		switch {
		case c.Archived:
			return "is_archived"
		case !c.Member && c.Private:
			return "channel_not_found" // private channels are invisible to outsiders
		case !c.Member:
			return "not_in_channel"
		}
		return ""
	}
	return "channel_not_found"
}

func (s *Server) open(form url.Values) response {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := strings.Split(form.Get("users"), ",")
	if form.Get("users") == "" || len(ids) != 1 {
		return slackErr("users_list_not_supplied")
	}
	if s.user("id:"+ids[0]) == nil {
		return slackErr("user_not_found")
	}
	id := "D" + strings.TrimLeft(ids[0], "UW")
	_, already := s.dms[id]
	s.dms[id] = ids[0]
	return ok(map[string]any{"no_op": already, "already_open": already, "channel": map[string]any{"id": id}})
}

func (s *Server) lookupByEmail(form url.Values) response {
	s.mu.Lock()
	defer s.mu.Unlock()
	email := form.Get("email")
	var u *User
	if email != "" {
		u = s.user("email:" + strings.ToLower(email))
	}
	if u == nil || u.Deactivated {
		return slackErr("users_not_found")
	}
	return ok(map[string]any{"user": userJSON(*u)})
}

func userJSON(u User) map[string]any {
	return map[string]any{
		"id": u.ID, "team_id": TeamID, "name": u.Name, "real_name": u.Name, "deleted": u.Deactivated, "is_bot": false,
		"profile": map[string]any{"email": u.Email, "real_name": u.Name, "display_name": u.Name},
	}
}

// info answers conversations.info as Slack does for a bot: the channel
// with is_member and is_archived, a DM it opened, or channel_not_found for
// an unknown channel and a private one it is not in.
func (s *Server) info(form url.Values) response {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := form.Get("channel")
	if user, isDM := s.dms[id]; isDM {
		return ok(map[string]any{"channel": map[string]any{"id": id, "is_im": true, "user": user, "is_open": true}})
	}
	for _, c := range s.channels {
		if c.ID != id {
			continue
		}
		if c.Private && !c.Member {
			return slackErr("channel_not_found")
		}
		return ok(map[string]any{"channel": channelJSON(c)})
	}
	return slackErr("channel_not_found")
}

func channelJSON(c Channel) map[string]any {
	return map[string]any{
		"id": c.ID, "name": c.Name, "name_normalized": c.Name, "is_channel": !c.Private,
		"is_group": c.Private, "is_im": false, "is_private": c.Private,
		"is_archived": c.Archived, "is_member": c.Member,
	}
}

// user returns the first user seeded with key ("id:U…" or "email:" and
// the lowercase address), or nil.
func (s *Server) user(key string) *User {
	if i, ok := s.userIndex[key]; ok {
		return &s.users[i]
	}
	return nil
}

// list answers conversations.list. Slack pages over every channel of the
// workspace and leaves out, page by page, those the request does not ask
// for or may not see, so a page may hold fewer channels than its limit,
// or none, before the end: "Fewer than the requested number of items may
// be returned, even if the end of the list hasn't been reached"
// (conversations.list, limit), and a client resolving a name in a large
// workspace found "the channels returned never reach the limit count, and
// progressively diminish, eventually returning no results across cursors"
// (slackapi/python-slack-sdk#1494). The emulator does the same: each page
// is cut from all the channels, then filtered.
func (s *Server) list(form url.Values) response {
	s.mu.Lock()
	defer s.mu.Unlock()
	types := form.Get("types")
	if types == "" {
		types = "public_channel"
	}
	page, next, code := paginate(len(s.channels), form, 100, 1000)
	if code != "" {
		return slackErr(code)
	}
	channels := []map[string]any{}
	for _, c := range s.channels[page[0]:page[1]] {
		kind := "public_channel"
		if c.Private {
			kind = "private_channel"
		}
		if !strings.Contains(types, kind) || (c.Archived && form.Get("exclude_archived") == "true") {
			continue
		}
		if c.Private && !c.Member {
			continue // a bot sees only the private channels it is in
		}
		channels = append(channels, channelJSON(c))
	}
	return ok(map[string]any{"channels": channels, "response_metadata": map[string]any{"next_cursor": next}})
}

func (s *Server) history(form url.Values) response {
	s.mu.Lock()
	defer s.mu.Unlock()
	channel := form.Get("channel")
	if code := s.canUse(channel); code != "" {
		return slackErr(code)
	}
	oldest, err1 := parseTS(form.Get("oldest"), 0)
	latest, err2 := parseTS(form.Get("latest"), max(s.now().UnixMicro(), s.lastTS))
	if err1 != nil || err2 != nil {
		return slackErr("invalid_ts_oldest")
	}
	inclusive := form.Get("inclusive") == "1" || form.Get("inclusive") == "true"
	metadata := form.Get("include_all_metadata") == "1" || form.Get("include_all_metadata") == "true"
	var in []Message
	for _, i := range s.byChannel[channel] {
		m := s.messages[i]
		ts, _ := parseTS(m.TS, 0)
		if ts < oldest || ts > latest || (!inclusive && (ts == oldest || ts == latest)) {
			continue
		}
		in = append(in, m)
	}
	sort.SliceStable(in, func(i, j int) bool { // newest first
		a, _ := parseTS(in[i].TS, 0)
		b, _ := parseTS(in[j].TS, 0)
		return a > b
	})
	page, next, code := paginate(len(in), form, 100, 999)
	if code != "" {
		return slackErr(code)
	}
	msgs := []map[string]any{}
	for _, m := range in[page[0]:page[1]] {
		msgs = append(msgs, messageJSON(m, metadata))
	}
	return ok(map[string]any{
		"messages": msgs, "has_more": next != "", "pin_count": 0,
		"response_metadata": map[string]any{"next_cursor": next},
	})
}

// messageJSON renders a stored message the way the Web API returns it.
func messageJSON(m Message, withMetadata bool) map[string]any {
	out := map[string]any{
		"type": "message", "user": m.User, "bot_id": m.BotID, "app_id": "A0APP00001",
		"text": m.Text, "ts": m.TS, "team": TeamID,
	}
	if m.Blocks != nil {
		out["blocks"] = m.Blocks
	}
	if m.Metadata != nil && withMetadata {
		out["metadata"] = m.Metadata
	}
	if !m.Edited.IsZero() {
		out["edited"] = map[string]any{"user": m.User, "ts": fmt.Sprintf("%d.%06d", m.Edited.Unix(), m.Edited.Nanosecond()/1000)}
	}
	return out
}

// paginate picks [from, to) out of n items from the cursor and limit
// parameters; the cursor is opaque to clients, as Slack's is.
func paginate(n int, form url.Values, defLimit, maxLimit int) (page [2]int, next, code string) {
	limit := defLimit
	if l := form.Get("limit"); l != "" {
		v, err := strconv.Atoi(l)
		if err != nil || v < 0 {
			return page, "", "invalid_limit"
		}
		if v > 0 {
			limit = min(v, maxLimit)
		}
	}
	from := 0
	if c := form.Get("cursor"); c != "" {
		raw, err := base64.StdEncoding.DecodeString(c)
		v, err2 := strconv.Atoi(strings.TrimPrefix(string(raw), "offset:"))
		if err != nil || err2 != nil || v < 0 || v > n {
			return page, "", "invalid_cursor"
		}
		from = v
	}
	to := min(from+limit, n)
	if to < n {
		next = base64.StdEncoding.EncodeToString([]byte("offset:" + strconv.Itoa(to)))
	}
	return [2]int{from, to}, next, ""
}

// parseTS reads a "seconds.micros" timestamp as microseconds.
func parseTS(ts string, def int64) (int64, error) {
	if ts == "" {
		return def, nil
	}
	sec, frac, _ := strings.Cut(ts, ".")
	s, err := strconv.ParseInt(sec, 10, 64)
	if err != nil {
		return 0, err
	}
	frac = (frac + "000000")[:6]
	f, err := strconv.ParseInt(frac, 10, 64)
	if err != nil {
		return 0, err
	}
	return s*1e6 + f, nil
}
