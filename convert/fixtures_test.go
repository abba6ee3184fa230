package convert_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	yaml "go.yaml.in/yaml/v3"

	"github.com/upgradescope/upgradescope/convert"
	"github.com/upgradescope/upgradescope/kb"
)

// fixture is one file of testdata/fixtures: one object at an API some target does not serve,
// written for the tests (<group>_<version>_<Kind>[_<case>].yaml).
type fixture struct {
	name string // the file name without .yaml
	path string
	obj  *yaml.Node
	// target is the minor the object is converted for: 1.37 unless a `# target: 1.N` line says.
	target string
	// wantManual is set by a `# want: manual` line: the conversion needs a person.
	wantManual bool
}

// fixtures reads every fixture, convB's too.
func fixtures(t *testing.T) []fixture {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "fixtures", "*.yaml"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixtures in testdata/fixtures: %v", err)
	}
	var out []fixture
	for _, p := range paths {
		out = append(out, readFixture(t, p))
	}
	return out
}

func readFixture(t *testing.T, path string) fixture {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f := fixture{name: strings.TrimSuffix(filepath.Base(path), ".yaml"), path: path, target: "1.37"}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "# target: "); ok {
			f.target = strings.TrimSpace(v)
		}
		if strings.TrimSpace(line) == "# want: manual" {
			f.wantManual = true
		}
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(doc.Content) != 1 || doc.Content[0].Kind != yaml.MappingNode {
		t.Fatalf("%s: a fixture holds one object", path)
	}
	f.obj = doc.Content[0]
	return f
}

// convertFixture converts f and fails the test unless the outcome is the one f expects: an
// object, or (for `# want: manual`) remarks for a person and no object.
func convertFixture(t *testing.T, k *kb.KB, f fixture) convert.Outcome {
	t.Helper()
	out := convert.Object(k, f.obj, f.target)
	switch {
	case f.wantManual && (len(out.Manual) == 0 || out.Object != nil):
		t.Fatalf("%s: want a conversion left to a person, got %+v", f.path, out)
	case !f.wantManual && len(out.Manual) > 0:
		t.Fatalf("%s: needs a person: %+v", f.path, out.Manual)
	case !f.wantManual && out.Object == nil:
		t.Fatalf("%s: %s is served by %s or unknown: nothing converted", f.path, out.From, f.target)
	}
	return out
}

// marshal writes a converted object as a manifest.
func marshal(t *testing.T, obj *yaml.Node) []byte {
	t.Helper()
	b, err := yaml.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
