package calendar_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/calendar"
	"github.com/meetingbot/meetingbot/calendar/calendartest"
)

func TestServiceAccountReadsSharedCalendar(t *testing.T) {
	srv := newServer(t)
	put(t, srv, alice, "m1", window[0].Add(time.Hour), time.Hour)
	srv.Share(alice, srv.ServiceAccountEmail())
	src, _ := newSource(t, srv, nil)
	if got := src.ServiceAccountEmail(); got != srv.ServiceAccountEmail() {
		t.Errorf("ServiceAccountEmail() = %q, want %q", got, srv.ServiceAccountEmail())
	}
	if got := src.ServiceAccountClientID(); got != "101234567890123456789" { // the key's client_id
		t.Errorf("ServiceAccountClientID() = %q, want the key's client_id", got)
	}
	for range 2 {
		got, err := src.Meetings(context.Background(), sub(alice), window[0], window[1])
		if err != nil || !slices.Equal(ids(got), []string{"m1"}) {
			t.Fatalf("Meetings() = %v, %v; want [m1], nil", ids(got), err)
		}
	}
	// The token is cached across reads, and asked without a subject.
	if got := srv.Subjects(); !slices.Equal(got, []string{""}) {
		t.Errorf("Subjects() = %q, want one grant without sub", got)
	}
}

func TestImpersonationUsesCalendarAsSubject(t *testing.T) {
	srv := newServer(t)
	const bob = "bob@example.com"
	for _, cal := range []string{alice, bob} {
		put(t, srv, cal, "m-"+cal, window[0].Add(time.Hour), time.Hour)
		srv.Share(cal, cal) // readable by its owner only
	}
	src, _ := newSource(t, srv, func(c *calendar.Config) { c.Impersonate = true })
	for range 2 {
		for _, cal := range []string{alice, bob} {
			got, err := src.Meetings(context.Background(), sub(cal), window[0], window[1])
			if err != nil || !slices.Equal(ids(got), []string{"m-" + cal}) {
				t.Fatalf("Meetings(%s) = %v, %v; want [m-%s], nil", cal, ids(got), err, cal)
			}
		}
	}
	// One token per subject, each fetched once.
	if got := srv.Subjects(); !slices.Equal(got, []string{alice, bob}) {
		t.Errorf("Subjects() = %q, want %q", got, []string{alice, bob})
	}
}

func TestImpersonationRefused(t *testing.T) {
	srv := newServer(t)
	srv.AddCalendar(alice)
	srv.SetDelegation(false)
	src, _ := newSource(t, srv, func(c *calendar.Config) { c.Impersonate = true })
	_, err := src.Meetings(context.Background(), sub(alice), window[0], window[1])
	want := "calendar alice@example.com: impersonation refused: in the Google Workspace Admin console (Security > API controls > Domain-wide delegation) authorize client ID 101234567890123456789 for the scope https://www.googleapis.com/auth/calendar.readonly"
	if !meetingbot.IsPermanent(err) || !strings.Contains(err.Error(), want) {
		t.Errorf("Meetings() error = %v, want permanent, containing %q", err, want)
	}
}

func TestAuthorizedUserInline(t *testing.T) {
	srv := newServer(t)
	put(t, srv, alice, "m1", window[0].Add(time.Hour), time.Hour)
	srv.Share(alice, srv.AuthorizedUserEmail())
	src, _ := newSource(t, srv, func(c *calendar.Config) {
		c.CredentialsFile = ""
		c.CredentialsJSON = srv.AuthorizedUserJSON() // as GOOGLE_CREDENTIALS_JSON
	})
	if got := src.ServiceAccountEmail(); got != "" {
		t.Errorf("ServiceAccountEmail() = %q, want empty", got)
	}
	if got := src.ServiceAccountClientID(); got != "" {
		t.Errorf("ServiceAccountClientID() = %q, want empty", got)
	}
	got, err := src.Meetings(context.Background(), sub(alice), window[0], window[1])
	if err != nil || !slices.Equal(ids(got), []string{"m1"}) {
		t.Fatalf("Meetings() = %v, %v; want [m1], nil", ids(got), err)
	}

	// An access token revoked before its expiry: the 401 gets a new one.
	srv.RevokeTokens()
	tokens := srv.TokenRequests()
	got, err = src.Meetings(context.Background(), sub(alice), window[0], window[1])
	if err != nil || !slices.Equal(ids(got), []string{"m1"}) {
		t.Fatalf("Meetings() after RevokeTokens = %v, %v; want [m1], nil", ids(got), err)
	}
	if n := srv.TokenRequests() - tokens; n != 1 {
		t.Errorf("token requests after RevokeTokens = %d, want 1", n)
	}
}

func TestAuthorizedUserRefreshRevoked(t *testing.T) {
	srv := newServer(t)
	srv.AddCalendar(alice)
	srv.QueueTokenFaults(calendartest.InvalidGrant)
	src, _ := newSource(t, srv, func(c *calendar.Config) {
		c.CredentialsFile, c.CredentialsJSON = "", srv.AuthorizedUserJSON()
	})
	_, err := src.Meetings(context.Background(), sub(alice), window[0], window[1])
	for _, want := range []string{"refresh token refused (invalid_grant)", "GOOGLE_CREDENTIALS_JSON"} {
		if !meetingbot.IsPermanent(err) || !strings.Contains(err.Error(), want) {
			t.Errorf("Meetings() error = %v, want permanent, containing %q", err, want)
		}
	}
}

func TestTokenEndpointUnavailableIsRetried(t *testing.T) {
	srv := newServer(t)
	srv.AddCalendar(alice)
	srv.QueueTokenFaults(calendartest.TokenUnavailable)
	src, rec := newSource(t, srv, nil)
	if _, err := src.Meetings(context.Background(), sub(alice), window[0], window[1]); err != nil {
		t.Fatalf("Meetings() error = %v, want nil after a retry", err)
	}
	if got, want := rec.observed(), []string{"events.list:server_error", "events.list:ok"}; !slices.Equal(got, want) {
		t.Errorf("Observe calls = %v, want %v", got, want)
	}
}

func TestNewRejectsBadCredentials(t *testing.T) {
	srv := newServer(t)
	const secret = "s3cr3t-value"
	dir := t.TempDir()
	file := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name string
		cfg  calendar.Config
		want string
	}{
		{"none", calendar.Config{}, "no credentials: set GOOGLE_APPLICATION_CREDENTIALS to the path of a service-account key, authorized-user or workload identity federation (external_account) JSON"},
		{"both", calendar.Config{CredentialsFile: "x.json", CredentialsJSON: []byte("{}")}, "both GOOGLE_APPLICATION_CREDENTIALS and GOOGLE_CREDENTIALS_JSON are set"},
		{"missing file", calendar.Config{CredentialsFile: filepath.Join(dir, "nope.json")}, "GOOGLE_APPLICATION_CREDENTIALS: open"},
		{"not JSON", calendar.Config{CredentialsJSON: []byte(`{"private_key": ` + secret)}, "GOOGLE_CREDENTIALS_JSON: not valid JSON (syntax error at byte 17): want a service-account key, authorized-user or workload identity federation (external_account) JSON"},
		{"not JSON in file", calendar.Config{CredentialsFile: file("bad.json", secret)}, "GOOGLE_APPLICATION_CREDENTIALS: not valid JSON"},
		{"JSON array", calendar.Config{CredentialsJSON: []byte(`["` + secret + `"]`)}, "GOOGLE_CREDENTIALS_JSON: not a credentials JSON object: want a service-account key, authorized-user or workload identity federation (external_account) JSON"},
		{"unknown type", calendar.Config{CredentialsJSON: []byte(`{"type": "api_key", "audience": "` + secret + `"}`)}, `credentials type "api_key" is not supported`},
		{"federation incomplete", calendar.Config{CredentialsJSON: []byte(`{"type": "external_account", "audience": "` + secret + `"}`)}, `external_account credentials lack [subject_token_type token_url credential_source]`},
		{"service account without key", calendar.Config{CredentialsJSON: []byte(`{"type": "service_account", "client_email": "a@b.iam.gserviceaccount.com"}`)}, "service_account credentials lack [private_key]"},
		{"service account with a bad key", calendar.Config{CredentialsJSON: []byte(`{"type": "service_account", "client_email": "a@b", "private_key": "-----BEGIN PRIVATE KEY-----\n` + secret + `\n-----END PRIVATE KEY-----\n"}`)}, "private_key is not a PEM-encoded RSA private key"},
		{"authorized user without refresh token", calendar.Config{CredentialsJSON: []byte(`{"type": "authorized_user", "client_id": "x", "client_secret": "` + secret + `"}`)}, "authorized_user credentials lack [refresh_token]"},
		{"impersonating an authorized user", calendar.Config{CredentialsJSON: srv.AuthorizedUserJSON(), Impersonate: true}, "GOOGLE_IMPERSONATE=true needs a service-account key"},
		{"bad endpoint", calendar.Config{CredentialsJSON: srv.ServiceAccountJSON(), Endpoint: "localhost:8080"}, `GOOGLE_API_ENDPOINT "localhost:8080" is not an http(s) URL`},
	}
	for _, tt := range tests {
		_, err := calendar.New(context.Background(), tt.cfg)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: New() error = %v, want it to contain %q", tt.name, err, tt.want)
			continue
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("%s: New() error = %q quotes the secret", tt.name, err)
		}
	}
}
