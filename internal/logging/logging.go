// Package logging builds the structured logger long-running commands (agent, serve) share:
// one line per event, as logfmt text or JSON.
package logging

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
)

// Formats and levels, as help texts and completion list them.
var (
	Formats = []string{"text", "json"}
	Levels  = []string{"debug", "info", "warn", "error"}
)

// Errors New wraps, so a caller can name its own flag.
var (
	ErrLevel  = errors.New("unknown log level")
	ErrFormat = errors.New("unknown log format")
)

// New returns a logger writing to w in format ("text" or "json") at level ("debug", "info",
// "warn" or "error").
func New(w io.Writer, format, level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("%w %q: want debug, info, warn or error", ErrLevel, level)
	}
	ho := &slog.HandlerOptions{Level: l}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(w, ho)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, ho)), nil
	}
	return nil, fmt.Errorf("%w %q: want text or json", ErrFormat, format)
}
