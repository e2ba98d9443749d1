package slacktest

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// The methods and endpoints self-service from Slack uses: users.info,
// views.publish, chat.postEphemeral, the response_url Slack hands out with
// every slash command and interaction, and Socket Mode (socketmode.go).

// Profile is what users.info tells about a seeded user beyond User.
type Profile struct {
	// TZ is the user's IANA zone; "" reports Slack's default,
	// America/Los_Angeles.
	TZ                         string
	Admin, Owner, PrimaryOwner bool
	Restricted, Bot, Deleted   bool
	// HideEmail leaves profile.email out, as Slack does for a token
	// without users:read.email.
	HideEmail bool
}

// View is one Home tab published with views.publish.
type View struct {
	User      string
	ID        string
	Hash      string
	Blocks    json.RawMessage
	Published time.Time
}

// Ephemeral is one message posted with chat.postEphemeral.
type Ephemeral struct {
	Channel string
	User    string
	Text    string
	Blocks  json.RawMessage // nil when the call had none
	Posted  time.Time
}

// Response is one message posted to a response_url.
type Response struct {
	URL             string
	ResponseType    string // "ephemeral", "in_channel" or ""
	Text            string
	Blocks          json.RawMessage
	ReplaceOriginal bool
	DeleteOriginal  bool
	Posted          time.Time
}

// Slack accepts up to responseURLUses messages on one response_url, within
// responseURLLife of its creation.
const (
	responseURLUses = 5
	responseURLLife = 30 * time.Minute
	maxHomeBlocks   = 100
)

// extension is the state of the methods in this file and in socketmode.go,
// guarded by Server.mu.
type extension struct {
	profiles   map[string]Profile
	views      []View
	ephemerals []Ephemeral
	responses  []Response
	urls       map[string]*responseURL // by path
	socket     socketHub
	oauth      oauthState // people's own users, see oauth.go
}

type responseURL struct {
	created time.Time
	uses    int
}

// registerExtension adds the endpoints that are not Web API methods.
func (s *Server) registerExtension(mux *http.ServeMux) {
	s.ext.profiles = map[string]Profile{}
	s.ext.urls = map[string]*responseURL{}
	mux.HandleFunc("/response/", s.serveResponseURL)
	mux.HandleFunc("/api/apps.connections.open", s.openConnection)
	mux.HandleFunc("/link/", s.serveSocket)
	s.registerOAuth(mux)
}

// dispatchExtension answers the Web API methods of this file.
func (s *Server) dispatchExtension(method string, form url.Values) (response, bool) {
	switch method {
	case "users.info":
		return s.usersInfo(form), true
	case "views.publish":
		return s.publishView(form), true
	case "chat.postEphemeral":
		return s.postEphemeral(form), true
	case "bots.info":
		return s.botsInfo(form), true
	}
	return response{}, false
}

// SetProfile sets what users.info reports about a seeded user.
func (s *Server) SetProfile(userID string, p Profile) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ext.profiles[userID] = p
}

// usersInfo answers users.info: user_not_found for an unknown ID, else the
// user with its Profile, "deleted" when deactivated.
func (s *Server) usersInfo(form url.Values) response {
	s.mu.Lock()
	defer s.mu.Unlock()
	id := form.Get("user")
	u := s.user("id:" + id)
	if id == "" || u == nil {
		return slackErr("user_not_found")
	}
	p := s.ext.profiles[id]
	tz, label, offset := p.TZ, "", 0
	if tz == "" {
		tz = "America/Los_Angeles"
	}
	if loc, err := time.LoadLocation(tz); err == nil {
		label, offset = s.now().In(loc).Zone()
	}
	profile := map[string]any{"real_name": u.Name, "display_name": u.Name, "real_name_normalized": u.Name, "display_name_normalized": u.Name}
	if !p.HideEmail {
		profile["email"] = u.Email
	}
	return ok(map[string]any{"user": map[string]any{
		"id": u.ID, "team_id": TeamID, "name": u.Name, "real_name": u.Name, "deleted": p.Deleted || u.Deactivated,
		"color": "9f69e7", "tz": tz, "tz_label": label, "tz_offset": offset,
		"is_admin": p.Admin, "is_owner": p.Owner, "is_primary_owner": p.PrimaryOwner,
		"is_restricted": p.Restricted, "is_ultra_restricted": false, "is_bot": p.Bot, "is_app_user": false,
		"updated": s.now().Unix(), "is_email_confirmed": !p.HideEmail, "profile": profile,
	}})
}

var timeOfDay = regexp.MustCompile(`^([01][0-9]|2[0-3]):[0-5][0-9]$`)

func (s *Server) publishView(form url.Values) response {
	s.mu.Lock()
	defer s.mu.Unlock()
	userID := form.Get("user_id")
	if userID == "" {
		return slackErr("invalid_arguments")
	}
	if s.user("id:"+userID) == nil {
		return slackErr("user_not_found")
	}
	var view struct {
		Type   string           `json:"type"`
		Blocks []map[string]any `json:"blocks"`
	}
	if err := json.Unmarshal([]byte(form.Get("view")), &view); err != nil || view.Type != "home" {
		return slackErr("invalid_arguments")
	}
	var current *View
	for i := range s.ext.views {
		if s.ext.views[i].User == userID {
			current = &s.ext.views[i]
		}
	}
	if h := form.Get("hash"); h != "" && (current == nil || current.Hash != h) {
		return slackErr("hash_conflict")
	}
	if errs := checkView(view.Blocks); len(errs) > 0 {
		return invalidBlocks(errs)
	}
	s.recordType(kindHome, "views.publish", form.Get("view"))
	blocks, _ := json.Marshal(view.Blocks)
	v := View{User: userID, ID: "V" + strings.TrimLeft(userID, "UW"), Blocks: blocks, Published: s.now()}
	v.Hash = fmt.Sprintf("%d.%s", v.Published.Unix(), randomHex(4))
	s.ext.views = append(s.ext.views, v)
	return ok(map[string]any{"view": map[string]any{
		"id": v.ID, "team_id": TeamID, "type": "home", "blocks": json.RawMessage(blocks),
		"private_metadata": "", "callback_id": "", "state": map[string]any{"values": map[string]any{}},
		"hash": v.Hash, "title": map[string]any{"type": "plain_text", "text": "View Title"},
		"clear_on_close": false, "notify_on_close": false, "close": nil, "submit": nil,
		"previous_view_id": nil, "root_view_id": v.ID, "app_id": "A0APP00001", "external_id": "",
		"app_installed_team_id": TeamID, "bot_id": BotID,
	}})
}

// checkView checks a Home tab's blocks as Slack does: messages' limits,
// up to 100 blocks, and the select, time picker and checkbox elements a
// Home tab uses.
func checkView(blocks []map[string]any) []string {
	var errs []string
	if len(blocks) > maxHomeBlocks {
		errs = append(errs, fmt.Sprintf("no more than %d items allowed [json-pointer:/view/blocks]", maxHomeBlocks))
	}
	for _, e := range checkBlocks(blocks) {
		if !strings.HasSuffix(e, "[json-pointer:/blocks]") { // the 50-block cap is for messages
			errs = append(errs, e)
		}
	}
	check := func(ptr string, el map[string]any) {
		switch el["type"] {
		case "static_select":
			opts, _ := el["options"].([]any)
			if len(opts) == 0 || len(opts) > 100 {
				errs = append(errs, "must provide between 1 and 100 options [json-pointer:"+ptr+"/options]")
			}
			for j, o := range opts {
				om, _ := o.(map[string]any)
				text, _ := om["text"].(map[string]any)
				if t, _ := text["text"].(string); t == "" || len(t) > 75 {
					errs = append(errs, fmt.Sprintf("must be between 1 and 75 characters [json-pointer:%s/options/%d/text/text]", ptr, j))
				}
				if v, _ := om["value"].(string); v == "" || len(v) > 150 {
					errs = append(errs, fmt.Sprintf("must be between 1 and 150 characters [json-pointer:%s/options/%d/value]", ptr, j))
				}
			}
		case "checkboxes":
			// Block Kit reference, checkboxes element: options, "A
			// maximum of 10 options are allowed"; initial_options, "must
			// exactly match one or more of the options"; an option's
			// text, "Maximum length for the text in this field is 75
			// characters", its value 150.
			opts, _ := el["options"].([]any)
			if len(opts) == 0 || len(opts) > 10 {
				errs = append(errs, "must provide between 1 and 10 options [json-pointer:"+ptr+"/options]")
			}
			values := map[string]bool{}
			for j, o := range opts {
				om, _ := o.(map[string]any)
				text, _ := om["text"].(map[string]any)
				if t, _ := text["text"].(string); t == "" || len(t) > 75 {
					errs = append(errs, fmt.Sprintf("must be between 1 and 75 characters [json-pointer:%s/options/%d/text/text]", ptr, j))
				}
				v, _ := om["value"].(string)
				if v == "" || len(v) > 150 {
					errs = append(errs, fmt.Sprintf("must be between 1 and 150 characters [json-pointer:%s/options/%d/value]", ptr, j))
				}
				values[v] = true
			}
			initial, _ := el["initial_options"].([]any)
			for j, o := range initial {
				om, _ := o.(map[string]any)
				if v, _ := om["value"].(string); !values[v] {
					errs = append(errs, fmt.Sprintf("must match one of the options [json-pointer:%s/initial_options/%d]", ptr, j))
				}
			}
		case "timepicker":
			if t, ok := el["initial_time"]; ok {
				if s, _ := t.(string); !timeOfDay.MatchString(s) {
					errs = append(errs, "must be a time in HH:mm format [json-pointer:"+ptr+"/initial_time]")
				}
			}
		}
	}
	for i, b := range blocks {
		ptr := fmt.Sprintf("/view/blocks/%d", i)
		if acc, ok := b["accessory"].(map[string]any); ok {
			check(ptr+"/accessory", acc)
		}
		els, _ := b["elements"].([]any)
		for j, el := range els {
			if m, ok := el.(map[string]any); ok && b["type"] == "actions" {
				check(fmt.Sprintf("%s/elements/%d", ptr, j), m)
			}
		}
	}
	return errs
}

// HomeView returns the Home tab last published for a user.
func (s *Server) HomeView(userID string) (View, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.ext.views) - 1; i >= 0; i-- {
		if s.ext.views[i].User == userID {
			return s.ext.views[i], true
		}
	}
	return View{}, false
}

// HomeViews returns every Home tab published so far, oldest first.
func (s *Server) HomeViews() []View {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]View(nil), s.ext.views...)
}

func (s *Server) postEphemeral(form url.Values) response {
	s.mu.Lock()
	defer s.mu.Unlock()
	channel, userID := form.Get("channel"), form.Get("user")
	if code := s.canUse(channel); code != "" {
		return slackErr(code)
	}
	if s.user("id:"+userID) == nil {
		return slackErr("user_not_found")
	}
	text, blocks := form.Get("text"), form.Get("blocks")
	if text == "" && blocks == "" {
		return slackErr("no_text")
	}
	e := Ephemeral{Channel: channel, User: userID, Text: text, Posted: s.now()}
	if blocks != "" {
		var v []map[string]any
		if json.Unmarshal([]byte(blocks), &v) != nil {
			return slackErr("invalid_blocks")
		}
		if errs := checkBlocks(v); len(errs) > 0 {
			return invalidBlocks(errs)
		}
		s.recordType(kindBlocks, "chat.postEphemeral", blocks)
		e.Blocks = json.RawMessage(blocks)
	}
	s.ext.ephemerals = append(s.ext.ephemerals, e)
	return ok(map[string]any{"message_ts": s.nextTS(e.Posted.UnixMicro())})
}

// Ephemerals returns every chat.postEphemeral message, oldest first.
func (s *Server) Ephemerals() []Ephemeral {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Ephemeral(nil), s.ext.ephemerals...)
}

// ResponseURL mints a response_url on this server, as Slack puts one in
// each slash command and interaction payload. It takes up to 5 messages
// within 30 minutes of the server clock.
func (s *Server) ResponseURL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	path := fmt.Sprintf("/response/%s/%d/%s", TeamID, len(s.ext.urls)+1, randomHex(12))
	s.ext.urls[path] = &responseURL{created: s.now()}
	return s.base + path
}

// Responses returns every message posted to a response_url, oldest first.
func (s *Server) Responses() []Response {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Response(nil), s.ext.responses...)
}

func (s *Server) serveResponseURL(w http.ResponseWriter, r *http.Request) {
	answer := func(status int, body map[string]any) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(body)
	}
	if r.Method != http.MethodPost {
		answer(http.StatusMethodNotAllowed, map[string]any{"ok": false, "error": "method_not_allowed"})
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	var msg struct {
		ResponseType    string          `json:"response_type"`
		Text            string          `json:"text"`
		Blocks          json.RawMessage `json:"blocks"`
		ReplaceOriginal bool            `json:"replace_original"`
		DeleteOriginal  bool            `json:"delete_original"`
	}
	if err != nil || json.Unmarshal(body, &msg) != nil {
		answer(http.StatusBadRequest, map[string]any{"ok": false, "error": "invalid_payload"})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	u := s.ext.urls[r.URL.Path]
	switch {
	case u == nil:
		answer(http.StatusNotFound, map[string]any{"ok": false, "error": "invalid_url"})
		return
	case s.now().Sub(u.created) > responseURLLife:
		answer(http.StatusNotFound, map[string]any{"ok": false, "error": "expired_url"})
		return
	case u.uses >= responseURLUses:
		answer(http.StatusNotFound, map[string]any{"ok": false, "error": "used_url"})
		return
	case msg.Text == "" && len(msg.Blocks) == 0 && !msg.DeleteOriginal:
		answer(http.StatusBadRequest, map[string]any{"ok": false, "error": "no_text"})
		return
	}
	if len(msg.Blocks) > 0 {
		var v []map[string]any
		if json.Unmarshal(msg.Blocks, &v) != nil {
			answer(http.StatusBadRequest, map[string]any{"ok": false, "error": "invalid_blocks"})
			return
		}
		if errs := checkBlocks(v); len(errs) > 0 {
			answer(http.StatusBadRequest, invalidBlocks(errs).body)
			return
		}
		s.recordType(kindBlocks, "response_url", string(msg.Blocks))
	}
	u.uses++
	s.ext.responses = append(s.ext.responses, Response{
		URL: s.base + r.URL.Path, ResponseType: msg.ResponseType, Text: msg.Text, Blocks: msg.Blocks,
		ReplaceOriginal: msg.ReplaceOriginal, DeleteOriginal: msg.DeleteOriginal, Posted: s.now(),
	})
	answer(http.StatusOK, map[string]any{"ok": true})
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
