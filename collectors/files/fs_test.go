package files

import (
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/upgradescope/upgradescope/kb/probe"
)

// An fs.FS is read as Collect reads the same tree on disk: the same files (vendored, VCS and
// non-manifest ones skipped, symlinked directories named), the same decoder, probes and
// bounds, the same result, the base aside.
func TestAnFSIsReadAsTheSameTreeOnDisk(t *testing.T) {
	dir := t.TempDir()
	tree := map[string]string{
		"a/ing.yaml": ing("a"), "b.json": `{"apiVersion":"v1","kind":"Endpoints","metadata":{"name":"e"}}`,
		"vendor/v.yaml": ing("vendored"), ".git/g.yaml": ing("git"), "notes.txt": ing("text"),
		"broken.yaml": "apiVersion: v1\nkind: [\n",
	}
	for name, text := range heldOut {
		tree["probed/"+name] = text
	}
	for name, text := range tree {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	elsewhere := t.TempDir()
	for link, target := range map[string]string{"linked.yaml": filepath.Join(dir, "a", "ing.yaml"), "sub": elsewhere, "gone.yaml": filepath.Join(elsewhere, "absent.yaml")} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	var specs []probe.Spec
	for _, p := range heldOutProbes {
		specs = append(specs, p.spec)
	}
	opts := testOptions()
	opts.Probes = probeSet(t, specs...)
	want, err := Collect(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	got, err := CollectFS(os.DirFS(dir), opts)
	if err != nil {
		t.Fatal(err)
	}
	if got.Base != "" {
		t.Errorf("base %q, want none", got.Base)
	}
	want.Base = ""
	if !reflect.DeepEqual(got, want) {
		t.Errorf("CollectFS:\n%+v\nCollect:\n%+v", got, want)
	}
	if want.Objects == 0 || len(want.Probes) == 0 || len(want.Warnings) < 3 {
		t.Errorf("%d objects, %d probes, warnings %v: the comparison says little", want.Objects, len(want.Probes), want.Warnings)
	}
}

// A tree in memory keeps the walk's guards: a named pipe is named and never opened, the byte
// budget holds, and files are named by their path in the tree.
func TestAnInMemoryTreeKeepsTheWalksGuards(t *testing.T) {
	fsys := fstest.MapFS{
		"a.yaml":        {Data: []byte(ing("a"))},
		"pipe.yaml":     {Mode: fs.ModeNamedPipe},
		"vendor/v.yaml": {Data: []byte(ing("vendored"))},
		"z/big.yaml":    {Data: []byte(ing("big") + strings.Repeat("# padding\n", 200_000))},
	}
	opts := testOptions()
	opts.MaxBytes = 1 << 20
	res, err := CollectFS(fsys, opts)
	if err != nil {
		t.Fatal(err)
	}
	if got := refs(res); !reflect.DeepEqual(got, []string{"extensions/v1beta1 Ingress web/a a.yaml:1"}) {
		t.Errorf("objects = %q, want a.yaml's Ingress alone", got)
	}
	var messages []string
	for _, w := range res.Warnings {
		messages = append(messages, w.String())
	}
	want := []string{"pipe.yaml:0: a FIFO: not read", "z/big.yaml:0: 1 file(s) from here on not read: past the 1 MiB of manifests a walk reads (--files-max-mib)"}
	if !reflect.DeepEqual(messages, want) {
		t.Errorf("warnings = %q, want %q", messages, want)
	}
}
