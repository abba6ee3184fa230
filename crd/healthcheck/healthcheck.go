// Package healthcheck runs the ClusterReadiness health checks docs/gitops.md publishes: the
// Argo CD Lua script under gopher-lua (the Lua engine Argo CD embeds) and the Flux
// healthCheckExprs under cel-go (the CEL engine Flux uses). Tests use it so that what users
// copy from the page is what was tested.
package healthcheck

import (
	"fmt"
	"os"
	"strings"

	"github.com/google/cel-go/cel"
	lua "github.com/yuin/gopher-lua"
)

// Recipes are the health checks as the docs page shows them.
type Recipes struct {
	ArgoScript              string
	FluxCurrent, FluxFailed string
}

// FromDocs reads the recipes from docs/gitops.md.
func FromDocs(path string) (Recipes, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return Recipes{}, err
	}
	var r Recipes
	var script []string
	in := false
	for _, l := range strings.Split(string(raw), "\n") {
		switch {
		case strings.HasSuffix(l, "resource.customizations.health.upgradescope.basit.engineer_ClusterReadiness: |"):
			in = true
		case in && strings.HasPrefix(l, "```"):
			in = false
			r.ArgoScript = strings.Join(script, "\n")
		case in:
			script = append(script, strings.TrimPrefix(l, "    "))
		}
		t := strings.TrimSpace(l)
		if v, ok := strings.CutPrefix(t, "current: "); ok {
			r.FluxCurrent = v
		}
		if v, ok := strings.CutPrefix(t, "failed: "); ok {
			r.FluxFailed = v
		}
	}
	if r.ArgoScript == "" || r.FluxCurrent == "" || r.FluxFailed == "" {
		return r, fmt.Errorf("%s: the Argo CD script or the Flux expressions are missing", path)
	}
	return r, nil
}

// Argo runs the Lua script over obj and returns the health status it reports.
func (r Recipes) Argo(obj map[string]any) (status, message string, err error) {
	L := lua.NewState()
	defer L.Close()
	L.SetGlobal("obj", toLua(L, obj))
	if err := L.DoString("function health()\n" + r.ArgoScript + "\nend"); err != nil {
		return "", "", err
	}
	if err := L.CallByParam(lua.P{Fn: L.GetGlobal("health"), NRet: 1, Protect: true}); err != nil {
		return "", "", err
	}
	hs, ok := L.Get(-1).(*lua.LTable)
	if !ok {
		return "", "", fmt.Errorf("the script returned %v, not a table", L.Get(-1))
	}
	return hs.RawGetString("status").String(), hs.RawGetString("message").String(), nil
}

// Flux evaluates the current and failed expressions over obj's top-level fields, as Flux does.
func (r Recipes) Flux(obj map[string]any) (current, failed bool, err error) {
	env, err := cel.NewEnv(cel.Variable("status", cel.DynType), cel.Variable("metadata", cel.DynType), cel.Variable("spec", cel.DynType))
	if err != nil {
		return false, false, err
	}
	vars := map[string]any{"metadata": obj["metadata"], "spec": obj["spec"], "status": obj["status"]}
	if vars["status"] == nil {
		vars["status"] = map[string]any{}
	}
	eval := func(expr string) (bool, error) {
		ast, iss := env.Compile(expr)
		if iss.Err() != nil {
			return false, fmt.Errorf("compile %q: %w", expr, iss.Err())
		}
		prg, err := env.Program(ast)
		if err != nil {
			return false, err
		}
		out, _, err := prg.Eval(vars)
		if err != nil {
			return false, err
		}
		b, _ := out.Value().(bool)
		return b, nil
	}
	if current, err = eval(r.FluxCurrent); err != nil {
		return false, false, err
	}
	failed, err = eval(r.FluxFailed)
	return current, failed, err
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
	}
	return lua.LNil
}
