package mcpserver

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzClipBoundsWhatJSONWrites holds clip to encoding/json, the reference for what an
// answer carries: a clipped string takes at most n bytes as JSON writes it, is s when s
// does, else the longest prefix of s (on a rune boundary) that fits with the mark.
func FuzzClipBoundsWhatJSONWrites(f *testing.F) {
	for _, s := range []string{"", "plain title", strings.Repeat("<\"&>\\", 100), "naïve café ünïcode " + strings.Repeat("日本", 80),
		"\u2028\u2029\x01\x1f\n\t", "\xff\xfe invalid", strings.Repeat("a", 199) + "<", "…" + strings.Repeat("…", 80)} {
		f.Add(s, 200)
		f.Add(s, 40)
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, s string, n int) {
		if n < len("…") || n > 5000 {
			t.Skip()
		}
		got := clip(s, n)
		if w := written(got); w > n {
			t.Fatalf("clip(%q, %d) = %q: %d bytes as JSON", s, n, got, w)
		}
		if written(s) <= n {
			if got != s {
				t.Fatalf("clip(%q, %d) = %q, want it whole: it takes %d bytes", s, n, got, written(s))
			}
			return
		}
		prefix, ok := strings.CutSuffix(got, "…")
		if !ok || !strings.HasPrefix(s, prefix) || !runeBoundary(s, len(prefix)) {
			t.Fatalf("clip(%q, %d) = %q: want a prefix on a rune boundary and the mark", s, n, got)
		}
		_, size := utf8.DecodeRuneInString(s[len(prefix):])
		if longer := s[:len(prefix)+size] + "…"; written(longer) <= n {
			t.Fatalf("clip(%q, %d) = %q, but %q fits too", s, n, got, longer)
		}
	})
}

// runeBoundary reports whether a rune of s, as range decodes it, starts at i.
func runeBoundary(s string, i int) bool {
	for j := range s {
		if j == i {
			return true
		}
	}
	return false
}

// written is the bytes encoding/json writes for s inside a string's quotes.
func written(s string) int {
	b, _ := json.Marshal(s)
	return len(b) - 2
}
