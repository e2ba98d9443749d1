package slacktest

import (
	"encoding/json"
	"net/url"
	"unicode/utf8"
)

// maxUpdateText is the longest text chat.update takes: Slack refuses a
// longer one with msg_too_long, where chat.postMessage cuts it.
const maxUpdateText = 4000

// update answers chat.update as Slack documents it: the message at ts in
// channel, posted by the bot, gets the new text; the new blocks when blocks
// is given ("[]" removes them), its old ones otherwise; the new metadata
// when metadata is given ("{}" removes it), its old one otherwise. Blocks
// are held to the same Block Kit limits as chat.postMessage.
func (s *Server) update(form url.Values) response {
	s.mu.Lock()
	defer s.mu.Unlock()
	channel, ts := form.Get("channel"), form.Get("ts")
	switch s.canUse(channel) {
	case "":
	case "is_archived":
		return slackErr("is_inactive") // "cannot be edited within a frozen, archived or deleted channel"
	case "not_in_channel":
		return slackErr("no_permission")
	default:
		return slackErr("channel_not_found")
	}
	i := -1
	for _, j := range s.byChannel[channel] {
		if s.messages[j].TS == ts {
			i = j
			break
		}
	}
	if i < 0 || ts == "" {
		return slackErr("message_not_found")
	}
	msg := s.messages[i]
	if msg.BotID != BotID && msg.User != BotUserID {
		return slackErr("cant_update_message")
	}
	text := form.Get("text")
	blocks, withBlocks := form.Get("blocks"), form.Has("blocks")
	if text == "" && (blocks == "" || blocks == "[]") {
		return slackErr("no_text")
	}
	if utf8.RuneCountInString(text) > maxUpdateText {
		return slackErr("msg_too_long")
	}
	if withBlocks {
		var v []map[string]any
		if json.Unmarshal([]byte(blocks), &v) != nil {
			return slackErr("invalid_blocks")
		}
		if errs := checkBlocks(v); len(errs) > 0 {
			return invalidBlocks(errs)
		}
		s.recordType(kindBlocks, "chat.update", blocks)
		msg.Blocks = json.RawMessage(blocks)
		if len(v) == 0 {
			msg.Blocks = nil
		}
	}
	if form.Has("metadata") {
		var md Metadata
		switch raw := form.Get("metadata"); {
		case raw == "{}":
			msg.Metadata = nil // Slack's way to remove it, not a MessageMetadata
		case json.Unmarshal([]byte(raw), &md) != nil || md.EventType == "":
			return slackErr("invalid_metadata_format")
		default:
			s.recordType(kindMetadata, "chat.update", raw)
			msg.Metadata = &md
		}
	}
	msg.Text = text
	msg.Edited = s.now()
	s.messages[i] = msg
	return ok(map[string]any{"channel": channel, "ts": ts, "text": text, "message": messageJSON(msg, false)})
}
