package slacktest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// What Slack sends an app's request URLs, built as Slack builds it: the
// demo and the tests act as Slack with these, against the bot's own
// /slack/commands, /slack/interactivity and /slack/events.

// SlashCommand is the form Slack posts when user types "/meetingbot text"
// in channel (https://api.slack.com/interactivity/slash-commands), with
// responseURL as the URL the reply may follow on.
func SlashCommand(user, userName, channel, channelName, text, responseURL string) url.Values {
	return url.Values{
		"token": {"gIkuvaNzQIHg97ATvDxqgjtO"}, "team_id": {TeamID}, "team_domain": {"example"},
		"channel_id": {channel}, "channel_name": {channelName}, "user_id": {user}, "user_name": {userName},
		"command": {"/meetingbot"}, "text": {text}, "api_app_id": {AppID},
		"is_enterprise_install": {"false"}, "response_url": {responseURL},
		"trigger_id": {"13345224609.738474920.8088930838d88f008e0"},
	}
}

// PostSigned posts body to url as Slack does: with X-Slack-Request-Timestamp
// and X-Slack-Signature under secret, and returns the answer's status and
// body.
func PostSigned(ctx context.Context, url, contentType string, body []byte, secret string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", contentType)
	Sign(req.Header, body, secret, time.Now())
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, b, err
}

// Type types "/meetingbot text" as user in channel against the bot at addr
// (host:port), signed with secret, and returns the reply the person sees:
// the answer's text, or the message that followed on s's response_url when
// the answer was "One moment…".
func (s *Server) Type(ctx context.Context, addr, secret, user, userName, channel, channelName, text string) (string, error) {
	respURL := s.ResponseURL()
	form := SlashCommand(user, userName, channel, channelName, text, respURL)
	status, body, err := PostSigned(ctx, "http://"+addr+"/slack/commands", "application/x-www-form-urlencoded", []byte(form.Encode()), secret)
	if err != nil {
		return "", fmt.Errorf("/meetingbot %s: %w", text, err)
	}
	var reply struct {
		ResponseType string `json:"response_type"`
		Text         string `json:"text"`
	}
	if status != http.StatusOK || json.Unmarshal(body, &reply) != nil {
		return "", fmt.Errorf("/meetingbot %s: %d %s", text, status, body)
	}
	if !strings.HasPrefix(reply.Text, "One moment") {
		return reply.Text, nil
	}
	for {
		for _, r := range s.Responses() {
			if r.URL == respURL {
				return r.Text, nil
			}
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("/meetingbot %s: no reply on the response_url: %w", text, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}
