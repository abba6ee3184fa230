package fix_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/upgradescope/upgradescope/fix"
	"github.com/upgradescope/upgradescope/internal/testenv/kbtest"
)

// BenchmarkScan plans a fix of the corpus in UPGRADESCOPE_FIX_CORPUS (make bench's
// hack/.bench/classic-100000, say) as upgradescope fix does. The CLI's numbers against scan's
// are in docs/performance.md (hack/bench runs both).
func BenchmarkScan(b *testing.B) {
	dir := os.Getenv("UPGRADESCOPE_FIX_CORPUS")
	if dir == "" {
		b.Skip("UPGRADESCOPE_FIX_CORPUS names no corpus (make bench generates them in hack/.bench)")
	}
	benchScan(b, dir)
}

// BenchmarkScanOneBigFileOfConversions plans a fix of the hostile shape: one file of 100,000
// FlowSchemas at a version 1.37 does not serve among 300,000 served ConfigMaps (about 46 MB),
// which holds every document fix converts in one file. UPGRADESCOPE_FIX_BIG_OBJECTS sets the
// number of FlowSchemas (100000 by default); UPGRADESCOPE_FIX_BIG_FILE, a path to write the
// file to and keep, for measuring the CLI on it.
func BenchmarkScanOneBigFileOfConversions(b *testing.B) {
	n := 100000
	if v := os.Getenv("UPGRADESCOPE_FIX_BIG_OBJECTS"); v != "" {
		if _, err := fmt.Sscan(v, &n); err != nil {
			b.Fatalf("UPGRADESCOPE_FIX_BIG_OBJECTS=%q: %v", v, err)
		}
	}
	path := os.Getenv("UPGRADESCOPE_FIX_BIG_FILE")
	if path == "" {
		path = filepath.Join(b.TempDir(), "all.yaml")
	}
	if err := writeOneBigFileOfConversions(path, n); err != nil {
		b.Fatal(err)
	}
	benchScan(b, path)
}

func benchScan(b *testing.B, path string) {
	k := kbtest.Builtin(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := fix.Scan(path, fix.Options{KB: k, Target: "1.37", SkipServed: true}); err != nil {
			b.Fatal(err)
		}
	}
}

// writeOneBigFileOfConversions writes n FlowSchemas at flowcontrol.apiserver.k8s.io/v1beta3,
// each followed by three served ConfigMaps, as one YAML stream.
func writeOneBigFileOfConversions(path string, n int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	for i := range n {
		fmt.Fprintf(w, "---\napiVersion: flowcontrol.apiserver.k8s.io/v1beta3\nkind: FlowSchema\nmetadata:\n  name: fs-%d\nspec:\n  priorityLevelConfiguration:\n    name: workload-low\n  matchingPrecedence: %d\n  rules:\n  - subjects:\n    - {kind: Group, group: {name: team-%d}}\n", i, 1000+i%8000, i%300)
		for j := range 3 {
			fmt.Fprintf(w, "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-%d-%d\n  namespace: ns-%d\n", i, j, i%300)
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
