package engine_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/inventory"
)

// countsPack is a custom pack writing blockers, warnings and infos findings in namespace web.
func countsPack(t *testing.T, blockers, warnings, infos int) string {
	return writePack(t, map[string]string{"upgradescope/custom/counts/counts.rego": fmt.Sprintf(`package upgradescope.custom.counts

severities := {"blocker": %d, "warning": %d, "info": %d}

findings contains f if {
	some t in input.targets
	some severity, n in severities
	some i in numbers.range(1, n)
	f := {"key": sprintf("counts/%%s/%%d", [severity, i]), "category": "counts", "severity": severity,
		"target": t, "title": "counted", "namespaces": ["web"]}
}
`, blockers, warnings, infos)})
}

// The engine scores teams in Go with the report package's formula: a team owning every
// finding, with none unattributed, is scored and judged exactly as the target is.
func TestATeamOwningEveryFindingIsJudgedAsTheTargetIs(t *testing.T) {
	inv := &inventory.Document{
		SchemaVersion: 1, Source: inventory.SourceFiles, CollectedAt: now,
		Capabilities: map[string]inventory.Capability{inventory.CapAPIUsage: {Available: true}},
		Namespaces:   []inventory.Namespace{{Name: "web", Team: "payments"}},
	}
	for _, c := range [][3]int{{0, 0, 1}, {0, 1, 0}, {0, 5, 2}, {1, 0, 0}, {2, 3, 1}, {4, 0, 0}, {0, 9, 3}} {
		t.Run(fmt.Sprintf("%d blockers %d warnings %d infos", c[0], c[1], c[2]), func(t *testing.T) {
			eng := newEngine(t, engine.WithPolicy(countsPack(t, c[0], c[1], c[2])))
			r, err := eng.Evaluate(context.Background(), inv, []string{"1.37"}, now)
			if err != nil {
				t.Fatal(err)
			}
			tr := r.Targets[0]
			team, ok := tr.Teams["payments"]
			if !ok || len(tr.Teams) != 1 {
				t.Fatalf("teams = %+v, want payments alone", tr.Teams)
			}
			if team.Score != tr.Score || team.Verdict != tr.Verdict || team.Blockers != tr.Blockers ||
				team.Warnings != tr.Warnings || team.Infos != tr.Infos {
				t.Errorf("payments = %+v, want the target's score %d, verdict %s and counts %d/%d/%d",
					team, tr.Score, tr.Verdict, tr.Blockers, tr.Warnings, tr.Infos)
			}
			for _, f := range tr.Findings {
				if len(f.Teams) != 1 || f.Teams[0] != "payments" {
					t.Errorf("finding %s teams = %q, want [payments]", f.Key, f.Teams)
				}
			}
		})
	}
}
