package crd_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/cel-go/cel"
	lua "github.com/yuin/gopher-lua"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/upgradescope/upgradescope/crd"
	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/internal/kubetest"
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
	report := func(verdicts ...string) *engine.Report {
		r := &engine.Report{}
		for i, v := range verdicts {
			tr := engine.TargetResult{Target: []string{"1.37", "1.38"}[i], Verdict: v, Score: 100}
			if v == "blocked" {
				tr.Blockers, tr.Score = 3, 25
			}
			r.Targets = append(r.Targets, tr)
		}
		return r
	}
	write := func(name string, rep *engine.Report, at time.Time, editAfter bool) map[string]any {
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
		{name: "ready", obj: write("health-ready", report("ready"), now, false), argo: "Healthy", current: true},
		{name: "blocked", obj: write("health-blocked", report("blocked"), now, false), argo: "Degraded", failed: true},
		{name: "unknown", obj: write("health-unknown", report("unknown"), now, false), argo: "Degraded"},
		{name: "no target", obj: write("health-no-target", nil, now, false), argo: "Degraded"},
		{name: "stale", obj: write("health-stale", report("ready"), now.Add(-31*time.Minute), false), argo: "Degraded", current: true},
		{name: "spec edited since the last tick", obj: write("health-edited", report("ready"), now, true), argo: "Progressing", current: true},
		{name: "a later target blocked", obj: write("health-later-blocked", report("ready", "blocked"), now, false), argo: "Degraded", failed: true},
		{name: "no status", obj: write("health-no-status", nil, now, false), argo: "Progressing", fluxEvaluateFail: true},
	}
}

func TestArgoHealthScriptAgainstWrittenStatus(t *testing.T) {
	script := argoScriptFromDocs(t)
	for _, ws := range writtenStatuses(t) {
		t.Run(ws.name, func(t *testing.T) {
			L := lua.NewState()
			defer L.Close()
			L.SetGlobal("obj", toLua(L, ws.obj))
			if err := L.DoString("function health()\n" + script + "\nend"); err != nil {
				t.Fatal(err)
			}
			if err := L.CallByParam(lua.P{Fn: L.GetGlobal("health"), NRet: 1, Protect: true}); err != nil {
				t.Fatal(err)
			}
			hs, ok := L.Get(-1).(*lua.LTable)
			if !ok {
				t.Fatalf("the script returned %v, want a table", L.Get(-1))
			}
			if got := hs.RawGetString("status").String(); got != ws.argo {
				t.Errorf("health = %s (%s), want %s", got, hs.RawGetString("message"), ws.argo)
			}
		})
	}
}

func TestFluxHealthExpressionsAgainstWrittenStatus(t *testing.T) {
	current, failed := fluxExprsFromDocs(t)
	env, err := cel.NewEnv(cel.Variable("status", cel.DynType), cel.Variable("metadata", cel.DynType), cel.Variable("spec", cel.DynType))
	if err != nil {
		t.Fatal(err)
	}
	eval := func(expr string, obj map[string]any) (bool, error) {
		ast, iss := env.Compile(expr)
		if iss.Err() != nil {
			t.Fatalf("compile %q: %v", expr, iss.Err())
		}
		prg, err := env.Program(ast)
		if err != nil {
			t.Fatal(err)
		}
		vars := map[string]any{"metadata": obj["metadata"], "spec": obj["spec"], "status": obj["status"]}
		if vars["status"] == nil {
			vars["status"] = map[string]any{}
		}
		out, _, err := prg.Eval(vars)
		if err != nil {
			return false, err
		}
		b, _ := out.Value().(bool)
		return b, nil
	}
	for _, ws := range writtenStatuses(t) {
		t.Run(ws.name, func(t *testing.T) {
			gotCurrent, errC := eval(current, ws.obj)
			gotFailed, errF := eval(failed, ws.obj)
			if ws.fluxEvaluateFail {
				if errC == nil || errF == nil {
					t.Errorf("with no status the expressions evaluated (%v, %v); Flux must keep the object in progress", gotCurrent, gotFailed)
				}
				return
			}
			if errC != nil || errF != nil {
				t.Fatalf("evaluate: %v, %v", errC, errF)
			}
			if gotCurrent != ws.current || gotFailed != ws.failed {
				t.Errorf("current, failed = %v, %v; want %v, %v", gotCurrent, gotFailed, ws.current, ws.failed)
			}
		})
	}
}

// argoScriptFromDocs reads the health script exactly as docs/gitops.md shows it.
func argoScriptFromDocs(t *testing.T) string {
	t.Helper()
	lines := docsLines(t)
	var script []string
	in := false
	for _, l := range lines {
		switch {
		case strings.HasSuffix(l, "resource.customizations.health.upgradescope.basit.engineer_ClusterReadiness: |"):
			in = true
		case in && strings.HasPrefix(l, "```"):
			return strings.Join(script, "\n")
		case in:
			script = append(script, strings.TrimPrefix(l, "    "))
		}
	}
	t.Fatal("no Argo CD health script in docs/gitops.md")
	return ""
}

func fluxExprsFromDocs(t *testing.T) (current, failed string) {
	t.Helper()
	for _, l := range docsLines(t) {
		l = strings.TrimSpace(l)
		if v, ok := strings.CutPrefix(l, "current: "); ok {
			current = v
		}
		if v, ok := strings.CutPrefix(l, "failed: "); ok {
			failed = v
		}
	}
	if current == "" || failed == "" {
		t.Fatal("no Flux healthCheckExprs in docs/gitops.md")
	}
	return current, failed
}

func docsLines(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile("../docs/gitops.md")
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(string(raw), "\n")
}

// toLua converts a decoded JSON object into Lua tables, as Argo CD hands objects to scripts.
func toLua(L *lua.LState, v any) lua.LValue {
	switch x := v.(type) {
	case map[string]any:
		t := L.NewTable()
		for k, e := range x {
			t.RawSetString(k, toLua(L, e))
		}
		return t
	case []any:
		t := L.NewTable()
		for _, e := range x {
			t.Append(toLua(L, e))
		}
		return t
	case string:
		return lua.LString(x)
	case bool:
		return lua.LBool(x)
	case int64:
		return lua.LNumber(x)
	case float64:
		return lua.LNumber(x)
	case nil:
		return lua.LNil
	}
	return lua.LNil
}
