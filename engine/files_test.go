package engine_test

import (
	"context"
	"slices"
	"strconv"
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

// TestFilesModeFindsTheRemovedFeatureGateOfAControlPlaneManifestDirectory scans a kubeadm
// control-plane manifest directory (testdata/manifests/control-plane) whose kube-apiserver
// sets a gate 1.36 removed: the feature-gates blocker names the file and the line of the
// --feature-gates flag, and nothing else in the directory is judged a blocker.
func TestFilesModeFindsTheRemovedFeatureGateOfAControlPlaneManifestDirectory(t *testing.T) {
	eng := newEngine(t)
	res, err := files.Collect("../testdata/manifests/control-plane", files.Options{Observe: eng.Observe()})
	if err != nil {
		t.Fatal(err)
	}
	r, err := eng.Evaluate(context.Background(), files.Inventory(res, now), []string{"1.36"}, now)
	if err != nil {
		t.Fatal(err)
	}
	var blockers []string
	for _, f := range r.Targets[0].Findings {
		if f.Severity != "blocker" {
			continue
		}
		for _, o := range f.Objects {
			blockers = append(blockers, f.Category+" "+o.Kind+" "+o.Namespace+"/"+o.Name+" "+o.File+":"+strconv.Itoa(o.Line))
		}
	}
	if want := []string{"feature-gates Pod kube-system/kube-apiserver kube-apiserver.yaml:25"}; !slices.Equal(blockers, want) {
		t.Errorf("blockers %v, want %v", blockers, want)
	}
	if r.Targets[0].Verdict != "blocked" {
		t.Errorf("verdict %s, want blocked", r.Targets[0].Verdict)
	}
}
