package output_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/output"
	"github.com/upgradescope/upgradescope/report"
)

// gatedAgainstACluster is a gate's report with a cluster context: one blocker the cluster
// already had and one warning the manifests introduce.
func gatedAgainstACluster() *report.Report {
	return &report.Report{Source: "cluster", Targets: []report.TargetResult{{
		Target: "1.33", Verdict: report.VerdictReady, Score: 95, Warnings: 1,
		Findings: []report.Finding{
			{Key: "removed-api/psp", Category: "removed-api", Severity: report.SeverityBlocker, Target: "1.33",
				Title: "PodSecurityPolicy is removed", Source: report.SourceCluster},
			{Key: "deprecated-api/x", Category: "deprecated-api", Severity: report.SeverityWarning, Target: "1.33",
				Title: "X is deprecated", Source: report.SourceManifest,
				Objects: []inventory.ObjectRef{{Name: "x", File: "x.yaml", Line: 2}}},
		},
		Cluster: &report.ClusterResult{Name: "prod", SnapshotID: 3, Verdict: report.VerdictBlocked, Score: 70, Blockers: 1, Warnings: 1},
	}}}
}

func TestEveryFormatTellsWhatAGatedClusterAlreadyHad(t *testing.T) {
	tests := []struct {
		format string
		says   []string
		never  string
	}{
		{output.FormatTable, []string{"CLUSTER prod with these manifests: VERDICT BLOCKED  SCORE 70/100", "already in the cluster"}, ""},
		{output.FormatMarkdown, []string{"| blocker *cluster* |", "already in cluster prod; with these manifests applied it is BLOCKED"}, ""},
		{output.FormatSARIF, []string{`"level": "note"`, `"source": "cluster"`, `"source": "manifest"`}, `"level": "error"`},
		{output.FormatJUnit, []string{`<skipped message="already in the cluster`, "<failure"}, ""},
		{output.FormatJSON, []string{`"source": "cluster"`, `"cluster": {`}, ""},
		{output.FormatGitLab, []string{`"check_name": "deprecated-api/x"`}, "removed-api/psp"},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			out := string(rendered(t, tt.format, gatedAgainstACluster(), output.Options{FailOn: report.FailOnWarning}))
			for _, s := range tt.says {
				if !strings.Contains(out, s) {
					t.Errorf("want %q in:\n%s", s, out)
				}
			}
			if tt.never != "" && strings.Contains(out, tt.never) {
				t.Errorf("%q in:\n%s", tt.never, out)
			}
		})
	}
}

// Under JUnit the cluster's own blocker is never a failure, only the introduced warning.
func TestJUnitFailsOnlyWhatTheManifestsIntroduce(t *testing.T) {
	out := string(rendered(t, output.FormatJUnit, gatedAgainstACluster(), output.Options{FailOn: report.FailOnWarning}))
	if n := strings.Count(out, "<failure"); n != 1 || !strings.Contains(out, `<failure message="X is deprecated"`) {
		t.Errorf("%d failures, want the introduced warning alone:\n%s", n, out)
	}
}

// A pull request comment lists what the manifests introduce before what the cluster had, so
// the cut never hides the finding that failed the gate.
func TestMarkdownListsIntroducedFindingsBeforeTheClusters(t *testing.T) {
	r := gatedAgainstACluster()
	tr := &r.Targets[0]
	for i := range 60 {
		tr.Findings = append([]report.Finding{{Key: fmt.Sprintf("removed-api/x%d", i), Category: "removed-api",
			Severity: report.SeverityBlocker, Target: "1.33", Title: "cluster blocker", Source: report.SourceCluster}}, tr.Findings...)
	}
	out := string(rendered(t, output.FormatMarkdown, r, output.Options{}))
	if !strings.Contains(out, "X is deprecated") {
		t.Errorf("the introduced warning is cut from the comment:\n%s", out)
	}
}
