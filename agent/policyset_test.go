package agent

import (
	"bytes"
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upgradescope/upgradescope/bundles"
	"github.com/upgradescope/upgradescope/bundles/policyset"
	"github.com/upgradescope/upgradescope/crd"
	"github.com/upgradescope/upgradescope/internal/testenv/bundletest"
	"github.com/upgradescope/upgradescope/policies"
)

// The agent's /metrics and ClusterReadiness status follow its bundle set: the active
// revisions and each poll's result, and a refused revision named beside the ones kept.
func TestTheAgentsMetricsAndStatusFollowItsBundleSet(t *testing.T) {
	ctx := context.Background()
	set, err := policyset.New(ctx, policyset.Base{})
	if err != nil {
		t.Fatal(err)
	}
	health := newHealth(time.Minute)
	set.Attach(health.metrics.bundles)
	const src = "https://b.example/kb.tar.gz"
	f := fetchedKB(t, src, "2027-01-12.1")
	err = set.Activate(ctx, f)
	set.Observed(src, bundles.ResultActivated, err)
	expectMetrics(t, health, `upgradescope_bundle_info{name="kb",revision="2027-01-12.1",source="`+src+`"} 1`,
		`upgradescope_bundle_polls_total{result="activated",source="`+src+`"} 1`,
		`upgradescope_bundle_update_failing 0`, `upgradescope_bundle_activated_timestamp_seconds{name="kb"}`)

	refused := fetchedKB(t, src, "2027-01-19.1")
	refused.Bundle.Manifest.Metadata["minEngineVersion"] = "999.0.0"
	err = set.Activate(ctx, refused)
	set.Observed(src, bundles.ResultActivationFailed, err)
	expectMetrics(t, health, `upgradescope_bundle_update_failing 1`,
		`upgradescope_bundle_info{name="kb",revision="2027-01-12.1",source="`+src+`"} 1`)
	_, revs := set.Engine()
	st := crd.BuildStatus(crd.Status{}, crd.Evaluation{Now: time.Now(), Bundles: crdRevisions(revs), BundleUpdate: crdUpdate(set.Update())})
	c := apimeta.FindStatusCondition(st.Conditions, crd.ConditionBundlesCurrent)
	if c == nil || c.Status != metav1.ConditionFalse || !strings.Contains(c.Message, "2027-01-19.1") ||
		!strings.Contains(c.Message, "still evaluating with rules "+policies.RulesRevision+", kb 2027-01-12.1") {
		t.Errorf("BundlesCurrent = %+v, want False naming the refused revision and the ones kept", c)
	}
	if st.Bundles[1].ActivatedAt == nil {
		t.Errorf("status bundles = %+v, want activation times", st.Bundles)
	}
}

func fetchedKB(t *testing.T, src, revision string) *bundles.Fetched {
	t.Helper()
	b, err := bundles.Read(bytes.NewReader(bundletest.KB(t, "", revision, "1.37")), nil)
	if err != nil {
		t.Fatal(err)
	}
	return &bundles.Fetched{Source: src, Bundle: &b}
}

func expectMetrics(t *testing.T, h *Health, lines ...string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for _, want := range lines {
		if !strings.Contains(rec.Body.String(), want) {
			t.Errorf("/metrics lacks %s:\n%s", want, rec.Body.String())
		}
	}
}
