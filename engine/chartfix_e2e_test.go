package engine_test

import (
	"context"
	"strings"
	"testing"

	"github.com/upgradescope/upgradescope/report"
)

// TestEvaluateNamesTheChartVersionOfABlockingRelease evaluates an inventory whose release's
// kubeVersion excludes 1.33 and whose chart advice found 1.6.0 the lowest version no rule
// blocks there: the rules' blocker carries the fix, and its remediation names the version
// before what the rule wrote.
func TestEvaluateNamesTheChartVersionOfABlockingRelease(t *testing.T) {
	eng := newEngine(t)
	sc := readScenario(t, eng, "../testdata/chart-advice-helm-release-upgrade")
	r, err := eng.Evaluate(context.Background(), sc.inv, sc.targets, now, sc.opts...)
	if err != nil {
		t.Fatal(err)
	}
	var got *report.Finding
	for _, tr := range r.Targets {
		for i, f := range tr.Findings {
			if f.Key == "chart-incompat/helm-release/web/shop" && f.Target == "1.33" {
				got = &tr.Findings[i]
			}
		}
	}
	if got == nil || got.Severity != "blocker" {
		t.Fatalf("no chart-incompat blocker for web/shop at 1.33: %+v", got)
	}
	if got.Fix == nil || got.Fix.Status != report.ChartFixUpgrade || got.Fix.To != "1.6.0" || got.Fix.EveryHop != "1.6.0" {
		t.Fatalf("fix %+v, want an upgrade to 1.6.0, at every hop too", got.Fix)
	}
	want := "Upgrade chart shop from 1.4.0 to 1.6.0 (appVersion 2.3.1 → 2.5.0); 1.5.0 could not be judged: " +
		"render: template: shop/templates/pdb.yaml:3: nil pointer evaluating .Values.pdb. Upgrade the shop chart"
	if !strings.HasPrefix(got.Remediation, want) {
		t.Errorf("remediation %q, want it to start %q", got.Remediation, want)
	}
}
