package mcpserver_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/open-policy-agent/opa/v1/rego"

	"github.com/upgradescope/upgradescope/bundles"
	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/mcpserver"
	"github.com/upgradescope/upgradescope/policies"
)

// packagesOfKeys evaluates each built-in pack's findings rule alone over the input the engine
// builds for doc, as opa eval would: which package makes each key.
func packagesOfKeys(t *testing.T, doc *inventory.Document, targets []string) map[string][]string {
	t.Helper()
	raw, err := json.Marshal(builtinEngine(t).Input(doc, targets, now))
	if err != nil {
		t.Fatal(err)
	}
	var input any
	if err := json.Unmarshal(raw, &input); err != nil {
		t.Fatal(err)
	}
	opts := []func(*rego.Rego){rego.Query(`some pack; key := data.upgradescope.rules[pack].findings[_].key`), rego.Input(input)}
	for _, b := range policies.Builtin {
		bu, err := bundles.ReadFS(b.FS)
		if err != nil {
			t.Fatal(err)
		}
		opts = append(opts, rego.ParsedBundle(b.Name, bu))
	}
	rs, err := rego.New(opts...).Eval(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, r := range rs {
		key, pack := r.Bindings["key"].(string), "data.upgradescope.rules."+r.Bindings["pack"].(string)
		if !slices.Contains(out[key], pack) {
			out[key] = append(out[key], pack)
		}
	}
	return out
}

func TestExplainFindingNamesThePackageWhoseFindingsRuleMadeTheKey(t *testing.T) {
	root := repoRoot(t)
	// Scenarios whose categories more than one pack makes: removed-api and deprecated-api
	// (apis, helm), chart-incompat (addons, helm; the helm pack's GitOps chart keys too).
	for _, dir := range []string{
		"helm-stored-manifest-removed-api", "helm-kubeversion-excludes-target", "helm-stored-object-flagged-live",
		"addon-compat-excludes-target", "addon-istio-lines", "preflight-live-stalls", "chart-advice-argocd-declared-version-blocks",
	} {
		t.Run(dir, func(t *testing.T) {
			file := filepath.Join("testdata", dir, "inventory.json")
			doc, err := inventory.ReadFile(filepath.Join(root, file))
			if err != nil {
				t.Fatal(err)
			}
			var args struct{ Targets []string }
			raw, err := os.ReadFile(filepath.Join(root, "testdata", dir, "args.json"))
			if err == nil {
				err = json.Unmarshal(raw, &args)
			}
			if err != nil {
				t.Fatal(err)
			}
			made := packagesOfKeys(t, doc, args.Targets)
			rep, err := builtinEngine(t).Evaluate(t.Context(), doc, args.Targets, now, engine.WithIgnore(nil))
			if err != nil {
				t.Fatal(err)
			}
			cs := connect(t, newServer(t, root), pipes)
			call[mcpserver.ScanAnswer](t, cs, "scan", map[string]any{"inventory": file, "targets": args.Targets})
			explained := 0
			for _, tr := range rep.Targets {
				for _, f := range tr.Findings {
					a, _ := call[mcpserver.ExplainAnswer](t, cs, "explain_finding", map[string]any{"key": f.Key, "target": tr.Target})
					if want := made[f.Key]; len(want) == 0 || !slices.Equal(a.Rule.Packages, want) {
						t.Errorf("%s: rule %+v, made by %v", f.Key, a.Rule, want)
					}
					explained++
				}
			}
			if explained == 0 {
				t.Error("no finding to explain")
			}
		})
	}
}
