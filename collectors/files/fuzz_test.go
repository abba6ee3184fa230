package files

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/upgradescope/upgradescope/collectors/gitops"
	yaml "go.yaml.in/yaml/v3"
)

// FuzzDecodeFile feeds arbitrary bytes to the decoder as YAML and as JSON: it must never
// panic, and every object it records must carry its file and a line.
func FuzzDecodeFile(f *testing.F) {
	for _, seed := range []string{
		ing("a"),
		"--- |\napiVersion: v1\nkind: Endpoints\n",
		"apiVersion: v1\nkind: List\nitems: [null, {apiVersion: v1, kind: Endpoints, metadata: {name: x}}]\n",
		`{"apiVersion":"v1","kind":"EndpointsList","items":[{"apiVersion":"v1","kind":"Endpoints"}]}{"a":`,
		"a: &a [*a]\n<<: *a\n",
		"\ufeff---\r\napiVersion: extensions/v1beta1\r\nkind: Ingress\r\n...\r\n",
		"apiVersion: argoproj.io/v1alpha1\nkind: Application\nspec: &s {source: {chart: x, repoURL: &u 'oci://a@b/c'}, sources: [*s, {repoURL: *u}], destination: {namespace: 7}}\n",
		"apiVersion: helm.toolkit.fluxcd.io/v2\nkind: HelmRelease\nmetadata: {name: [a]}\nspec: {chartRef: {kind: OCIRepository, name: {x: 1}}}\n---\napiVersion: source.toolkit.fluxcd.io/v1\nkind: OCIRepository\nspec: {ref: {digest: 5}}\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		for _, name := range []string{"f.yaml", "f.json"} {
			p := filepath.Join(dir, name)
			if err := os.WriteFile(p, data, 0o600); err != nil {
				t.Fatal(err)
			}
			res := decodeFile(p, name, testOptions())
			gitops.FromManifests(res.gitops) // must not panic on whatever the objects hold
			for _, u := range res.observed.usage() {
				for _, o := range u.Objects {
					if o.File != name || o.Line < 1 {
						t.Errorf("recorded %+v without its file and line", o)
					}
				}
			}
		}
	})
}

// FuzzNodeBound checks that the count a document is refused by never undercounts: whatever
// the parser makes of the bytes has at most nodeBound nodes.
func FuzzNodeBound(f *testing.F) {
	for _, seed := range []string{
		"a: 1\nb: [1, {c, d}]\n", "- - - a\n", "? a\n? b\n: c\n", "{a, b,}\n", "a: &x [1]\nb: *x\n",
		"--- |\n  text\n", "[a: 1, b: 2]\n", "{\"a\": [1, 2], \"b\": {}}\n", "!!map {? a}\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var root yaml.Node
		if yaml.Unmarshal(data, &root) != nil {
			return
		}
		if bound, parsed := nodeBound(data), countNodes(&root); bound < parsed {
			t.Errorf("nodeBound = %d, but %q parses into %d nodes", bound, data, parsed)
		}
	})
}
