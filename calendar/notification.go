package calendar

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strconv"
)

// The headers of a push notification, as "Push notifications" lists them
// (https://developers.google.com/workspace/calendar/api/guides/push):
// always X-Goog-Channel-ID, X-Goog-Message-Number, X-Goog-Resource-ID,
// X-Goog-Resource-State and X-Goog-Resource-URI; X-Goog-Channel-Expiration
// and X-Goog-Channel-Token when the channel has them (a Watch channel
// always has a token). A Calendar notification has no body.
const (
	headerChannelID     = "X-Goog-Channel-ID"
	headerChannelToken  = "X-Goog-Channel-Token"
	headerMessageNumber = "X-Goog-Message-Number"
	headerResourceID    = "X-Goog-Resource-ID"
	headerResourceState = "X-Goog-Resource-State"
)

// ResourceState is X-Goog-Resource-State: what a notification says of the
// watched events.
type ResourceState string

// The states of a notification.
const (
	// StateSync opens every channel: notifications are starting.
	StateSync ResourceState = "sync"
	// StateExists says the calendar's events changed.
	StateExists ResourceState = "exists"
	// StateNotExists says the watched resource was deleted.
	StateNotExists ResourceState = "not_exists"
)

// Notification is a push notification VerifyNotification accepted.
type Notification struct {
	// CalendarID is the calendar to sync: the channel's.
	CalendarID string
	// ChannelID is the channel it came on.
	ChannelID string
	// State is what it says; any of them calls for a sync of CalendarID
	// (a sync notification too, should a change have preceded it).
	State ResourceState
	// MessageNumber grows with each notification of a channel, not one
	// by one; the sync notification is 1.
	MessageNumber int64
}

// Refusal is why VerifyNotification refused a notification: a code for
// metrics and tests.
type Refusal string

// The refusals of VerifyNotification.
const (
	// RefusedChannel: no channel ID, or not the given channel's.
	RefusedChannel Refusal = "channel"
	// RefusedToken: the token is missing or wrong, or the channel has
	// none to compare with.
	RefusedToken Refusal = "token"
	// RefusedResource: the resource ID is not the channel's.
	RefusedResource Refusal = "resource"
	// RefusedState: the resource state is not sync, exists or not_exists.
	RefusedState Refusal = "state"
	// RefusedMessageNumber: the message number is missing or not a
	// positive integer.
	RefusedMessageNumber Refusal = "message_number"
)

// NotificationError is the error of VerifyNotification.
type NotificationError struct {
	// Reason says why, for machines.
	Reason Refusal
	// Header is the header at fault.
	Header string
}

func (e *NotificationError) Error() string {
	return "calendar: push notification refused: " + e.Header + " (" + string(e.Reason) + ")"
}

// NotificationChannelID returns the channel ID a notification claims, to
// look the channel up by. It proves nothing: verify the notification
// against the channel found.
func NotificationChannelID(h http.Header) string { return h.Get(headerChannelID) }

// VerifyNotification checks the headers of a push notification against
// ch, the channel its X-Goog-Channel-ID names, and returns the calendar to
// sync. It refuses, with a *NotificationError, anything but a notification
// with ch's ID, ch's token (both compared in constant time), ch's resource
// ID when ch has one, a state of sync, exists or not_exists, and a
// message number; each of those headers exactly once. A channel without a
// token (the zero Channel of a failed lookup, say) verifies nothing. It
// reads no clock: a channel past its expiration is the caller's to drop.
func VerifyNotification(h http.Header, ch Channel) (Notification, error) {
	refuse := func(r Refusal, header string) (Notification, error) {
		return Notification{}, &NotificationError{Reason: r, Header: header}
	}
	id, ok := single(h, headerChannelID)
	if !ok || ch.ID == "" || ch.CalendarID == "" || !equal(id, ch.ID) {
		return refuse(RefusedChannel, headerChannelID)
	}
	token, ok := single(h, headerChannelToken)
	if !ok || ch.Token == "" || !equal(token, ch.Token) {
		return refuse(RefusedToken, headerChannelToken)
	}
	resource, ok := single(h, headerResourceID)
	if !ok || (ch.ResourceID != "" && !equal(resource, ch.ResourceID)) {
		return refuse(RefusedResource, headerResourceID)
	}
	state, ok := single(h, headerResourceState)
	switch s := ResourceState(state); {
	case !ok, s != StateSync && s != StateExists && s != StateNotExists:
		return refuse(RefusedState, headerResourceState)
	}
	number, ok := single(h, headerMessageNumber)
	n, err := strconv.ParseInt(number, 10, 64)
	if !ok || err != nil || n < 1 {
		return refuse(RefusedMessageNumber, headerMessageNumber)
	}
	return Notification{CalendarID: ch.CalendarID, ChannelID: ch.ID, State: ResourceState(state), MessageNumber: n}, nil
}

// single returns the one value of header key, and false when there is
// none or more than one.
func single(h http.Header, key string) (string, bool) {
	v := h.Values(key)
	if len(v) != 1 {
		return "", false
	}
	return v[0], true
}

// equal compares a and b in time that depends on neither, their lengths
// included.
func equal(a, b string) bool {
	ha, hb := sha256.Sum256([]byte(a)), sha256.Sum256([]byte(b))
	return subtle.ConstantTimeCompare(ha[:], hb[:]) == 1
}
