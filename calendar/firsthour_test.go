package calendar_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/calendar"
	"github.com/meetingbot/meetingbot/calendar/calendartest"
)

// withQuotaProject adds quota_project_id to authorized-user credentials,
// as gcloud auth application-default login writes it.
func withQuotaProject(t *testing.T, creds []byte, project string) []byte {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(creds, &m); err != nil {
		t.Fatal(err)
	}
	m["quota_project_id"] = project
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestQuotaProjectReachesTheCalendarAPI checks that the quota project of
// authorized-user credentials travels as X-Goog-User-Project, so that a
// Calendar API that bills user credentials to it answers.
func TestQuotaProjectReachesTheCalendarAPI(t *testing.T) {
	srv := newServer(t)
	put(t, srv, alice, "m1", window[0].Add(time.Hour), time.Hour)
	srv.RequireUserProject(true)
	src, _ := newSource(t, srv, func(c *calendar.Config) {
		c.CredentialsFile = ""
		c.CredentialsJSON = withQuotaProject(t, srv.AuthorizedUserJSON(), "my-calendar-project")
	})
	got, err := src.Meetings(context.Background(), sub(alice), window[0], window[1])
	if err != nil || !slices.Equal(ids(got), []string{"m1"}) {
		t.Fatalf("Meetings() = %v, %v; want [m1], nil", ids(got), err)
	}
	if got := srv.LastUserProject(alice); got != "my-calendar-project" {
		t.Errorf("X-Goog-User-Project = %q, want %q", got, "my-calendar-project")
	}
}

// TestNoQuotaProjectSaysHowToGetOne reads with user credentials that name
// no quota project, where the API wants one: the error says to use one's
// own OAuth client, with the gcloud command that works today, or to add
// quota_project_id. A service account's requests carry no header.
func TestNoQuotaProjectSaysHowToGetOne(t *testing.T) {
	srv := newServer(t)
	srv.AddCalendar(alice)
	srv.RequireUserProject(true)
	sa, _ := newSource(t, srv, nil)
	if _, err := sa.Meetings(context.Background(), sub(alice), window[0], window[1]); err != nil {
		t.Fatalf("Meetings() with a service account = %v, want nil", err)
	}
	if got := srv.LastUserProject(alice); got != "" {
		t.Errorf("X-Goog-User-Project of a service account = %q, want none", got)
	}

	user, _ := newSource(t, srv, func(c *calendar.Config) {
		c.CredentialsFile, c.CredentialsJSON = "", srv.AuthorizedUserJSON()
	})
	_, err := user.Meetings(context.Background(), sub(alice), window[0], window[1])
	for _, want := range []string{
		"the Google Calendar API is not enabled in the project these user credentials are billed to",
		"--client-id-file=client.json",
		`add "quota_project_id"`,
		"GOOGLE_CREDENTIALS_JSON",
	} {
		if !meetingbot.IsPermanent(err) || !strings.Contains(err.Error(), want) {
			t.Errorf("Meetings() error = %v, want permanent, containing %q", err, want)
		}
	}
}

// TestRefreshTokenHintUsesAWorkingCommand checks the fix for a refused
// refresh token: gcloud's own client can no longer ask for the Calendar
// scope, so the hint names the operator's own client, and the 7-day expiry
// of a consent screen in Testing.
func TestRefreshTokenHintUsesAWorkingCommand(t *testing.T) {
	want := "gcloud auth application-default login --client-id-file=client.json --scopes=https://www.googleapis.com/auth/calendar.readonly,https://www.googleapis.com/auth/cloud-platform"
	if calendar.UserCredentialsCommand != want {
		t.Errorf("UserCredentialsCommand = %q, want %q", calendar.UserCredentialsCommand, want)
	}
	srv := newServer(t)
	srv.AddCalendar(alice)
	srv.QueueTokenFaults(calendartest.InvalidGrant)
	src, _ := newSource(t, srv, func(c *calendar.Config) {
		c.CredentialsFile, c.CredentialsJSON = "", srv.AuthorizedUserJSON()
	})
	_, err := src.Meetings(context.Background(), sub(alice), window[0], window[1])
	if err == nil {
		t.Fatal("Meetings() error = nil, want the refresh token refused")
	}
	for _, want := range []string{want, "publish the app", "every 7 days"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Meetings() error = %v, want it to contain %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "login --scopes") {
		t.Errorf("Meetings() error = %v still suggests gcloud's own client, which Google blocks", err)
	}
}

// TestBusyOnlyCalendarIsSaidOnce shares a calendar with the service
// account as free/busy only (or a Workspace admin capped it there): the
// meetings still come, without titles, and the bot says why once, with
// the fix, until the details come back.
func TestBusyOnlyCalendarIsSaidOnce(t *testing.T) {
	srv := newServer(t)
	put(t, srv, alice, "m1", window[0].Add(time.Hour), time.Hour)
	srv.ShareFreeBusy(alice, srv.ServiceAccountEmail())
	var logs bytes.Buffer
	src, _ := newSource(t, srv, func(c *calendar.Config) {
		c.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	})
	for range 3 {
		got, err := src.Meetings(context.Background(), sub(alice), window[0], window[1])
		if err != nil || len(got) != 1 || got[0].Title != "(No title)" {
			t.Fatalf("Meetings() = %+v, %v; want m1 without a title", got, err)
		}
	}
	if n := strings.Count(logs.String(), "calendar shows only free/busy"); n != 1 {
		t.Errorf("free/busy warnings = %d, want 1:\n%s", n, logs.String())
	}
	for _, want := range []string{"level=WARN", "calendar=alice@example.com", "See all event details", "External sharing options", "GOOGLE_IMPERSONATE=true"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, logs.String())
		}
	}

	srv.Share(alice, srv.ServiceAccountEmail()) // all event details again
	got, err := src.Meetings(context.Background(), sub(alice), window[0], window[1])
	if err != nil || len(got) != 1 || got[0].Title == "(No title)" {
		t.Fatalf("Meetings() after sharing details = %+v, %v; want m1 with its title", got, err)
	}
	if !strings.Contains(logs.String(), "calendar shows event details again") {
		t.Errorf("log lacks the recovery:\n%s", logs.String())
	}
}
