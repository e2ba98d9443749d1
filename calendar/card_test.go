package calendar_test

import (
	"slices"
	"testing"
	"time"

	gcal "google.golang.org/api/calendar/v3"

	"github.com/meetingbot/meetingbot"
	"github.com/meetingbot/meetingbot/calendar"
	"github.com/meetingbot/meetingbot/calendar/calendartest"
)

// An event's own popup reminders are its Reminders, read as Google lists
// them: its overrides of method popup, or its calendar's defaults when it
// uses them; email reminders are not reminders in Slack, and an event that
// turned its reminders off has none. A list, a sync and a get agree,
// except that a get cannot see the calendar's defaults and says so.
func TestMeetingsCarryTheirOwnPopupReminders(t *testing.T) {
	srv := newServer(t)
	src, _ := newSource(t, srv, nil)
	start := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	if err := srv.SetDefaultReminders(alice, calendartest.Popup(15), &gcal.EventReminder{Method: "email", Minutes: 60}); err != nil {
		t.Fatal(err)
	}
	own := calendartest.NewEvent("own", "Own", start, start.Add(time.Hour))
	own.Reminders = &gcal.EventReminders{Overrides: []*gcal.EventReminder{calendartest.Popup(10), calendartest.Popup(2), {Method: "email", Minutes: 30}, calendartest.Popup(0)}}
	def := calendartest.NewEvent("default", "Default", start, start.Add(time.Hour)) // useDefault, as Google creates one
	none := calendartest.NewEvent("none", "None", start, start.Add(time.Hour))
	none.Reminders = &gcal.EventReminders{UseDefault: false}
	for _, ev := range []*gcal.Event{own, def, none} {
		if err := srv.Put(alice, ev); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string][]time.Duration{
		"own":     {0, 2 * time.Minute, 10 * time.Minute},
		"default": {15 * time.Minute},
		"none":    nil,
	}
	sub := meetingbot.Subscription{ID: alice, CalendarID: alice, Offsets: []time.Duration{time.Minute}}
	ms, err := src.Meetings(t.Context(), sub, start.Add(-time.Hour), start)
	if err != nil {
		t.Fatal(err)
	}
	res, err := src.Sync(t.Context(), alice, "", calendar.Window{From: start.Add(-time.Hour), Horizon: start.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	synced := map[string]meetingbot.Meeting{}
	for _, c := range res.Changes {
		synced[c.ID] = c.Meeting
	}
	for _, m := range ms {
		if !slices.Equal(m.Reminders, want[m.ID]) || m.RemindersUnread {
			t.Errorf("Meetings: %s.Reminders = %v (unread %v), want %v", m.ID, m.Reminders, m.RemindersUnread, want[m.ID])
		}
		if got := synced[m.ID].Reminders; !slices.Equal(got, want[m.ID]) {
			t.Errorf("Sync: %s.Reminders = %v, want %v", m.ID, got, want[m.ID])
		}
	}
	if len(ms) != 3 {
		t.Errorf("Meetings = %d meetings, want 3", len(ms))
	}
	got, err := src.Meeting(t.Context(), sub, "own")
	if err != nil || !slices.Equal(got.Reminders, want["own"]) || got.RemindersUnread {
		t.Errorf("Meeting(own) = %v (unread %v), %v, want %v", got.Reminders, got.RemindersUnread, err, want["own"])
	}
	got, err = src.Meeting(t.Context(), sub, "default")
	if err != nil || !got.RemindersUnread {
		t.Errorf("Meeting(default) unread = %v, %v; want true: events.get carries no defaultReminders", got.RemindersUnread, err)
	}
}

// The emulator refuses reminders Google refuses.
func TestEmulatorRefusesRemindersGoogleRefuses(t *testing.T) {
	srv := newServer(t)
	start := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	for name, r := range map[string]*gcal.EventReminders{
		"overrides with useDefault": {UseDefault: true, Overrides: []*gcal.EventReminder{calendartest.Popup(5)}},
		"six overrides":             {Overrides: []*gcal.EventReminder{calendartest.Popup(1), calendartest.Popup(2), calendartest.Popup(3), calendartest.Popup(4), calendartest.Popup(5), calendartest.Popup(6)}},
		"over four weeks":           {Overrides: []*gcal.EventReminder{calendartest.Popup(40321)}},
		"sms":                       {Overrides: []*gcal.EventReminder{{Method: "sms", Minutes: 5}}},
	} {
		ev := calendartest.NewEvent("e", "E", start, start.Add(time.Hour))
		ev.Reminders = r
		if err := srv.Put(alice, ev); err == nil {
			t.Errorf("Put(%s) = nil, want an error", name)
		}
	}
}

// What the card shows comes from the event as the Events resource has it:
// the organizer, how many of the people invited accepted (rooms are not
// people), the rooms, the dial-in, the attachments, and a few lines of the
// description as plain text. Who else is there tells an event one has
// alone.
func TestMeetingsCarryWhatTheCardShows(t *testing.T) {
	srv := newServer(t)
	src, _ := newSource(t, srv, nil)
	start := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	ev := calendartest.NewEvent("card", "Planning", start, start.Add(time.Hour))
	ev.Attendees = []*gcal.EventAttendee{
		{Email: "organizer@example.com", Organizer: true, ResponseStatus: "accepted"},
		{Email: alice, Self: true, ResponseStatus: "needsAction"},
		{Email: "bob@example.com", ResponseStatus: "accepted", Optional: true},
		{Email: "carol@example.com", ResponseStatus: "declined"},
		{Email: "room-1@resource.calendar.google.com", DisplayName: "Room 4.01 (8)", Resource: true, ResponseStatus: "accepted"},
	}
	ev.ConferenceData = &gcal.ConferenceData{EntryPoints: []*gcal.EntryPoint{
		{EntryPointType: "video", Uri: "https://meet.google.com/abc-defg-hij"},
		{EntryPointType: "phone", Uri: "tel:+1-555-0100", Label: "+1 555-0100", Pin: "123456"},
	}}
	ev.Attachments = []*gcal.EventAttachment{{FileUrl: "https://drive.google.com/file/d/1/view", Title: "Agenda"}}
	ev.Description = "<p>Agenda:</p><ul><li>Q4 &amp; budget</li><li>Hiring</li><li>AOB</li></ul><p>Join: https://meet.google.com/abc-defg-hij</p>"
	alone := calendartest.NewEvent("alone", "Focus", start, start.Add(time.Hour))
	alone.Organizer = &gcal.EventOrganizer{Email: alice, Self: true}
	for _, e := range []*gcal.Event{ev, alone} {
		if err := srv.Put(alice, e); err != nil {
			t.Fatal(err)
		}
	}
	sub := meetingbot.Subscription{ID: alice, CalendarID: alice, Offsets: []time.Duration{time.Minute}}
	ms, err := src.Meetings(t.Context(), sub, start.Add(-time.Hour), start)
	if err != nil || len(ms) != 2 {
		t.Fatalf("Meetings = %d, %v; want 2", len(ms), err)
	}
	m, a := ms[1], ms[0]
	if m.ID != "card" {
		m, a = a, m
	}
	if m.Attendees != 4 || m.Accepted != 2 || m.Others != 3 || m.Alone() {
		t.Errorf("attendees %d, accepted %d, others %d, alone %v; want 4, 2, 3, false", m.Attendees, m.Accepted, m.Others, m.Alone())
	}
	if !slices.Equal(m.Rooms, []string{"Room 4.01 (8)"}) || m.DialIn != "+1 555-0100 PIN: 123456" {
		t.Errorf("rooms %q, dial-in %q", m.Rooms, m.DialIn)
	}
	if len(m.Attachments) != 1 || m.Attachments[0] != (meetingbot.Attachment{Title: "Agenda", URL: "https://drive.google.com/file/d/1/view"}) {
		t.Errorf("attachments %v", m.Attachments)
	}
	if want := "Agenda:\nQ4 & budget\nHiring"; m.Excerpt != want {
		t.Errorf("excerpt %q, want %q", m.Excerpt, want)
	}
	if !a.Alone() {
		t.Errorf("an event its owner organizes with nobody invited: Alone() = false, want true")
	}
}
