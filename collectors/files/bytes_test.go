package files

import (
	"reflect"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/upgradescope/upgradescope/kb/probe"
)

// CollectBytes answers what CollectFS answers for the same file in a MapFS, the tree the
// gate built before: the same objects, probes and warnings.
func TestBytesAreReadAsTheSameFileInATree(t *testing.T) {
	var specs []probe.Spec
	var docs []string
	for _, p := range heldOutProbes {
		specs = append(specs, p.spec)
	}
	for _, text := range heldOut {
		docs = append(docs, text)
	}
	data := []byte(ing("a") + "\n---\n" + strings.Join(docs, "\n---\n") + "\n---\napiVersion: v1\nkind: [\n")
	opts := testOptions()
	opts.Probes = probeSet(t, specs...)
	want, err := CollectFS(fstest.MapFS{"manifests.yaml": {Data: data}}, opts)
	if err != nil {
		t.Fatal(err)
	}
	got, err := CollectBytes("manifests.yaml", data, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("CollectBytes:\n%+v\nCollectFS of a MapFS:\n%+v", got, want)
	}
	if want.Objects == 0 || len(want.Probes) == 0 || len(want.Warnings) == 0 {
		t.Errorf("%d objects, %d probes, warnings %v: the comparison says little", want.Objects, len(want.Probes), want.Warnings)
	}
}

// The one-file tree is a well-behaved fs.FS, so the walk reads it as any other.
func TestTheOneFileTreeIsAnFS(t *testing.T) {
	if err := fstest.TestFS(oneFile{name: "manifests.yaml", data: []byte(ing("a"))}, "manifests.yaml"); err != nil {
		t.Fatal(err)
	}
}

// A name the walk would skip or could not hold at the root is refused, not read as empty.
func TestCollectBytesRefusesANameTheWalkWouldNotRead(t *testing.T) {
	for _, name := range []string{"", ".", "notes.txt", "a/b.yaml", "../x.yaml", "/abs.yaml"} {
		if _, err := CollectBytes(name, []byte(ing("a")), testOptions()); err == nil {
			t.Errorf("CollectBytes(%q) read it, want it refused", name)
		}
	}
}
