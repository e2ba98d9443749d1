package calendar

import (
	"context"
	"testing"

	"golang.org/x/oauth2"

	"github.com/meetingbot/meetingbot"
)

type oneAccount string

func (a oneAccount) Account(_ context.Context, user, calendarID string) (oauth2.TokenSource, string, error) {
	if calendarID != string(a) || user != "U1" {
		return nil, "", meetingbot.ErrNotConnected
	}
	return oauth2.StaticTokenSource(&oauth2.Token{AccessToken: "t"}), "c", nil
}

func (oneAccount) Refused(context.Context, string, error) {}
func (oneAccount) Renew(string)                           {}

// A connected person's reads count against their own per-user quota;
// the others' against the service account's.
func TestReaderIsTheConnectedAccount(t *testing.T) {
	s := &Source{cfg: Config{Accounts: oneAccount("Alice@example.com")}, creds: credentials{clientEmail: "bot@project.iam.gserviceaccount.com"}}
	for cal, want := range map[string]string{
		meetingbot.ReadAs("Alice@example.com", "U1"): "alice@example.com",
		meetingbot.ReadAs("Alice@example.com", "U2"): "bot@project.iam.gserviceaccount.com",
		"Alice@example.com":                          "bot@project.iam.gserviceaccount.com",
		"bob@example.com":                            "bot@project.iam.gserviceaccount.com",
	} {
		if got := s.reader(t.Context(), cal); got != want {
			t.Errorf("reader(%s) = %s, want %s", cal, got, want)
		}
	}
}
