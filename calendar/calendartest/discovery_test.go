package calendartest

import (
	"context"
	"errors"
	"net/http"
	"os"
	"strings"
	"testing"

	"google.golang.org/api/calendar/v3"
	"google.golang.org/api/googleapi"
	"google.golang.org/api/option"
)

func TestMain(m *testing.M) { os.Exit(Checked(m).Run()) }

// What Google's discovery document of calendar/v3 refuses, the emulator
// refuses, answering 400 as Google does and keeping the request for
// CheckRequests, through the real client: a parameter events.list does
// not define, a value outside its enum or minimum, a fields selector
// naming what an Events has not, and the parameters the description of
// syncToken says cannot go with it. The same requests spelt right pass.
func TestRequestsAreCheckedAgainstTheDiscoveryDocument(t *testing.T) {
	s := NewServer()
	defer s.Close()
	s.AddCalendar("a@example.com")
	svc, err := calendar.NewService(context.Background(), option.WithEndpoint(s.Endpoint()), option.WithHTTPClient(client(t, s)))
	if err != nil {
		t.Fatal(err)
	}
	list := func() *calendar.EventsListCall { return svc.Events.List("a@example.com").SingleEvents(true) }
	page, err := list().Do()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		call *calendar.EventsListCall
		opts []googleapi.CallOption
		want string // in the 400's message and CheckRequests; "" for none
	}{
		{"defined parameters", list().MaxResults(250).OrderBy("startTime").TimeMin("2026-12-01T00:00:00Z"), nil, ""},
		{"fields of Events", list().Fields("items(id,start,end,status),nextPageToken,nextSyncToken"), nil, ""},
		{"sync token and what may go with it", list().SyncToken(page.NextSyncToken).ShowDeleted(true).MaxResults(250), nil, ""},
		{"undefined parameter", list(), []googleapi.CallOption{googleapi.QueryParameter("singleEvent", "true")}, `Unknown name "singleEvent"`},
		{"value outside the enum", list(), []googleapi.CallOption{googleapi.QueryParameter("orderBy", "start")}, "Invalid value for: orderBy"},
		{"below the minimum", list().MaxResults(0), []googleapi.CallOption{googleapi.QueryParameter("maxResults", "0")}, "Invalid value for: maxResults"},
		{"misspelt field", list().Fields("items(id,summray)"), nil, "Invalid field selection items/summray"},
		{"field of another schema", list().Fields("nextPageToken,items/start/dateTim"), nil, "Invalid field selection items/start/dateTim"},
		{"sync token with timeMin", list().SyncToken(page.NextSyncToken).TimeMin("2026-12-01T00:00:00Z"), nil, "timeMin: the discovery document says calendar.events.list \"cannot be specified together with nextSyncToken\""},
		{"sync token with updatedMin", list().SyncToken(page.NextSyncToken).UpdatedMin("2026-12-01T00:00:00Z"), nil, "updatedMin: the discovery document says"},
		{"sync token with showDeleted=false", list().SyncToken(page.NextSyncToken), []googleapi.CallOption{googleapi.QueryParameter("showDeleted", "false")}, "showDeleted=false: the discovery document says"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.call.Do(tc.opts...)
			checked := s.CheckRequests()
			var gerr *googleapi.Error
			switch {
			case tc.want == "" && (err != nil || checked != nil):
				t.Errorf("list = %v, CheckRequests() = %v; want both nil", err, checked)
			case tc.want == "":
			case !errors.As(err, &gerr) || gerr.Code != http.StatusBadRequest:
				t.Errorf("list = %v, want 400", err)
			case checked == nil || !strings.Contains(checked.Error(), tc.want):
				t.Errorf("CheckRequests() = %v, want the request named with %q", checked, tc.want)
			}
		})
	}
}

// A path no method of the document has is 404, a verb it does not take
// there 405; the token endpoint and the like are not the API's.
func TestRequestsOutsideTheDocument(t *testing.T) {
	s := NewServer()
	defer s.Close()
	s.AddCalendar("a@example.com")
	c := client(t, s)
	for _, tc := range []struct {
		method, path string
		want         int
	}{
		{http.MethodGet, "calendars/a@example.com/event", http.StatusNotFound},
		{http.MethodDelete, "channels/stop", http.StatusMethodNotAllowed},
	} {
		req, _ := http.NewRequest(tc.method, s.Endpoint()+tc.path, nil)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s %s = %d, want %d", tc.method, tc.path, resp.StatusCode, tc.want)
		}
	}
	if err := s.CheckRequests(); err == nil || strings.Count(err.Error(), "\n") != 1 {
		t.Errorf("CheckRequests() = %v, want both requests named", err)
	}
}

// The list of what cannot go with a sync token, read from the document's
// own words, is the one the emulator refuses without a Checked runner.
func TestExcludedBySyncIsTheDocumentsList(t *testing.T) {
	spec, err := loadDiscovery()
	if err != nil {
		t.Fatal(err)
	}
	m, _ := spec.find(http.MethodGet, "calendars/x/events")
	got := strings.Join(excludedBySync(m.Parameters["syncToken"].Description), ",")
	if want := strings.Join(forbiddenWithSyncToken, ","); got != want {
		t.Errorf("excludedBySync(events.list syncToken) = %s, want %s", got, want)
	}
}
