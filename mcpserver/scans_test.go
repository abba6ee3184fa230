package mcpserver_test

import (
	"strings"
	"testing"

	"github.com/upgradescope/upgradescope/mcpserver"
)

// Over --http each client has an MCP session of its own, and what a session scanned is its
// own: another client's latest scan is not its latest, nor is its id one to read.
func TestASessionReadsOnlyItsOwnScansOverHTTP(t *testing.T) {
	base := serveHTTP(t, newServer(t, repoRoot(t)), mcpserver.HTTPOptions{})
	first, second := connectHTTP(t, base), connectHTTP(t, base)
	scan, _ := call[mcpserver.ScanAnswer](t, first, "scan", map[string]any{"path": "examples/manifests", "targets": []string{"1.37"}})
	plan, _ := call[mcpserver.PlanAnswer](t, first, "plan_upgrade", map[string]any{"path": "examples/manifests", "from": "1.20", "target": "1.37"})
	if scan.Findings == 0 || len(scan.TopBlockers) == 0 || plan.Next == "" {
		t.Fatalf("scan %+v, plan next %q: the test needs findings, a blocker and a plan of two pages", scan, plan.Next)
	}
	for _, tt := range []struct {
		name, tool string
		args       map[string]any
		says       string
	}{
		{"the latest scan", "list_findings", map[string]any{}, "no scan yet: call scan first"},
		{"the other session's scan by its id", "list_findings", map[string]any{"scan": scan.Scan}, "is not kept in this session (its last 8 are)"},
		{"a finding of it", "explain_finding", map[string]any{"scan": scan.Scan, "key": scan.TopBlockers[0].Key}, "is not kept in this session (its last 8 are)"},
		{"the latest finding", "explain_finding", map[string]any{"key": scan.TopBlockers[0].Key}, "no scan yet: call scan first"},
		{"the next page of its plan", "plan_upgrade", map[string]any{"cursor": plan.Next}, "is not kept in this session (its last 8 are)"},
	} {
		t.Run("the second session asks for "+tt.name, func(t *testing.T) {
			if msg := callError(t, second, tt.tool, tt.args); !strings.Contains(msg, tt.says) {
				t.Errorf("%s %v: %q, want it saying %q", tt.tool, tt.args, msg, tt.says)
			}
		})
	}
	// The second session's scan is its latest, under an id of its own; the first session's
	// latest is still its own (the plan, kept as a scan).
	other, _ := call[mcpserver.ScanAnswer](t, second, "scan", map[string]any{"path": "examples/manifests/ingress.yaml", "targets": []string{"1.33"}})
	if other.Scan == scan.Scan || other.Scan == plan.Scan {
		t.Errorf("the second session's scan is %s, an id the first session's scans have", other.Scan)
	}
	mine, _ := call[mcpserver.FindingsAnswer](t, first, "list_findings", map[string]any{})
	theirs, _ := call[mcpserver.FindingsAnswer](t, second, "list_findings", map[string]any{})
	if mine.Source != plan.Source || theirs.Source != other.Source {
		t.Errorf("the latest scans are %q and %q, want each session's own: %q and %q", mine.Source, theirs.Source, plan.Source, other.Source)
	}
}
