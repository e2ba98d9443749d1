package notify

// BotUserID returns the bot's own Slack user ID as auth.test reported it
// (Check asks once), or "" while Slack has not answered. Self-service
// mentions the bot with it ("/invite @meetingbot").
func (s *Slack) BotUserID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.self == nil {
		return ""
	}
	return s.self.UserID
}
