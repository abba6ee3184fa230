package mcpserver

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// fitByCounting is fit's reference: the largest count whose answer fits, tried one by one.
func fitByCounting[T any](items []T, build func(n int) any) int {
	n := 0
	for n < len(items) && answerSize(build(n+1)) <= MaxAnswer {
		n++
	}
	return max(n, min(len(items), 1))
}

func TestFitFindsTheMostItemsThatFitAsCountingDoes(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 1))
	tests := []struct {
		name  string
		items int
		size  func() int // bytes of one item
	}{
		{name: "no item", items: 0, size: func() int { return 10 }},
		{name: "one small item", items: 1, size: func() int { return 10 }},
		{name: "one item past the bound alone", items: 1, size: func() int { return 2 * MaxAnswer }},
		{name: "items past the bound alone", items: 5, size: func() int { return 2 * MaxAnswer }},
		{name: "all fit", items: 7, size: func() int { return 100 }},
		{name: "thousands of lines of a report", items: 1432, size: func() int { return 80 + rng.IntN(200) }},
		{name: "exactly a power of two fits", items: 64, size: func() int { return 20 }},
		{name: "sizes of every kind", items: 300, size: func() int { return rng.IntN(1500) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			items := make([]string, tt.items)
			for i := range items {
				items[i] = strings.Repeat("x", tt.size())
			}
			build := func(n int) any { return struct{ Items []string }{items[:n]} }
			if got, want := fit(items, build), fitByCounting(items, build); got != want {
				t.Errorf("fit = %d, counting = %d", got, want)
			}
		})
	}
}

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
