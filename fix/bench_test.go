package fix_test

import (
	"os"
	"testing"

	"github.com/upgradescope/upgradescope/fix"
)

// BenchmarkScan plans a fix of the corpus in UPGRADESCOPE_FIX_CORPUS (make bench's
// hack/.bench/classic-100000, say) as upgradescope fix does. The CLI's numbers against scan's
// are in docs/performance.md (hack/bench runs both).
func BenchmarkScan(b *testing.B) {
	dir := os.Getenv("UPGRADESCOPE_FIX_CORPUS")
	if dir == "" {
		b.Skip("UPGRADESCOPE_FIX_CORPUS names no corpus (make bench generates them in hack/.bench)")
	}
	k := builtinKB(b)
	for b.Loop() {
		if _, err := fix.Scan(dir, fix.Options{KB: k, Target: "1.37", SkipServed: true}); err != nil {
			b.Fatal(err)
		}
	}
}
