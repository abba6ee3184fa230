package convert_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	yaml "go.yaml.in/yaml/v3"

	"github.com/upgradescope/upgradescope/convert"
	"github.com/upgradescope/upgradescope/internal/testenv/kbtest"
)

var update = flag.Bool("update", false, "rewrite testdata/converted from the conversions")

// TestConversionsMatchTheirGoldens keeps each fixture's conversion, with its notes and what
// it leaves to a person, in testdata/converted/<fixture>.yaml, to be read by hand; -update
// rewrites them.
func TestConversionsMatchTheirGoldens(t *testing.T) {
	k := kbtest.Builtin(t)
	for _, f := range fixtures(t) {
		t.Run(f.name, func(t *testing.T) {
			got := render(t, convertFixture(t, k, f))
			path := filepath.Join("testdata", "converted", f.name+".yaml")
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./convert -run Goldens -update, then read it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from the conversion:\n%s", path, got)
			}
		})
	}
}

// render writes the outcome as its remarks in comments, then the converted object.
func render(t *testing.T, out convert.Outcome) []byte {
	t.Helper()
	var b bytes.Buffer
	fmt.Fprintf(&b, "# %s -> %s\n", out.From, out.To)
	for _, r := range out.Notes {
		fmt.Fprintf(&b, "# note %s (line %d): %s\n", r.Path, r.Line, r.Message)
	}
	for _, r := range out.Manual {
		fmt.Fprintf(&b, "# manual %s (line %d): %s\n", r.Path, r.Line, r.Message)
	}
	if out.Object == nil {
		return b.Bytes()
	}
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(out.Object); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestEveryRemarkNamesALineOfItsFixture: fix lists remarks as file:line, so a remark about a
// field a step adds names its parent's or the object's line, never 0.
func TestEveryRemarkNamesALineOfItsFixture(t *testing.T) {
	k := kbtest.Builtin(t)
	for _, f := range fixtures(t) {
		out := convertFixture(t, k, f)
		for _, r := range append(out.Notes, out.Manual...) {
			if r.Line < 1 {
				t.Errorf("%s: %s names no line: %s", f.name, r.Path, r.Message)
			}
		}
	}
}
