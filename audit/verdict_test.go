package audit

import (
	"strings"
	"testing"
)

// A subscription whose calendar could not be read was not audited: the
// table says so and does not claim its reminders were delivered.
func TestVerdictSaysWhatWasNotAudited(t *testing.T) {
	ok := SubReport{Subscription: "alice@example.com", CountedFrom: FromSlack}
	unread := SubReport{Subscription: "team@example.com=#eng", Error: "read calendar team@example.com: not found or not shared"}
	for _, tt := range []struct {
		subs []SubReport
		want string
	}{
		{[]SubReport{ok}, "Every expected reminder was delivered once."},
		{[]SubReport{ok, unread}, "1 of 2 subscriptions could not be audited (see above); in the others, every expected reminder was delivered once."},
		{[]SubReport{unread}, "No subscription could be audited (see above): nothing is known of their reminders."},
	} {
		var b strings.Builder
		if err := (Report{Subscriptions: tt.subs}).WriteTable(&b); err != nil {
			t.Fatal(err)
		}
		out := strings.TrimSpace(b.String())
		if last := out[strings.LastIndex(out, "\n")+1:]; last != tt.want {
			t.Errorf("WriteTable(%d subscriptions, %d unread) ends %q, want %q", len(tt.subs), strings.Count(out, "not audited:"), last, tt.want)
		}
		if len(tt.subs) > 1 || tt.subs[0].Error != "" {
			if !strings.Contains(out, "team@example.com=#eng: not audited: read calendar team@example.com: not found or not shared") {
				t.Errorf("WriteTable does not say what was not audited:\n%s", out)
			}
		}
	}
}
