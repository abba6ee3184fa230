package retryafter

import (
	"testing"
	"time"
)

func TestParseReadsSecondsAndDatesWithinTheLimit(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name, v string
		want    time.Duration
		ok      bool
	}{
		{"seconds", "120", 2 * time.Minute, true},
		{"seconds past the limit are capped", "86400", time.Hour, true},
		{"a number that would overflow is capped", "9223372036854775807", time.Hour, true},
		{"zero", "0", 0, true},
		{"a date ahead", "Mon, 30 Nov 2026 12:05:00 GMT", 5 * time.Minute, true},
		{"a date already past", "Mon, 30 Nov 2026 11:00:00 GMT", 0, true},
		{"absent", "", 0, false},
		{"unreadable", "soon", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := Parse(tt.v, now, time.Hour)
			if got != tt.want || ok != tt.ok {
				t.Errorf("Parse(%q) = %s, %v; want %s, %v", tt.v, got, ok, tt.want, tt.ok)
			}
		})
	}
}
