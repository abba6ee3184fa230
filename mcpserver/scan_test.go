package mcpserver_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/upgradescope/upgradescope/collectors/files"
	"github.com/upgradescope/upgradescope/mcpserver"
)

// cliReport judges dir as scan --files does, for answers to be held to.
func cliVerdicts(t *testing.T, dir string, targets ...string) map[string]string {
	t.Helper()
	eng := builtinEngine(t)
	res, err := files.Collect(dir, files.Options{Observe: eng.Observe(), TeamLabel: "team"})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := eng.Evaluate(context.Background(), files.Inventory(res, now), targets, now)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, tr := range rep.Targets {
		out[tr.Target] = tr.Verdict
	}
	return out
}

func TestScanAnswersTheVerdictTheCLIReaches(t *testing.T) {
	root := repoRoot(t)
	want := cliVerdicts(t, filepath.Join(root, "examples", "manifests"), "1.36", "1.37")
	for _, tr := range transports {
		t.Run(string(tr), func(t *testing.T) {
			cs := connect(t, newServer(t, root), tr)
			a, _ := call[mcpserver.ScanAnswer](t, cs, "scan", map[string]any{"path": "examples/manifests", "targets": []string{"1.36", "1.37"}})
			if len(a.Targets) != 2 {
				t.Fatalf("targets = %+v", a.Targets)
			}
			for _, ts := range a.Targets {
				if ts.Verdict != want[ts.Target] {
					t.Errorf("%s: verdict %s, the CLI's %s", ts.Target, ts.Verdict, want[ts.Target])
				}
			}
			if len(a.JudgedWith) < 2 || a.Scan == "" || len(a.TopBlockers) == 0 {
				t.Errorf("answer = %+v, want bundle revisions, a scan id and the top blockers", a)
			}
		})
	}
}

// The top blockers answer "can we get to the last target?": its blockers come first, each
// key once, so a blocker only the last target has (the feature gate kube-apiserver will not
// start with at 1.37) is not crowded out by the same blockers at every earlier target.
func TestScanNamesTheFurthestTargetsBlockersFirstEachOnce(t *testing.T) {
	cs := connect(t, newServer(t, repoRoot(t)), pipes)
	a, _ := call[mcpserver.ScanAnswer](t, cs, "scan", map[string]any{"path": "examples/manifests", "targets": []string{"1.34", "1.35", "1.36", "1.37"}})
	seen := map[string]bool{}
	var gate bool
	for _, b := range a.TopBlockers {
		if seen[b.Key] {
			t.Errorf("%s named twice", b.Key)
		}
		seen[b.Key] = true
		gate = gate || b.Key == "feature-gates/removed/kube-apiserver/StructuredAuthenticationConfiguration"
	}
	if len(a.TopBlockers) == 0 || a.TopBlockers[0].Target != "1.37" || !gate {
		t.Errorf("top blockers %+v: want 1.37's first, the removed feature gate among them", a.TopBlockers)
	}
}
