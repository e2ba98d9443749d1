package slacktest

import "net/url"

// botsInfo answers bots.info (https://api.slack.com/methods/bots.info):
// for bot=BotID, the bot with its app_id (AppID) and user_id (BotUserID),
// which is how an app learns its own app ID, auth.test documenting none
// ("Use the app_id field to identify whether a bot belongs to your Slack
// app"); for any other ID, bot_not_found, the documented error ("When no
// bot can be found, it returns an error").
func (s *Server) botsInfo(form url.Values) response {
	if form.Get("bot") != BotID {
		return slackErr("bot_not_found")
	}
	return ok(map[string]any{"bot": map[string]any{
		"id": BotID, "deleted": false, "name": BotName, "updated": 1449272004,
		"app_id": AppID, "user_id": BotUserID,
		"icons": map[string]any{"image_36": "https://a.slack-edge.com/36.png", "image_48": "https://a.slack-edge.com/48.png", "image_72": "https://a.slack-edge.com/72.png"},
	}})
}
