package engine_test

import (
	"context"
	"testing"

	"github.com/upgradescope/upgradescope/collectors/files"
	"github.com/upgradescope/upgradescope/inventory"
)

// TestFilesModeJudgesRequestOnlyKindsLikeStoredOnes collects a real manifest of
// TokenReview and SubjectAccessReview (kinds the apiserver never stores) and judges it: the
// versions Kubernetes no longer serves are removed-API blockers naming file and line, as an
// Ingress would be; the served TokenReview is fine.
func TestFilesModeJudgesRequestOnlyKindsLikeStoredOnes(t *testing.T) {
	eng := newEngine(t)
	res, err := files.Collect("../testdata/manifests/request-only", files.Options{
		Observe: eng.Observe(),
	})
	if err != nil {
		t.Fatal(err)
	}
	r, err := eng.Evaluate(context.Background(), files.Inventory(res, now), []string{"1.33"}, now)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]inventory.ObjectRef{}
	for _, f := range r.Targets[0].Findings {
		if f.Category != "removed-api" || f.Severity != "blocker" || len(f.Objects) != 1 {
			t.Errorf("finding %s: %s %s with %d object(s), want one removed-api blocker object", f.Key, f.Category, f.Severity, len(f.Objects))
			continue
		}
		got[f.Key] = f.Objects[0]
	}
	want := map[string]inventory.ObjectRef{
		"removed-api/authentication.k8s.io/v1beta1/TokenReview":        {File: "reviews.yaml", Line: 3},
		"removed-api/authorization.k8s.io/v1beta1/SubjectAccessReview": {File: "reviews.yaml", Line: 8},
	}
	if len(got) != len(want) {
		t.Errorf("findings %v, want exactly %v", got, want)
	}
	for key, ref := range want {
		if o, ok := got[key]; !ok || o.File != ref.File || o.Line != ref.Line {
			t.Errorf("%s: object %+v, want it at %s:%d", key, o, ref.File, ref.Line)
		}
	}
	if r.Targets[0].Verdict != "blocked" {
		t.Errorf("verdict %s, want blocked", r.Targets[0].Verdict)
	}
}
