package selfservice

// refusalFix says what an operator may have to do about the refusals
// counted in reasons, or "" when they need nothing of them. Slack's own
// requests, signed with the app's Signing Secret, are refused with
// RefusedSignature when SLACK_SIGNING_SECRET is another app's or mistyped:
// the refusals then name nothing the operator set, and /meetingbot fails
// in Slack with "dispatch_failed", so the log line says which variable to
// check. Stale timestamps from Slack mean this host's clock is off.
func refusalFix(reasons map[Refusal]int) string {
	switch {
	case reasons[RefusedSignature] > 0:
		return "if these are Slack's own requests (/meetingbot then fails in Slack with dispatch_failed), SLACK_SIGNING_SECRET is not this app's Signing Secret: " +
			"copy it from the app's Basic Information page (App Credentials) and restart the bot"
	case reasons[RefusedStale] > 0:
		return "if these are Slack's own requests, this host's clock is more than 5 minutes off: fix its time (NTP)"
	}
	return ""
}
