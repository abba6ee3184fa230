package crd_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/upgradescope/upgradescope/crd"
	"github.com/upgradescope/upgradescope/internal/testenv/kubetest"
	"github.com/upgradescope/upgradescope/report"
)

var crds = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

const crdName = "clusterreadinesses.upgradescope.basit.engineer"

func TestApplyKeepsLabelsOtherManagersSet(t *testing.T) {
	dyn := dynamic.NewForConfigOrDie(kubetest.Config(t, kubetest.EnvServer, "admin"))
	ctx := context.Background()
	if err := crd.Apply(ctx, dyn); err != nil {
		t.Fatal(err)
	}
	patch := []byte(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"` + crdName + `","labels":{"argocd.argoproj.io/instance":"platform"}}}`)
	force := true
	// A field manager of this test's own: cmd/upgradescope's agent test applies another label
	// to the same CRD of the shared API server as "argocd-controller", and one manager's
	// apply drops the labels it applied before.
	if _, err := dyn.Resource(crds).Patch(ctx, crdName, types.ApplyPatchType, patch, metav1.PatchOptions{FieldManager: "argocd-application-controller", Force: &force}); err != nil {
		t.Fatal(err)
	}
	if err := crd.Apply(ctx, dyn); err != nil {
		t.Fatal(err)
	}
	got, err := dyn.Resource(crds).Get(ctx, crdName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.GetLabels()["argocd.argoproj.io/instance"] != "platform" {
		t.Errorf("labels after a second apply = %v, want Argo CD's label kept", got.GetLabels())
	}
}

func TestTheAPIServerAcceptsTheStatusTheAgentBuildsAndRefusesABadOne(t *testing.T) {
	dyn := dynamic.NewForConfigOrDie(kubetest.Config(t, kubetest.EnvServer, "admin"))
	ctx := context.Background()
	if err := crd.Apply(ctx, dyn); err != nil {
		t.Fatal(err)
	}
	client := dyn.Resource(crd.GVR)
	_ = client.Delete(ctx, "crd-test", metav1.DeleteOptions{})
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": crd.Group + "/" + crd.Version, "kind": crd.Kind,
		"metadata": map[string]any{"name": "crd-test"},
		"spec":     map[string]any{"targets": []any{"1.37", "1.38"}},
	}}
	created, err := client.Create(ctx, obj, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rep := &report.Report{Targets: []report.TargetResult{
		{Target: "1.37", Verdict: "ready", Score: 100},
		{Target: "1.38", Verdict: "blocked", Score: 75, Blockers: 1, Findings: []report.Finding{{Key: "eol-addon/x", Category: "eol-addon", Severity: "blocker", Title: "X is end-of-life"}}},
	}}
	st := crd.BuildStatus(crd.Status{}, crd.Evaluation{Report: rep, Generation: created.GetGeneration(), AgentVersion: "test", Now: time.Now()})
	written := writeStatus(t, client, created, st)
	var back crd.ClusterReadiness
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(written.Object, &back); err != nil {
		t.Fatal(err)
	}
	if back.Status.ObservedGeneration != created.GetGeneration() || len(back.Status.Conditions) != 2 || back.Status.Targets[1].TopFindings[0].Key != "eol-addon/x" {
		t.Errorf("status read back = %+v", back.Status)
	}

	bad := st
	bad.Targets = append([]crd.TargetStatus{}, st.Targets...)
	bad.Targets[0].Verdict = "maybe"
	raw, _ := json.Marshal(bad)
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	written.Object["status"] = m
	if _, err := client.UpdateStatus(ctx, written, metav1.UpdateOptions{}); err == nil {
		t.Error("the API server accepted a verdict outside ready, blocked, unknown")
	}
}

func writeStatus(t *testing.T, client dynamic.NamespaceableResourceInterface, obj *unstructured.Unstructured, st crd.Status) *unstructured.Unstructured {
	t.Helper()
	raw, _ := json.Marshal(st)
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	obj = obj.DeepCopy()
	obj.Object["status"] = m
	out, err := client.UpdateStatus(context.Background(), obj, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("write status: %v", err)
	}
	return out
}
