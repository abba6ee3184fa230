package engine_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/bundle"

	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/inventory"
)

func writePack(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func prodInventory() *inventory.Document {
	return &inventory.Document{
		SchemaVersion: 1, Source: inventory.SourceFiles, CollectedAt: now,
		Capabilities: map[string]inventory.Capability{inventory.CapAPIUsage: {Available: true}},
		APIUsage: []inventory.APIUsage{{
			Group: "", Version: "v1", Kind: "Endpoints", Count: 1,
			Namespaces: map[string]int{"prod-web": 1},
			Objects:    []inventory.ObjectRef{{Namespace: "prod-web", Name: "db"}},
		}},
	}
}

func TestExampleCustomPackAddsItsFindingsBesideTheBuiltins(t *testing.T) {
	eng := newEngine(t, engine.WithPolicy("../examples/policies"))
	r, err := eng.Evaluate(context.Background(), prodInventory(), []string{"1.37"}, now)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, f := range r.Targets[0].Findings {
		keys = append(keys, f.Pack+" "+f.Key)
	}
	want := "custom/acme acme-prod-deprecated/core/v1/Endpoints"
	if len(keys) != 2 || keys[0] != want {
		t.Errorf("findings = %q, want the acme warning first, then the built-in info", keys)
	}
	if len(r.Bundles) != 3 || r.Bundles[2].Roots[0] != "upgradescope/custom/acme" {
		t.Errorf("bundles = %+v, want the custom pack named with its derived root", r.Bundles)
	}
}

func TestCustomPacksThatBreakTheRulesAreRefused(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  []string
	}{
		{
			name: "a package outside upgradescope/custom is refused by OPA with file and line",
			files: map[string]string{
				"upgradescope/custom/ok/ok.rego":    "package upgradescope.custom.ok\n\nfindings := set()\n",
				"upgradescope/rules/evil/evil.rego": "package upgradescope.rules.evil\n\nfindings contains 1\n",
			},
			want: []string{"evil.rego:1", "upgradescope.rules.evil", "outside the bundle's roots"},
		},
		{
			name:  "a manifest that claims a built-in root is refused",
			files: map[string]string{".manifest": `{"roots": ["upgradescope/rules"]}`, "x.rego": "package upgradescope.rules.x\n"},
			want:  []string{`root "upgradescope/rules" is outside upgradescope/custom/<name>`},
		},
		{
			name:  "network builtins are unavailable",
			files: map[string]string{"net.rego": "package upgradescope.custom.net\n\nfindings contains http.send({\"method\": \"get\", \"url\": \"http://127.0.0.1\"}) if false\n"},
			want:  []string{"net.rego:3", "http.send"},
		},
		{
			name:  "the clock is unavailable: the same input must give the same report",
			files: map[string]string{"clock.rego": "package upgradescope.custom.clock\n\nfindings contains time.now_ns() if false\n"},
			want:  []string{"clock.rego:3", "time.now_ns"},
		},
		{
			name:  "randomness is unavailable",
			files: map[string]string{"rand.rego": "package upgradescope.custom.rand\n\nfindings contains uuid.rfc4122(\"x\") if false\n"},
			want:  []string{"rand.rego:3", "uuid.rfc4122"},
		},
		{
			name:  "a syntax error gets OPA's message with its line",
			files: map[string]string{"bad.rego": "package upgradescope.custom.bad\n\nfindings contains f if {\n"},
			want:  []string{"bad.rego:4", "rego_parse_error"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writePack(t, tt.files)
			_, err := engine.New(context.Background(), engine.WithPolicy(dir))
			if err == nil {
				t.Fatal("engine.New accepted the pack")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestRefusedBuiltinsAreACopyOfWhatTheEngineRefuses(t *testing.T) {
	got := engine.RefusedBuiltins()
	for _, b := range []string{"http.send", "net.lookup_ip_addr", "time.now_ns", "rand.intn", "uuid.rfc4122"} {
		if _, ok := got[b]; !ok {
			t.Errorf("%s is not refused", b)
		}
	}
	delete(got, "http.send")
	if _, ok := engine.RefusedBuiltins()["http.send"]; !ok {
		t.Error("deleting from the returned map changed the engine's list")
	}
}

func TestFindingsThatBreakTheContractFailTheEvaluation(t *testing.T) {
	dir := writePack(t, map[string]string{"p.rego": `package upgradescope.custom.sloppy

findings contains {"key": "sloppy/x", "category": "sloppy", "severity": "fatal", "target": t, "title": "x"} if some t in input.targets
`})
	eng := newEngine(t, engine.WithPolicy(dir))
	_, err := eng.Evaluate(context.Background(), prodInventory(), []string{"1.37"}, now)
	if err == nil || !strings.Contains(err.Error(), `custom/sloppy`) || !strings.Contains(err.Error(), `"severity":"fatal"`) {
		t.Errorf("Evaluate = %v, want a contract error naming the pack and the severity", err)
	}
}

// Each hole in the findings contract fails the evaluation with an error naming the pack and
// the rule it breaks; none leaves the verdict to the built-in findings alone.
func TestEveryBreachOfTheFindingsContractNamesThePack(t *testing.T) {
	const good = `{"key": "acme/x", "category": "acme", "severity": "blocker", "target": t, "title": "x"}`
	tests := []struct {
		name string
		rego string
		want []string
	}{
		{
			name: "a finding that is not an object",
			rego: "package upgradescope.custom.acme\n\nfindings contains \"blocker\"\n",
			want: []string{"custom/acme", "a finding must be an object", `"blocker"`},
		},
		{
			name: "findings that are a string, not a set",
			rego: "package upgradescope.custom.acme\n\nfindings := \"a string\"\n",
			want: []string{"custom/acme", "findings must be a set of objects"},
		},
		{
			name: "namespaces that are a number",
			rego: "package upgradescope.custom.acme\n\nfindings contains object.union(" + good + `, {"namespaces": 3}) if some t in input.targets` + "\n",
			want: []string{"custom/acme", "namespaces must be an array of strings"},
		},
		{
			name: "objects whose line is a string",
			rego: "package upgradescope.custom.acme\n\nfindings contains object.union(" + good + `, {"objects": [{"name": "a", "line": "3"}]}) if some t in input.targets` + "\n",
			want: []string{"custom/acme", "objects must be an array of objects with a string name"},
		},
		{
			name: "a sub-package's finding that is not an object",
			rego: "package upgradescope.custom.acme.sub\n\nfindings contains 7\n",
			want: []string{"custom/acme/sub", "a finding must be an object"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eng := newEngine(t, engine.WithPolicy(writePack(t, map[string]string{"p.rego": tt.rego})))
			r, err := eng.Evaluate(context.Background(), prodInventory(), []string{"1.37"}, now)
			if err == nil {
				t.Fatalf("Evaluate accepted the pack: verdict %s", r.Targets[0].Verdict)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestASubPackagesBlockerCounts(t *testing.T) {
	dir := writePack(t, map[string]string{"p.rego": `package upgradescope.custom.acme.sub

findings contains {"key": "acme/x", "category": "acme", "severity": "blocker", "target": t, "title": "x"} if some t in input.targets
`})
	r, err := newEngine(t, engine.WithPolicy(dir)).Evaluate(context.Background(), prodInventory(), []string{"1.37"}, now)
	if err != nil {
		t.Fatal(err)
	}
	if r.Targets[0].Verdict != "blocked" || r.Targets[0].Findings[0].Pack != "custom/acme/sub" {
		t.Errorf("verdict %s, findings %+v: want blocked by custom/acme/sub", r.Targets[0].Verdict, r.Targets[0].Findings)
	}
}

func TestPackagesNestedTooDeepAreRefused(t *testing.T) {
	deep := "package upgradescope.custom.acme.sub.deeper\n\nfindings contains {\"key\": \"acme/x\", \"category\": \"acme\", \"severity\": \"blocker\", \"target\": \"1.37\", \"title\": \"x\"}\n"
	dir := writePack(t, map[string]string{"deep.rego": deep})
	_, err := engine.New(context.Background(), engine.WithPolicy(dir))
	for _, w := range []string{"deep.rego:1", "upgradescope.custom.acme.sub.deeper", "nested too deep"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("New = %v, want an error mentioning %q", err, w)
		}
	}
	b := bundle.Bundle{
		Manifest: bundle.Manifest{Revision: "1", Roots: &[]string{"upgradescope/custom/acme"}},
		Modules:  []bundle.ModuleFile{{URL: "/deep.rego", Path: "/deep.rego", Raw: []byte(deep)}},
		Data:     map[string]any{},
	}
	var buf bytes.Buffer
	if err := bundle.NewWriter(&buf).Write(b); err != nil {
		t.Fatal(err)
	}
	read, err := bundle.NewReader(bytes.NewReader(buf.Bytes())).Read()
	if err != nil {
		t.Fatal(err)
	}
	_, err = engine.New(context.Background(), engine.WithBundle("acme.tar.gz", &read, ""))
	if err == nil || !strings.Contains(err.Error(), "acme.tar.gz") || !strings.Contains(err.Error(), "nested too deep") {
		t.Errorf("New with the bundle = %v, want it refused naming acme.tar.gz", err)
	}
}

func TestCustomPackAsABundleTarball(t *testing.T) {
	rego := "package upgradescope.custom.tar\n\nfindings contains {\"key\": \"tar/x\", \"category\": \"tar\", \"severity\": \"info\", \"target\": t, \"title\": \"from a tarball\"} if some t in input.targets\n"
	b := bundle.Bundle{
		Manifest: bundle.Manifest{Revision: "7", Roots: &[]string{"upgradescope/custom/tar"}},
		Modules:  []bundle.ModuleFile{{URL: "/tar.rego", Path: "/tar.rego", Raw: []byte(rego)}},
		Data:     map[string]any{},
	}
	var buf bytes.Buffer
	if err := bundle.NewWriter(&buf).Write(b); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "tar.tar.gz")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	eng := newEngine(t, engine.WithPolicy(path))
	r, err := eng.Evaluate(context.Background(), prodInventory(), []string{"1.37"}, now)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range r.Targets[0].Findings {
		found = found || f.Key == "tar/x" && f.Pack == "custom/tar"
	}
	if !found || r.Bundles[2].Revision != "7" {
		t.Errorf("findings %+v, bundles %+v: want tar/x from revision 7", r.Targets[0].Findings, r.Bundles)
	}
}

// TestCustomPacksReadTheFacts holds input.facts to the contract docs/custom-rules.md states,
// kubeVersion included: the built-in rules no longer read it, so it is converted only when a
// pack does; so is inventory.helmReleases, which a pack can still read whole.
func TestCustomPacksReadTheFacts(t *testing.T) {
	dir := writePack(t, map[string]string{"p.rego": `package upgradescope.custom.acme

findings contains {"key": sprintf("acme/%s", [key]), "category": "acme", "severity": "info", "target": t, "title": title} if {
	some key, per_target in input.facts.kubeVersion
	some t, fact in per_target
	title := sprintf("%s %v %v %v %s %d", [
		fact, input.facts.kubeVersionFlagged, input.facts.helmChartIndex, input.facts.helmManifestApis,
		input.facts.helmReleases[0].name, count(input.inventory.helmReleases),
	])
}
`})
	inv := prodInventory()
	inv.HelmReleases = []inventory.HelmRelease{{
		Name: "shop", Namespace: "web", Chart: "shop", Status: "deployed", KubeVersion: "<1.33.0-0",
		ManifestAPIs: []inventory.APIUsage{{Group: "policy", Version: "v1beta1", Kind: "PodDisruptionBudget", Count: 1}},
	}}
	r, err := newEngine(t, engine.WithPolicy(dir)).Evaluate(context.Background(), inv, []string{"1.37"}, now)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range r.Targets[0].Findings {
		if f.Pack == "custom/acme" {
			got = append(got, f.Key+" "+f.Title)
		}
	}
	want := `acme/web/shop excludes [[0, "1.37", "excludes"]] {"shop": [0]} {"policy/v1beta1/PodDisruptionBudget": [0]} shop 1`
	if len(got) != 1 || got[0] != want {
		t.Errorf("custom findings = %q, want [%q]", got, want)
	}
}
