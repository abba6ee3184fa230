package report

import (
	"testing"

	"github.com/upgradescope/upgradescope/inventory"
)

func TestAGateTellsWhatTheManifestsIntroduceFromWhatTheClusterHad(t *testing.T) {
	live := inventory.ObjectRef{Kind: "Ingress", Namespace: "shop", Name: "a"}
	written := inventory.ObjectRef{Kind: "Ingress", Namespace: "shop", Name: "a", File: "ingress.yaml", Line: 3}
	other := inventory.ObjectRef{Kind: "Ingress", Namespace: "shop", Name: "b", File: "ingress.yaml", Line: 9}
	base := TargetResult{Findings: []Finding{
		{Key: "removed-api/ingress", Severity: SeverityBlocker, Objects: []inventory.ObjectRef{live}},
		{Key: "addon-eol/ingress-nginx", Severity: SeverityWarning},
		{Key: "skew/kubelet", Severity: SeverityBlocker, ObjectsOmitted: 2},
	}, Suppressed: []Finding{{Key: "deprecated-api/endpoints", Severity: SeverityInfo}}}
	tests := []struct {
		name string
		f    Finding
		want string
	}{
		{"a key the cluster did not have is introduced", Finding{Key: "removed-api/psp", Severity: SeverityBlocker}, SourceManifest},
		{"the same object written again is the cluster's", Finding{Key: "removed-api/ingress", Severity: SeverityBlocker,
			Objects: []inventory.ObjectRef{written}}, SourceCluster},
		{"a new object under a known key is introduced", Finding{Key: "removed-api/ingress", Severity: SeverityBlocker,
			Objects: []inventory.ObjectRef{written, other}}, SourceManifest},
		{"a new object an inventory body lists, with no file, is introduced", Finding{Key: "removed-api/ingress",
			Severity: SeverityBlocker, Objects: []inventory.ObjectRef{live, {Kind: "Ingress", Namespace: "shop", Name: "c"}}}, SourceManifest},
		{"a raised severity is introduced", Finding{Key: "addon-eol/ingress-nginx", Severity: SeverityBlocker}, SourceManifest},
		{"a lowered severity is the cluster's", Finding{Key: "addon-eol/ingress-nginx", Severity: SeverityInfo}, SourceCluster},
		{"more objects past the list than the cluster had is introduced", Finding{Key: "skew/kubelet",
			Severity: SeverityBlocker, ObjectsOmitted: 3}, SourceManifest},
		{"a finding the cluster suppressed is the cluster's", Finding{Key: "deprecated-api/endpoints", Severity: SeverityInfo}, SourceCluster},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := TargetResult{Verdict: VerdictBlocked, Score: 75, Blockers: 1, Findings: []Finding{tt.f}}
			AgainstContext(&tr, base, "prod", 7)
			if got := tr.Findings[0].Source; got != tt.want {
				t.Errorf("source %q, want %q", got, tt.want)
			}
			if c := tr.Cluster; c == nil || c.Name != "prod" || c.SnapshotID != 7 || c.Verdict != VerdictBlocked || c.Score != 75 {
				t.Errorf("the whole cluster's judgement was not kept: %+v", c)
			}
		})
	}
}

func TestRecountJudgesTheSelectedFindingsByTheReportsRule(t *testing.T) {
	findings := []Finding{
		{Key: "a", Severity: SeverityBlocker, Source: SourceCluster},
		{Key: "b", Severity: SeverityWarning, Source: SourceManifest},
		{Key: "c", Severity: SeverityInfo, Source: SourceManifest},
	}
	required := []Gap{{Capability: "helm", Required: true}}
	tests := []struct {
		name     string
		gaps     []Gap
		keep     func(Finding) bool
		verdict  string
		score    int
		blockers int
	}{
		{"only the introduced findings count", nil, Finding.Introduced, VerdictReady, 95, 0},
		{"a required gap still makes it unknown", required, Finding.Introduced, VerdictUnknown, 95, 0},
		{"every finding kept is the whole", required, func(Finding) bool { return true }, VerdictBlocked, 70, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := TargetResult{Findings: findings, NotAssessed: tt.gaps}
			tr.Recount(tt.keep)
			if tr.Verdict != tt.verdict || tr.Score != tt.score || tr.Blockers != tt.blockers || tr.Warnings != 1 || tr.Infos != 1 {
				t.Errorf("got %s %d (%d/%d/%d), want %s %d with %d blockers", tr.Verdict, tr.Score, tr.Blockers, tr.Warnings,
					tr.Infos, tt.verdict, tt.score, tt.blockers)
			}
		})
	}
}
