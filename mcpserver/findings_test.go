package mcpserver_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/upgradescope/upgradescope/mcpserver"
)

// findingKeys pages list_findings with args to the end and answers each finding as
// "target key severity".
func findingKeys(t *testing.T, cs *mcp.ClientSession, args map[string]any) []string {
	t.Helper()
	var keys []string
	for _, a := range pages(t, cs, "list_findings", args, func(a mcpserver.FindingsAnswer) string { return a.Next }) {
		for _, f := range a.Findings {
			keys = append(keys, f.Target+" "+f.Key+" "+f.Severity)
		}
	}
	return keys
}

// A filter that could match nothing is refused rather than answered as no findings: a
// target is read as scan reads one, and one the scan did not judge is named an error.
func TestListFindingsReadsATargetAsScanDoesAndRefusesOneNotJudged(t *testing.T) {
	cs := connect(t, newServer(t, repoRoot(t)), pipes)
	scan, _ := call[mcpserver.ScanAnswer](t, cs, "scan", map[string]any{"path": "examples/manifests", "targets": []string{"1.36", "1.37"}})
	at137 := findingKeys(t, cs, map[string]any{"target": "1.37"})
	if len(at137) == 0 {
		t.Fatal("no findings at 1.37: the test needs some")
	}
	for _, target := range []string{"v1.37", "1.37.2", " 1.37 "} {
		if got := findingKeys(t, cs, map[string]any{"target": target}); !slices.Equal(got, at137) {
			t.Errorf("target %q lists %d findings, target 1.37 %d: want the same", target, len(got), len(at137))
		}
	}
	for _, tt := range []struct {
		name string
		args map[string]any
		says []string
	}{
		{"a target the scan did not judge", map[string]any{"target": "1.35"},
			[]string{"target 1.35: " + scan.Scan + " was judged at 1.36, 1.37 only", "scan again"}},
		{"a target that is no minor", map[string]any{"target": "next"}, []string{`target: invalid Kubernetes version "next"`}},
		{"a severity written otherwise", map[string]any{"severity": "Blocker"}, []string{"severity", "blocker"}},
		{"a severity there is not", map[string]any{"severity": "critical"}, []string{"severity", "blocker"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			msg := callError(t, cs, "list_findings", tt.args)
			for _, s := range tt.says {
				if !strings.Contains(msg, s) {
					t.Errorf("%v: %q, want it saying %q", tt.args, msg, s)
				}
			}
		})
	}
}

// A cursor pages the scan its first page read: a scan made between two pages is the
// latest, but not the one being paged.
func TestListFindingsPagesTheScanItStartedOnAfterAnotherScan(t *testing.T) {
	cs := connect(t, newServer(t, repoRoot(t)), pipes)
	scan, _ := call[mcpserver.ScanAnswer](t, cs, "scan", map[string]any{"path": "examples/manifests", "targets": []string{"1.34", "1.35", "1.36", "1.37"}})
	want := findingKeys(t, cs, map[string]any{"scan": scan.Scan})
	first, _ := call[mcpserver.FindingsAnswer](t, cs, "list_findings", map[string]any{})
	if first.Next == "" {
		t.Fatalf("%d findings in one page: the test needs two", first.Total)
	}
	call[mcpserver.ScanAnswer](t, cs, "scan", map[string]any{"path": "examples/manifests/ingress.yaml", "targets": []string{"1.33"}})
	var got []string
	for _, f := range first.Findings {
		got = append(got, f.Target+" "+f.Key+" "+f.Severity)
	}
	got = append(got, findingKeys(t, cs, map[string]any{"cursor": first.Next})...)
	if !slices.Equal(got, want) {
		t.Errorf("paged across a scan:\n%s\nwant %s's findings\n%s", strings.Join(got, "\n"), scan.Scan, strings.Join(want, "\n"))
	}
}
