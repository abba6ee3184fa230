package mcpserver_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/upgradescope/upgradescope/mcpserver"
)

// removedIngress is a manifest whose API 1.22 removed: a blocker at any later target, so a
// file holding it that was read cannot go unseen.
const removedIngress = "apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata:\n  name: leaked\n  namespace: web\n"

// removedIngressKey is the finding removedIngress raises.
const removedIngressKey = "removed-api/extensions/v1beta1/Ingress"

const deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: api\n  namespace: web\n"

// confinedTree is a root beside things a server on it must not read: a manifest, a
// directory of manifests and an inventory outside it, and links inside it to each.
type confinedTree struct {
	parent, root string
}

func newConfinedTree(t *testing.T) confinedTree {
	t.Helper()
	parent := t.TempDir()
	tr := confinedTree{parent: parent, root: filepath.Join(parent, "root")}
	inventory, err := os.ReadFile(filepath.Join(repoRoot(t), "testdata", "clean-is-ready", "inventory.json"))
	if err != nil {
		t.Fatal(err)
	}
	for rel, text := range map[string]string{
		"outside.yaml":             removedIngress,
		"outside-dir/ingress.yaml": removedIngress,
		"inventory.json":           string(inventory),
		"excludes-everything":      "*.yaml\n",
		"root/manifests/api.yaml":  deployment,
		"root/ignored/api.yaml":    deployment,
		"root/inventory.json":      string(inventory),
	} {
		writeFile(t, filepath.Join(parent, rel), text)
	}
	for link, target := range map[string]string{
		"root/manifests/leak.yaml":         "../../outside.yaml",
		"root/link-file.yaml":              filepath.Join(parent, "outside.yaml"),
		"root/link-dir":                    filepath.Join(parent, "outside-dir"),
		"root/link-inventory.json":         "../inventory.json",
		"root/ignored/.upgradescopeignore": filepath.Join(parent, "excludes-everything"),
	} {
		if err := os.Symlink(target, filepath.Join(parent, link)); err != nil {
			t.Fatal(err)
		}
	}
	return tr
}

func writeFile(t testing.TB, path, text string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// Every path an assistant gives is confined to the root: "..", an absolute path, and a
// link inside the root leading out (to a file or a directory) are refused alike, and a path
// outside that does not exist is refused the same way, so the answers tell nothing of what
// exists outside. An absolute path inside the root is taken.
func TestScanReadsNoPathOutsideTheRoot(t *testing.T) {
	tr := newConfinedTree(t)
	cs := connect(t, newServer(t, tr.root), pipes)
	tests := []struct {
		name   string
		source map[string]any
	}{
		{"a parent path", map[string]any{"path": "../outside.yaml"}},
		{"a parent path that climbs back in", map[string]any{"path": "../root/../outside-dir"}},
		{"an absolute path outside", map[string]any{"path": filepath.Join(tr.parent, "outside.yaml")}},
		{"a symlinked file inside leading out", map[string]any{"path": "link-file.yaml"}},
		{"a symlinked directory inside leading out", map[string]any{"path": "link-dir"}},
		{"a path through a symlinked directory", map[string]any{"path": "link-dir/ingress.yaml"}},
		{"a parent path that does not exist", map[string]any{"path": "../absent.yaml"}},
		{"an absolute path outside that does not exist", map[string]any{"path": "/nonexistent/upgradescope/manifests"}},
		{"an inventory file outside", map[string]any{"inventory": "../inventory.json"}},
		{"an inventory file outside, absolute", map[string]any{"inventory": filepath.Join(tr.parent, "inventory.json")}},
		{"a symlinked inventory file leading out", map[string]any{"inventory": "link-inventory.json"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.source["targets"] = []string{"1.37"}
			msg := callError(t, cs, "scan", tt.source)
			if !strings.Contains(msg, "is outside the root "+tr.root) || !strings.Contains(msg, "--root") {
				t.Errorf("refusal %q, want it to say the path is outside the root and name --root", msg)
			}
		})
	}
	t.Run("an absolute path inside", func(t *testing.T) {
		a, _ := call[mcpserver.ScanAnswer](t, cs, "scan", map[string]any{"path": filepath.Join(tr.root, "manifests", "api.yaml"), "targets": []string{"1.37"}})
		if a.Source != "files manifests/api.yaml" {
			t.Errorf("source %q, want the file named relative to the root", a.Source)
		}
	})
	t.Run("an inventory file inside", func(t *testing.T) {
		a, _ := call[mcpserver.ScanAnswer](t, cs, "scan", map[string]any{"inventory": "inventory.json", "targets": []string{"1.37"}})
		if a.Source != "inventory inventory.json" || len(a.Targets) != 1 {
			t.Errorf("answer %+v, want the inventory judged", a)
		}
	})
	t.Run("a missing path inside is named as missing", func(t *testing.T) {
		msg := callError(t, cs, "scan", map[string]any{"path": "absent", "targets": []string{"1.37"}})
		if !strings.Contains(msg, "absent: no such file or directory under the root") {
			t.Errorf("refusal %q", msg)
		}
	})
}

// A directory under the root holding a symlinked file that leads out is scanned without
// reading it: the verdict is unknown (a file was not read) and the removed API the file
// holds is in no finding. The same file scanned from a root that holds it shows the finding:
// the test sees a link that was read.
func TestAManifestLinkLeadingOutOfTheRootIsNotRead(t *testing.T) {
	tr := newConfinedTree(t)
	cs := connect(t, newServer(t, tr.root), pipes)
	a, _ := call[mcpserver.ScanAnswer](t, cs, "scan", map[string]any{"path": "manifests", "targets": []string{"1.37"}})
	ts := a.Targets[0]
	if ts.Verdict != "unknown" || !strings.Contains(strings.Join(ts.NotAssessed, "; "), "api-usage: 1 path(s) not read") {
		t.Errorf("verdict %s, not assessed %q: want unknown, api-usage naming the path not read", ts.Verdict, ts.NotAssessed)
	}
	for _, key := range allKeys(t, cs, a.Scan) {
		if strings.Contains(key, removedIngressKey) {
			t.Errorf("finding %s: the linked file outside the root was read", key)
		}
	}

	wide := connect(t, newServer(t, tr.parent), pipes)
	w, _ := call[mcpserver.ScanAnswer](t, wide, "scan", map[string]any{"path": "outside.yaml", "targets": []string{"1.37"}})
	found := false
	for _, key := range allKeys(t, wide, w.Scan) {
		found = found || strings.Contains(key, removedIngressKey)
	}
	if !found {
		t.Errorf("the file itself raises no %s: the test above proves nothing", removedIngressKey)
	}
}

// The .upgradescopeignore beside the manifests is read like a manifest: a link leading out
// of the root is refused, naming it, rather than read (its patterns would change the verdict,
// and an error quoting a line would show the file's content).
func TestAnIgnoreFileLinkedFromOutsideTheRootIsNotRead(t *testing.T) {
	tr := newConfinedTree(t)
	cs := connect(t, newServer(t, tr.root), pipes)
	msg := callError(t, cs, "scan", map[string]any{"path": "ignored", "targets": []string{"1.37"}})
	if !strings.Contains(msg, "ignored/.upgradescopeignore") || !strings.Contains(msg, "outside the root") {
		t.Errorf("refusal %q, want it to name the ignore file leading out of the root", msg)
	}
}

// allKeys pages list_findings of scan to the end and answers each finding as "target key",
// failing the test on a page that does not move on.
func allKeys(t *testing.T, cs *mcp.ClientSession, scan string) []string {
	t.Helper()
	var keys []string
	args := map[string]any{"scan": scan}
	for {
		page, _ := call[mcpserver.FindingsAnswer](t, cs, "list_findings", args)
		if page.First != len(keys) {
			t.Fatalf("page from %d, want %d: a page skipped or repeated findings", page.First, len(keys))
		}
		for _, f := range page.Findings {
			keys = append(keys, f.Target+" "+f.Key)
		}
		if page.Next == "" {
			if len(keys) != page.Total {
				t.Fatalf("paged %d findings, the answer counts %d", len(keys), page.Total)
			}
			return keys
		}
		if len(page.Findings) == 0 {
			t.Fatalf("an empty page with a next: paging would never end")
		}
		args = map[string]any{"cursor": page.Next}
	}
}

// A root given through a symlink takes absolute paths written through the link, and names
// a missing one as missing: the confinement compares resolved paths on both sides.
func TestARootGivenThroughASymlinkTakesPathsThroughIt(t *testing.T) {
	tr := newConfinedTree(t)
	link := filepath.Join(t.TempDir(), "checkout")
	if err := os.Symlink(tr.root, link); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, newServer(t, link), pipes)
	a, _ := call[mcpserver.ScanAnswer](t, cs, "scan", map[string]any{"path": filepath.Join(link, "manifests", "api.yaml"), "targets": []string{"1.37"}})
	if a.Source != "files manifests/api.yaml" {
		t.Errorf("source %q", a.Source)
	}
	msg := callError(t, cs, "scan", map[string]any{"path": filepath.Join(link, "absent"), "targets": []string{"1.37"}})
	if !strings.Contains(msg, "no such file or directory under the root") {
		t.Errorf("refusal %q, want the path named as missing under the root", msg)
	}
}
