package crd_test

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/upgradescope/upgradescope/crd"
	"github.com/upgradescope/upgradescope/crd/healthcheck"
	"github.com/upgradescope/upgradescope/internal/testenv/kubetest"
	"github.com/upgradescope/upgradescope/report"
)

// writtenStatus is one ClusterReadiness as the real API server returns it after the agent's
// status writer (crd.BuildStatus + UpdateStatus) wrote it, and the health each recipe must see.
type writtenStatus struct {
	name             string
	obj              map[string]any
	argo             string // Argo CD health
	current, failed  bool   // the Flux expressions
	fluxEvaluateFail bool   // no status at all: Flux's expressions cannot read it
}

func writtenStatuses(t *testing.T) []writtenStatus {
	t.Helper()
	dyn := dynamic.NewForConfigOrDie(kubetest.Config(t, kubetest.EnvServer, "admin"))
	ctx := context.Background()
	if err := crd.Apply(ctx, dyn); err != nil {
		t.Fatal(err)
	}
	client := dyn.Resource(crd.GVR)
	now := time.Now()
	reportOf := func(verdicts ...string) *report.Report {
		r := &report.Report{}
		for i, v := range verdicts {
			tr := report.TargetResult{Target: []string{"1.37", "1.38"}[i], Verdict: v, Score: 100}
			if v == "blocked" {
				tr.Blockers, tr.Score = 3, 25
			}
			r.Targets = append(r.Targets, tr)
		}
		return r
	}
	write := func(name string, rep *report.Report, at time.Time, editAfter bool) map[string]any {
		_ = client.Delete(ctx, name, metav1.DeleteOptions{})
		obj, err := client.Create(ctx, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": crd.Group + "/" + crd.Version, "kind": crd.Kind, "metadata": map[string]any{"name": name},
		}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if rep != nil || name == "health-no-target" {
			obj = writeStatus(t, client, obj, crd.BuildStatus(crd.Status{}, crd.Evaluation{Report: rep, Generation: obj.GetGeneration(), Now: at}))
		}
		if editAfter {
			if obj, err = client.Patch(ctx, name, types.MergePatchType, []byte(`{"spec":{"targets":["1.38"]}}`), metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		return obj.Object
	}
	return []writtenStatus{
		{name: "ready", obj: write("health-ready", reportOf("ready"), now, false), argo: "Healthy", current: true},
		{name: "blocked", obj: write("health-blocked", reportOf("blocked"), now, false), argo: "Degraded", failed: true},
		{name: "unknown", obj: write("health-unknown", reportOf("unknown"), now, false), argo: "Degraded"},
		{name: "no target", obj: write("health-no-target", nil, now, false), argo: "Degraded"},
		{name: "stale", obj: write("health-stale", reportOf("ready"), now.Add(-31*time.Minute), false), argo: "Degraded", current: true},
		{name: "spec edited since the last tick", obj: write("health-edited", reportOf("ready"), now, true), argo: "Progressing", current: true},
		{name: "a later target blocked", obj: write("health-later-blocked", reportOf("ready", "blocked"), now, false), argo: "Degraded", failed: true},
		{name: "no status", obj: write("health-no-status", nil, now, false), argo: "Progressing", fluxEvaluateFail: true},
	}
}

func TestArgoHealthScriptAgainstWrittenStatus(t *testing.T) {
	recipes, err := healthcheck.FromDocs("../docs/gitops.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, ws := range writtenStatuses(t) {
		t.Run(ws.name, func(t *testing.T) {
			got, msg, err := recipes.Argo(ws.obj)
			if err != nil {
				t.Fatal(err)
			}
			if got != ws.argo {
				t.Errorf("health = %s (%s), want %s", got, msg, ws.argo)
			}
		})
	}
}

func TestFluxHealthExpressionsAgainstWrittenStatus(t *testing.T) {
	recipes, err := healthcheck.FromDocs("../docs/gitops.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, ws := range writtenStatuses(t) {
		t.Run(ws.name, func(t *testing.T) {
			current, failed, err := recipes.Flux(ws.obj)
			if ws.fluxEvaluateFail {
				if err == nil {
					t.Errorf("with no status the expressions evaluated (%v, %v); Flux must keep the object in progress", current, failed)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if current != ws.current || failed != ws.failed {
				t.Errorf("current, failed = %v, %v; want %v, %v", current, failed, ws.current, ws.failed)
			}
		})
	}
}
