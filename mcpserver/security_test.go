package mcpserver_test

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/upgradescope/upgradescope/mcpserver"
)

// entry is what a snapshot keeps of a path: anything a write would change.
type entry struct {
	Size  int64
	Mode  fs.FileMode
	MTime time.Time
}

// snapshot is every path under dir (links not followed) with its size, mode and mtime.
func snapshot(t *testing.T, dir string) map[string]entry {
	t.Helper()
	out := map[string]entry{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		out[path] = entry{Size: info.Size(), Mode: info.Mode(), MTime: info.ModTime()}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// copyTree copies the regular files under src into dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		writeFile(t, filepath.Join(dst, rel), string(data))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// validCalls are, for each tool, inputs it answers (not a refusal), covering what it reads:
// scan reads a directory, a file, an inventory; list_findings reads a kept scan, filtered
// and paged, and a fleet cluster; explain_finding plans fix over the scanned manifests;
// plan_upgrade reads a directory and an inventory; the fleet tools read the test fleet (startFleet). A tool the server lists without a row here fails the test: add its calls.
func validCalls(t *testing.T, cs *mcp.ClientSession) map[string][]map[string]any {
	one := []string{"1.37"}
	return map[string][]map[string]any{
		"scan": {
			{"path": "manifests", "targets": []string{"1.36", "1.37"}},
			{"path": "manifests/ingress.yaml", "targets": one},
			{"inventory": "inventory.json", "targets": one},
			{"path": "manifests", "targets": one},
		},
		"list_findings": {
			{},
			{"severity": "blocker", "target": "1.37"},
			{"category": "removed-api", "team": "shop"},
			{"cursor": firstNext(t, cs)},
			{"cluster": "teams-a", "target": "1.37"},
		},
		"explain_finding": {
			{"key": "removed-api/extensions/v1beta1/Ingress", "target": "1.37"},
			{"key": "drain/pdb-no-disruption/prod-shop/checkout", "target": "1.36"},
		},
		"plan_upgrade": {
			{"path": "manifests", "from": "1.33", "target": "1.37"},
			{"inventory": "inventory.json", "from": "1.35", "target": "1.37"},
		},
		"registry_lookup": {{"query": "ingress-nginx"}, {"query": "v1beta1 Ingress"}},
		"fleet_summary":   {{}, {"target": "1.37"}},
		"fleet_findings":  {{}, {"target": "1.37", "severity": "blocker"}},
		"dry_run_bundle":  {{"bundle": "candidate.tar.gz"}},
	}
}

// firstNext is the next of the latest scan's first page of findings.
func firstNext(t *testing.T, cs *mcp.ClientSession) string {
	t.Helper()
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "scan", Arguments: map[string]any{"path": "manifests", "targets": []string{"1.33", "1.34", "1.36", "1.37"}}}); err != nil {
		t.Fatal(err)
	}
	page, _ := call[mcpserver.FindingsAnswer](t, cs, "list_findings", map[string]any{})
	if page.Next == "" {
		t.Fatalf("the scan's findings fit one page (%d): no cursor to page with", page.Total)
	}
	return page.Next
}

// No tool writes anything: every tool the server lists, called with inputs it answers over
// both transports, leaves the root and the working directory as they were (paths, sizes,
// modes, mtimes) and creates nothing in the temporary directory. The last is best effort: it
// sees files named in $TMPDIR, which the test points at a directory of its own, not files
// created elsewhere or removed before the calls end.
func TestNoToolWritesAnything(t *testing.T) {
	root := t.TempDir()
	copyTree(t, filepath.Join(repoRoot(t), "examples", "manifests"), filepath.Join(root, "manifests"))
	inventory, err := os.ReadFile(filepath.Join(repoRoot(t), "testdata", "clean-is-ready", "inventory.json"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(root, "inventory.json"), string(inventory))
	writeFile(t, filepath.Join(root, "manifests", ".upgradescopeignore"), "# nothing excluded\n")
	cwd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	f := startFleet(t)
	writeCandidate(t, root, "candidate.tar.gz", f.privateKey)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	s := f.mcpServer(t, root, fleetReadToken)

	beforeRoot, beforeCwd := snapshot(t, root), snapshot(t, cwd)
	for _, tr := range transports {
		cs := connect(t, s, tr)
		tools, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		calls := validCalls(t, cs)
		for _, tool := range tools.Tools {
			inputs, ok := calls[tool.Name]
			if !ok {
				t.Errorf("%s: the server lists tool %s, and the test has no input for it: add its calls to validCalls", tr, tool.Name)
			}
			for _, in := range inputs {
				call[map[string]any](t, cs, tool.Name, in)
			}
		}
	}
	if after := snapshot(t, root); !reflect.DeepEqual(beforeRoot, after) {
		t.Errorf("the root changed:\nbefore %v\nafter  %v", beforeRoot, after)
	}
	if after := snapshot(t, cwd); !reflect.DeepEqual(beforeCwd, after) {
		t.Errorf("the working directory %s changed", cwd)
	}
	if left, err := os.ReadDir(tmp); err != nil || len(left) != 0 {
		t.Errorf("the temporary directory holds %v (%v), want nothing", left, err)
	}
}
