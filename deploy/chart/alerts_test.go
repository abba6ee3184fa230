package chart

import (
	"regexp"
	"strings"
	"testing"
)

// alertExprs answers the PrometheusRule's expressions by alert name.
func alertExprs(t *testing.T, rendered string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, obj := range objects(t, rendered) {
		if obj["kind"] != "PrometheusRule" {
			continue
		}
		for _, g := range list(dig(obj, "spec")["groups"]) {
			for _, r := range list(g["rules"]) {
				out[r["alert"].(string)] = r["expr"].(string)
			}
		}
	}
	return out
}

var perClusterSeries = regexp.MustCompile(`upgradescope_cluster_\w+`)

// Every replica exports the same per-cluster series from the shared store: a rule over them
// must aggregate the replicas away, or it fires once per pod.
func TestEveryAlertOverClusterSeriesFiresOncePerClusterWhateverTheReplicas(t *testing.T) {
	for _, staleAfter := range []int{0, 7200} {
		v := values(t, hubValues)
		dig(v, "metrics", "prometheusRule")["clusterStaleAfterSeconds"] = staleAfter
		exprs := alertExprs(t, render(t, v))
		if len(exprs) == 0 {
			t.Fatal("the hub renders no PrometheusRule")
		}
		for alert, expr := range exprs {
			if !perClusterSeries.MatchString(expr) {
				continue
			}
			if !strings.HasPrefix(expr, "max by (cluster") {
				t.Errorf("%s: %q does not aggregate the replicas by cluster", alert, expr)
			}
		}
	}
}

// When the server is down or its scrape fails there is no series, so no rule over them fires:
// one alert watches for their absence.
func TestAnAlertFiresWhenTheServersMetricsAreAbsent(t *testing.T) {
	exprs := alertExprs(t, render(t, values(t, hubValues)))
	want := `absent(upgradescope_store_up{namespace="upgradescope", service="us-server"})`
	if got := exprs["UpgradescopeServerNotScraped"]; got != want {
		t.Errorf("UpgradescopeServerNotScraped = %q, want %q", got, want)
	}
	for _, kept := range []string{"UpgradescopeUpgradeBlocked", "UpgradescopeVerdictUnknown", "UpgradescopeAgentNotTicking",
		"UpgradescopeClusterStale", "UpgradescopeStoreDown"} {
		if _, ok := exprs[kept]; !ok {
			t.Errorf("alert %s is gone: its name is what receivers route on", kept)
		}
	}
}
