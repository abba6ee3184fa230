package engine_test

import (
	"context"
	"slices"
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

// TestAReleasesChartFixComparesOnlyTheAPIsItsStoredManifestRecords: the cluster collector
// records of a release's stored manifest only the APIs the knowledge base judges, while a
// candidate's APIs are its whole rendering. A ConfigMap both versions render, recorded for
// the candidate only, is not "added".
func TestAReleasesChartFixComparesOnlyTheAPIsItsStoredManifestRecords(t *testing.T) {
	eng := newEngine(t)
	sc := readScenario(t, eng, "../testdata/chart-advice-helm-release-upgrade")
	a := &sc.inv.ChartAdvice[0]
	a.Versions[0].APIs = []string{"policy/v1beta1 PodDisruptionBudget"}
	last := &a.Versions[len(a.Versions)-1]
	last.APIs = []string{"apps/v1 Deployment", "policy/v1 PodDisruptionBudget", "v1 ConfigMap"}
	r, err := eng.Evaluate(context.Background(), sc.inv, sc.targets, now, sc.opts...)
	if err != nil {
		t.Fatal(err)
	}
	var fix *report.ChartFix
	for _, tr := range r.Targets {
		for _, f := range tr.Findings {
			if f.Key == "chart-incompat/helm-release/web/shop" && f.Target == "1.33" {
				fix = f.Fix
			}
		}
	}
	if fix == nil || fix.To != last.Version {
		t.Fatalf("fix %+v, want an upgrade to %s", fix, last.Version)
	}
	if !slices.Equal(fix.APIsAdded, []string{"policy/v1 PodDisruptionBudget"}) || !slices.Equal(fix.APIsRemoved, []string{"policy/v1beta1 PodDisruptionBudget"}) {
		t.Errorf("APIs added %q, removed %q; want +policy/v1 PodDisruptionBudget, −policy/v1beta1 PodDisruptionBudget only", fix.APIsAdded, fix.APIsRemoved)
	}
}
