package main

import "log/slog"

// durationsAsText writes a time.Duration as Go writes it ("1m30s"), not as
// the nanoseconds slog's JSON handler gives it (90000000000): the logs are
// for people first, and "in": 30000000000 reads as nothing.
func durationsAsText(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindDuration {
		return slog.String(a.Key, a.Value.Duration().String())
	}
	return a
}
