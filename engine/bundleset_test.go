package engine_test

import (
	"context"
	"encoding/json"
	"io/fs"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/bundle"

	"github.com/upgradescope/upgradescope/bundles"
	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/policies"
	"github.com/upgradescope/upgradescope/report"
)

// parsed reads an embedded bundle afresh, so a test may change it.
func parsed(t testing.TB, fsys fs.FS) *bundle.Bundle {
	t.Helper()
	b, err := bundles.ReadFS(fsys)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// kbWithHorizon is the shipped kb as a later revision that knows only up to horizon.
func kbWithHorizon(t testing.TB, revision, horizon string) *bundle.Bundle {
	b := parsed(t, policies.KB)
	b.Manifest.Revision = revision
	b.Data["upgradescope"].(map[string]any)["kb"].(map[string]any)["meta"].(map[string]any)["horizon"] = horizon
	return b
}

func customBundle(t *testing.T, root, pkg string) *bundle.Bundle {
	t.Helper()
	src := "package " + pkg + "\n\nfindings contains {\"key\": \"x/y\", \"category\": \"x\", \"severity\": \"info\", \"target\": t, \"title\": \"t\"} if some t in input.targets\n"
	m, err := ast.ParseModuleWithOpts("/p.rego", src, ast.ParserOptions{RegoVersion: ast.RegoV1})
	if err != nil {
		t.Fatal(err)
	}
	roots := []string{root}
	return &bundle.Bundle{
		Manifest: bundle.Manifest{Revision: "c1", Roots: &roots},
		Modules:  []bundle.ModuleFile{{Path: "/p.rego", URL: "/p.rego", Raw: []byte(src), Parsed: m}},
		Data:     map[string]any{},
	}
}

func TestAKBBundleWithTheBuiltinRootsReplacesTheEmbeddedOne(t *testing.T) {
	ctx := context.Background()
	eng := newEngine(t, engine.WithBundle("https://bundles.example/kb.tar.gz", kbWithHorizon(t, "2027-01-05.1", "1.36"), ""))
	r, err := eng.Evaluate(ctx, prodInventory(), []string{"1.37"}, now)
	if err != nil {
		t.Fatal(err)
	}
	got := r.Bundles[1]
	if len(r.Bundles) != 2 || got.Name != "kb" || got.Revision != "2027-01-05.1" || got.Source != "https://bundles.example/kb.tar.gz" {
		t.Errorf("bundles = %+v, want rules embedded and kb 2027-01-05.1 from its URL", r.Bundles)
	}
	if r.KB.Horizon != "1.36" || r.Targets[0].Verdict != report.VerdictUnknown {
		t.Errorf("horizon %s, verdict %s: the replacement kb must be the one judged with", r.KB.Horizon, r.Targets[0].Verdict)
	}
}

func TestBundleSetsThatCannotBeEvaluatedSafelyAreRefused(t *testing.T) {
	noMeta := parsed(t, policies.KB)
	delete(noMeta.Data["upgradescope"].(map[string]any)["kb"].(map[string]any), "meta")
	future := parsed(t, policies.KB)
	future.Manifest.Revision = "2030-01-01.1"
	future.Manifest.Metadata["minEngineVersion"] = "99.0.0"
	noRoots := customBundle(t, "upgradescope/custom/a", "upgradescope.custom.a")
	noRoots.Manifest.Roots = nil
	brokenRules := parsed(t, policies.Rules)
	brokenRules.Modules = nil
	smuggling := parsed(t, policies.KB)
	smuggling.Modules = customBundle(t, "upgradescope/custom/x", "upgradescope.rules.apis").Modules
	tests := []struct {
		name      string
		opts      []engine.Option
		wantError string
	}{
		{"a bundle needing a newer engine names both versions", []engine.Option{engine.WithBundle("kb.tar.gz", future, "")},
			"bundle kb revision 2030-01-01.1 (kb.tar.gz) needs upgradescope engine 99.0.0 or newer; this engine is " + engine.Version},
		{"two custom bundles with the same root overlap", []engine.Option{
			engine.WithBundle("a.tar.gz", customBundle(t, "upgradescope/custom/a", "upgradescope.custom.a"), ""),
			engine.WithBundle("b.tar.gz", customBundle(t, "upgradescope/custom/a", "upgradescope.custom.a"), "")}, "overlap"},
		{"a custom root inside another's overlaps", []engine.Option{
			engine.WithBundle("a.tar.gz", customBundle(t, "upgradescope/custom/a", "upgradescope.custom.a"), ""),
			engine.WithBundle("b.tar.gz", customBundle(t, "upgradescope/custom/a/b", "upgradescope.custom.a.b"), "")}, `roots "upgradescope/custom/a" and "upgradescope/custom/a/b"`},
		{"a bundle claiming part of a built-in root is refused", []engine.Option{
			engine.WithBundle("evil.tar.gz", customBundle(t, "upgradescope/rules/apis", "upgradescope.rules.apis"), "")}, `root "upgradescope/rules/apis" is neither a built-in bundle's roots`},
		{"a bundle without roots would own everything", []engine.Option{engine.WithBundle("all.tar.gz", noRoots, "")}, "names no roots"},
		{"a kb without meta is refused", []engine.Option{engine.WithBundle("kb.tar.gz", noMeta, "")}, "has no horizon"},
		{"two replacements of one built-in are refused", []engine.Option{
			engine.WithBundle("kb1.tar.gz", kbWithHorizon(t, "1", "1.37"), ""), engine.WithBundle("kb2.tar.gz", kbWithHorizon(t, "2", "1.37"), "")},
			"bundles kb1.tar.gz and kb2.tar.gz both replace the built-in kb bundle"},
		{"a kb carrying a module outside its root is refused", []engine.Option{engine.WithBundle("kb.tar.gz", smuggling, "")},
			"package upgradescope.rules.apis is outside the bundle's roots [upgradescope/kb]"},
		{"rules that cannot produce a report are refused at load", []engine.Option{engine.WithBundle("rules.tar.gz", brokenRules, "")}, "cannot produce a report"},
		{"an older engine refuses the shipped bundles too", []engine.Option{engine.WithEngineVersion("0.1.0")}, "this engine is 0.1.0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := engine.New(context.Background(), tt.opts...)
			if err == nil || !strings.Contains(err.Error(), tt.wantError) {
				t.Errorf("err = %v, want one containing %q", err, tt.wantError)
			}
		})
	}
}

func TestACustomBundleLoadsBesideBothBuiltins(t *testing.T) {
	eng := newEngine(t, engine.WithBundle("team.tar.gz", customBundle(t, "upgradescope/custom/team", "upgradescope.custom.team"), ""))
	r, err := eng.Evaluate(context.Background(), prodInventory(), []string{"1.37"}, now)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{}
	for _, b := range r.Bundles {
		names = append(names, b.Name+"@"+b.Revision+"@"+b.Source)
	}
	if strings.Join(names, " ") != "rules@"+policies.RulesRevision+"@embedded kb@"+policies.KBRevision+"@embedded team.tar.gz@c1@team.tar.gz" {
		t.Errorf("bundles = %v", names)
	}
	found := false
	for _, f := range r.Targets[0].Findings {
		found = found || f.Key == "x/y" && f.Pack == "custom/team"
	}
	if !found {
		t.Errorf("findings %+v lack the team pack's x/y", r.Targets[0].Findings)
	}
}

// The kb manifest's metadata repeats what the data says, so `bundle inspect` shows it
// without reading the data; they must agree.
func TestTheKBManifestAgreesWithItsData(t *testing.T) {
	b := parsed(t, policies.KB)
	raw, _ := json.Marshal(b.Data["upgradescope"].(map[string]any)["kb"].(map[string]any)["meta"])
	var meta struct{ Horizon string }
	_ = json.Unmarshal(raw, &meta)
	if b.Manifest.Metadata["horizon"] != meta.Horizon {
		t.Errorf(".manifest horizon %v, kb/meta horizon %s", b.Manifest.Metadata["horizon"], meta.Horizon)
	}
	for _, key := range []string{"registryDate", "minEngineVersion"} {
		if s, _ := b.Manifest.Metadata[key].(string); s == "" {
			t.Errorf(".manifest metadata lacks %s: %v", key, b.Manifest.Metadata)
		}
	}
}

// The Knowledge page lists the add-on registry from the kb's data: a registry that does
// not decode is a broken kb, refused like one without a horizon rather than shown empty.
func TestAKnowledgeBaseWhoseAddonRegistryDoesNotDecodeIsRefused(t *testing.T) {
	for _, tc := range []struct {
		name   string
		addons any
	}{
		{"a list instead of a map by id", []any{"containerd"}},
		{"a support status that is not an object", map[string]any{"containerd": map[string]any{"support": "supported"}}},
		{"release lines that are not a list", map[string]any{"containerd": map[string]any{"lines": "1.7"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			kb := parsed(t, policies.KB)
			kb.Data["upgradescope"].(map[string]any)["kb"].(map[string]any)["addons"] = tc.addons
			_, err := engine.New(context.Background(), engine.WithBundle("kb.tar.gz", kb, ""))
			if err == nil || !strings.Contains(err.Error(), "kb bundle (kb.tar.gz): /upgradescope/kb/addons") {
				t.Errorf("err = %v, want the kb refused naming /upgradescope/kb/addons", err)
			}
		})
	}
}
