package calendartest

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"google.golang.org/api/calendar/v3"
)

// A listing serves the calendar's default reminders and what each event
// holds of its reminders, attendees (self, optional, resource),
// attachments and conference entry points, as the Events resource
// documents them, within the fields asked for; a reader of free/busy only
// sees none of it.
func TestListServesRemindersAttendeesAttachmentsAndConferences(t *testing.T) {
	s := NewServer()
	defer s.Close()
	const cal = "a@example.com"
	start := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	if err := s.SetDefaultReminders(cal, Popup(10), &calendar.EventReminder{Method: "email", Minutes: 60}); err != nil {
		t.Fatal(err)
	}
	ev := NewEvent("plan", "Plan", start, start.Add(time.Hour))
	ev.Reminders = &calendar.EventReminders{Overrides: []*calendar.EventReminder{Popup(0), Popup(2)}}
	ev.Attendees = []*calendar.EventAttendee{
		{Email: cal, Self: true, ResponseStatus: "accepted"},
		{Email: "b@example.com", Optional: true, ResponseStatus: "needsAction"},
		{Email: "room@resource.calendar.google.com", Resource: true, DisplayName: "Room 1", ResponseStatus: "accepted"},
	}
	ev.Attachments = []*calendar.EventAttachment{{FileUrl: "https://drive.google.com/file/d/1/view", Title: "Agenda"}}
	ev.ConferenceData = &calendar.ConferenceData{EntryPoints: []*calendar.EntryPoint{{EntryPointType: "phone", Uri: "tel:+1-555-0100", Label: "+1 555-0100", Pin: "1234"}}}
	if err := s.Put(cal, ev); err != nil {
		t.Fatal(err)
	}
	fields := "defaultReminders(method,minutes),items(id,reminders(useDefault,overrides(method,minutes)),attendees(self,optional,resource,displayName)," +
		"attachments(fileUrl,title),conferenceData(entryPoints(entryPointType,label,pin)))"
	code, page, eb := get(t, s, cal, url.Values{"fields": {fields}})
	if code != http.StatusOK || len(page.Items) != 1 {
		t.Fatalf("list = %d %+v %+v", code, page, eb)
	}
	got := page.Items[0]
	if len(page.DefaultReminders) != 2 || page.DefaultReminders[0].Minutes != 10 || page.DefaultReminders[0].Method != "popup" {
		t.Errorf("defaultReminders = %+v, want popup 10 and email 60", page.DefaultReminders)
	}
	if r := got.Reminders; r == nil || r.UseDefault || len(r.Overrides) != 2 || r.Overrides[0].Minutes != 0 || r.Overrides[1].Minutes != 2 {
		t.Errorf("reminders = %+v, want overrides at 0 and 2 minutes", r)
	}
	if a := got.Attendees; len(a) != 3 || !a[0].Self || !a[1].Optional || !a[2].Resource || a[2].DisplayName != "Room 1" || a[0].Email != "" {
		t.Errorf("attendees = %+v, want self, optional and a room, and only the fields asked for", a)
	}
	if len(got.Attachments) != 1 || got.Attachments[0].FileUrl == "" || got.ConferenceData == nil || got.ConferenceData.EntryPoints[0].Pin != "1234" {
		t.Errorf("attachments %+v, conference %+v", got.Attachments, got.ConferenceData)
	}

	s.ShareFreeBusy(cal, s.ServiceAccountEmail())
	if _, page, _ := get(t, s, cal, url.Values{"fields": {fields}}); len(page.DefaultReminders) != 0 || len(page.Items) != 1 || page.Items[0].Reminders != nil {
		t.Errorf("free/busy reader sees defaultReminders %+v, item %+v; want nothing but times", page.DefaultReminders, page.Items)
	}
}
