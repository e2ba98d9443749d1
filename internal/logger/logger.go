// Package logger builds the process's one *slog.Logger from LOG_LEVEL and
// LOG_FORMAT, so that the binary and the tests that read its lines write
// them alike.
package logger

import (
	"io"
	"log/slog"
)

// New returns a logger writing to w at level: text lines when format is
// "text", else JSON lines, in which a time.Duration reads as Go writes it
// ("1m30s"), not as the nanoseconds slog's JSON handler gives it
// (90000000000): the logs are for people first, and "in": 30000000000
// reads as nothing.
func New(level slog.Leveler, format string, w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	if format == "text" {
		return slog.New(slog.NewTextHandler(w, opts))
	}
	opts.ReplaceAttr = durationsAsText
	return slog.New(slog.NewJSONHandler(w, opts))
}

func durationsAsText(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindDuration {
		return slog.String(a.Key, a.Value.Duration().String())
	}
	return a
}
