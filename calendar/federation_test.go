package calendar_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot/calendar"
)

// Workload identity federation: the platform's token is exchanged at the
// STS and the service account the file names is impersonated, through
// the Google library; calendars are shared with that account.
func TestExternalAccountCredentials(t *testing.T) {
	srv := newServer(t)
	start := time.Now().Add(time.Hour).Truncate(time.Minute)
	put(t, srv, "team@example.com", "t1", start, 30*time.Minute)
	srv.Share("team@example.com", srv.ServiceAccountEmail())
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte("eyJhbGciOiJSUzI1NiJ9.platform-token.sig"), 0o600); err != nil {
		t.Fatal(err)
	}
	config := srv.ExternalAccountJSON(tokenFile, "eyJhbGciOiJSUzI1NiJ9.platform-token.sig")
	src, err := calendar.New(t.Context(), calendar.Config{CredentialsJSON: config, Endpoint: srv.Endpoint(), HTTPClient: srv.Client()})
	if err != nil {
		t.Fatalf("New with external_account credentials: %v", err)
	}
	if got := src.ServiceAccountEmail(); got != srv.ServiceAccountEmail() {
		t.Errorf("ServiceAccountEmail() = %q, want the impersonated %q", got, srv.ServiceAccountEmail())
	}
	got, err := src.Meetings(t.Context(), sub("team@example.com"), time.Now(), start.Add(time.Hour))
	if err != nil || len(got) != 1 {
		t.Fatalf("Meetings(team) = %v, %v; want its meeting", ids(got), err)
	}

	if _, err := calendar.New(t.Context(), calendar.Config{CredentialsJSON: config, Endpoint: srv.Endpoint(), Impersonate: true}); err == nil {
		t.Error("New with external_account and GOOGLE_IMPERSONATE=true: no error")
	}
}
