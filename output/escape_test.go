package output_test

import (
	"testing"

	"github.com/upgradescope/upgradescope/output"
)

func TestEscape(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"leaves printable text and other scripts alone", "prod-eu-1 — ünïcode", "prod-eu-1 — ünïcode"},
		{"escapes a terminal's escape sequence", "\x1b[2J\x1b[H", `\x1b[2J\x1b[H`},
		{"escapes line breaks and tabs, which would break a row", "a\nb\tc\rd", `a\x0ab\x09c\x0dd`},
		{"escapes C1 controls, one of which starts a sequence alone", "\u009b2J\u0085", `\u009b2J\u0085`},
		{"escapes delete and bytes that are no UTF-8", "a\x7fb\xffc", `a\x7fb\xffc`},
		{"escapes bidirectional controls, which redraw a row in another order", "ok\u202eydaer\u2066x\u2069\u200f", `ok\u202eydaer\u2066x\u2069\u200f`},
		{"escapes line and paragraph separators", "a\u2028b\u2029c", `a\u2028b\u2029c`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := output.Escape(tc.in); got != tc.want {
				t.Errorf("Escape(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}
