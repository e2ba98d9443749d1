package notify

import (
	"context"
	"fmt"

	"github.com/slack-go/slack"
)

// Profile returns what Slack's users.info says of the user now: the
// profile email (empty without the users:read.email scope) and the IANA
// time zone. Retries and errors are Notify's; a deactivated user is a
// permanent error.
func (s *Slack) Profile(ctx context.Context, userID string) (email, tz string, err error) {
	var u *slack.User
	d := destination{raw: userID, user: userID}
	err = s.call(ctx, "users.info", policy{}, func(ctx context.Context) error {
		var err error
		u, err = s.api.GetUserInfoContext(ctx, userID)
		return err
	})
	if err != nil {
		return "", "", fmt.Errorf("notify: profile of %s: %w", userID, s.explain("users.info", d, err))
	}
	if u.Deleted {
		return "", "", fmt.Errorf("notify: profile of %s: %w", userID, s.explain("users.info", d, slack.SlackErrorResponse{Err: "user_disabled"}))
	}
	return u.Profile.Email, u.TZ, nil
}
