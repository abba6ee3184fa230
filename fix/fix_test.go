package fix_test

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/upgradescope/upgradescope/fix"
	"github.com/upgradescope/upgradescope/internal/testenv/kbtest"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from fix's output; read every line before committing")

// tree writes files (name → content) under a new directory.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o640); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func scan(t *testing.T, root, target string) *fix.Plan {
	t.Helper()
	p, err := fix.Scan(root, fix.Options{KB: kbtest.Builtin(t), Target: target})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

const flowSchema = `apiVersion: flowcontrol.apiserver.k8s.io/v1beta3 # tuned in 1.26
kind: FlowSchema
metadata:
  name: batch-jobs
spec:
  priorityLevelConfiguration:
    name: workload-low
  matchingPrecedence: 1000
`

const deployment = `# unrelated
apiVersion: apps/v1
kind: Deployment
metadata: {name: api}
spec:
  selector:
    matchLabels: {app: api}
`

func TestAFixChangesOnlyTheConvertedObjectsLines(t *testing.T) {
	mixed := "# head comment\n---\n" + deployment + "---\n" + flowSchema + "---\n\n" + deployment
	dir := tree(t, map[string]string{"mixed.yaml": mixed, "other.yaml": deployment, "notes.txt": flowSchema})
	p := scan(t, dir, "1.37")
	changed := p.Changed()
	if len(changed) != 1 || changed[0].Path != "mixed.yaml" {
		t.Fatalf("changed files: %v; want mixed.yaml only", paths(changed))
	}
	want := strings.Replace(mixed, "flowcontrol.apiserver.k8s.io/v1beta3 # tuned", "flowcontrol.apiserver.k8s.io/v1 # tuned", 1)
	if got := string(changed[0].After); got != want {
		t.Errorf("mixed.yaml becomes:\n%s\nwant only the apiVersion line changed:\n%s", got, want)
	}
}

func paths(fs []*fix.File) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Path)
	}
	return out
}

func TestWriteIsIdempotentAndKeepsTheFilesMode(t *testing.T) {
	dir := tree(t, map[string]string{"a/flow.yaml": flowSchema, "b.yaml": deployment})
	if err := scan(t, dir, "1.37").Write(); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(filepath.Join(dir, "a/flow.yaml"))
	if err != nil || info.Mode().Perm() != 0o640 {
		t.Errorf("written file's mode: %v, %v; want 0640 kept", info.Mode(), err)
	}
	again := scan(t, dir, "1.37")
	if c := again.Changed(); len(c) != 0 || len(again.Manual()) != 0 {
		t.Errorf("a second fix still changes %v and lists %v; want nothing", paths(c), again.Manual())
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "a"))
	if len(entries) != 1 {
		t.Errorf("the directory holds %d entries after the write; want no temporary file left", len(entries))
	}
}

func TestWhatNeedsAPersonIsListedWithItsLineAndLeftUntouched(t *testing.T) {
	argo := strings.Replace(flowSchema, "  name: batch-jobs\n", "  name: batch-jobs\n  annotations:\n    argocd.argoproj.io/tracking-id: platform:flowcontrol.apiserver.k8s.io/FlowSchema:/batch-jobs\n", 1)
	flux := strings.Replace(flowSchema, "  name: batch-jobs\n", "  name: batch-jobs\n  labels:\n    helm.toolkit.fluxcd.io/name: apf\n    helm.toolkit.fluxcd.io/namespace: flux-system\n", 1)
	app := `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: platform, namespace: argocd}
spec:
  destination: {server: "https://kubernetes.default.svc"}
  source:
    repoURL: https://charts.example.com
    chart: platform
    targetRevision: 2.1.0
    helm:
      valueFiles: [values-prod.yaml]
`
	template := "apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata:\n  name: {{ .Release.Name }}\n"
	servedTemplate := "apiVersion: v1\nkind: Service\nmetadata:\n  name: {{ .Release.Name }}\n"
	files := map[string]string{"argo.yaml": argo, "flux.yaml": flux, "apps/platform.yaml": app,
		"chart/ingress.yaml": template, "chart/service.yaml": servedTemplate}
	dir := tree(t, files)
	p := scan(t, dir, "1.37")
	if c := p.Changed(); len(c) != 0 {
		t.Errorf("changed %v; want nothing touched", paths(c))
	}
	var got []string
	for _, it := range p.Manual() {
		got = append(got, it.String())
	}
	want := []string{
		"argo.yaml:1: FlowSchema batch-jobs (flowcontrol.apiserver.k8s.io/v1beta3): produced by Argo CD Application platform (Application at apps/platform.yaml:1; chart platform 2.1.0 from https://charts.example.com; values: apps/platform.yaml:11 (spec.source.helm.valueFiles)): change its source, since an edit of the rendered output is undone by the next sync",
		"chart/ingress.yaml:1: Ingress  (extensions/v1beta1): Helm template: no YAML to convert; change the chart (render it with helm template and run fix on the output to see the change)",
		"flux.yaml:1: FlowSchema batch-jobs (flowcontrol.apiserver.k8s.io/v1beta3): produced by Flux HelmRelease flux-system/apf (it is not among the files): change its source, since an edit of the rendered output is undone by the next sync",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("needs a person:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestARenderedDocumentIsConvertedWithANoteToChangeItsChart(t *testing.T) {
	dir := tree(t, map[string]string{"out.yaml": "---\n# Source: apf/templates/flowschema.yaml\n" + flowSchema})
	p := scan(t, dir, "1.37")
	notes := p.Notes()
	if len(p.Changed()) != 1 || len(notes) == 0 || notes[0].String() != "out.yaml:2: rendered from apf/templates/flowschema.yaml: change the chart's template too, or the next render brings it back" {
		t.Errorf("changed %v, notes %v; want the file changed with the chart named", paths(p.Changed()), notes)
	}
}

func TestAJSONStreamIsConvertedInItsKeyOrder(t *testing.T) {
	in := `{"apiVersion":"v1","kind":"Service","metadata":{"name":"a"}}
{"kind":"FlowSchema","apiVersion":"flowcontrol.apiserver.k8s.io/v1beta3","metadata":{"name":"b"},"spec":{"priorityLevelConfiguration":{"name":"x"}}}
`
	dir := tree(t, map[string]string{"s.json": in})
	p := scan(t, dir, "1.37")
	want := strings.Replace(in, "flowcontrol.apiserver.k8s.io/v1beta3", "flowcontrol.apiserver.k8s.io/v1", 1)
	if c := p.Changed(); len(c) != 1 || string(c[0].After) != want {
		t.Errorf("got %v; want only the apiVersion changed:\n%s", p.Changed(), want)
	}
}

func TestTheItemsOfAListAreConverted(t *testing.T) {
	in := "apiVersion: v1\nkind: List\nitems:\n- apiVersion: flowcontrol.apiserver.k8s.io/v1beta3\n  kind: FlowSchema\n  metadata:\n    name: a\n- apiVersion: v1\n  kind: Service\n  metadata:\n    name: b\n"
	p := scan(t, tree(t, map[string]string{"l.yaml": in}), "1.37")
	want := strings.Replace(in, "v1beta3", "v1", 1)
	if c := p.Changed(); len(c) != 1 || string(c[0].After) != want {
		t.Errorf("got %v; want the item's apiVersion changed", p.Changed())
	}
}

// Each fixture's fix is held to a golden diff, read by hand when it is written (-update).
func TestEveryFixturesFixIsItsGoldenDiff(t *testing.T) {
	paths, _ := filepath.Glob(filepath.Join("..", "convert", "testdata", "fixtures", "*.yaml"))
	if len(paths) == 0 {
		t.Skip("no fixtures in convert/testdata/fixtures yet")
	}
	k := kbtest.Builtin(t)
	for _, path := range paths {
		name := strings.TrimSuffix(filepath.Base(path), ".yaml")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			target := "1.37"
			for _, line := range strings.Split(string(data), "\n") {
				if v, ok := strings.CutPrefix(line, "# target: "); ok {
					target = strings.TrimSpace(v)
				}
			}
			p, err := fix.Scan(path, fix.Options{KB: k, Target: target})
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			if err := p.WriteDiff(&out); err != nil {
				t.Fatal(err)
			}
			p.WriteText(&out)
			if lean := leanDiff(t, path, target); lean != out.String() {
				t.Errorf("the plan that keeps only the diff prints:\n%s\nwant as the one keeping everything:\n%s", lean, out.String())
			}
			golden := filepath.Join("testdata", "golden", name+".diff")
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("read golden (go test ./fix -run Golden -update, then read it): %v", err)
			}
			if out.String() != string(want) {
				t.Errorf("%s differs:\n%s\nwant:\n%s", golden, out.String(), want)
			}
		})
	}
}

func TestACustomResourceMovesToTheVersionItsCRDServes(t *testing.T) {
	schema := "      schema:\n        openAPIV3Schema:\n          type: object\n          properties:\n            spec:\n              type: object\n              properties:\n                size: {type: integer}\n"
	crd := "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.example.com\nspec:\n  group: example.com\n  names: {kind: Widget, plural: widgets}\n  scope: Namespaced\n  versions:\n    - name: v1beta1\n      served: false\n      storage: false\n" + schema + "    - name: v1\n      served: true\n      storage: true\n" + schema
	cr := "apiVersion: example.com/v1beta1 # the old one\nkind: Widget\nmetadata:\n  name: w\nspec:\n  size: 3\n"
	dir := tree(t, map[string]string{"crd.yaml": crd, "w.yaml": cr})
	want := strings.Replace(cr, "example.com/v1beta1", "example.com/v1", 1)
	for _, skipServed := range []bool{false, true} {
		p, err := fix.Scan(dir, fix.Options{KB: kbtest.Builtin(t), Target: "1.37", SkipServed: skipServed})
		if err != nil {
			t.Fatal(err)
		}
		if c := p.Changed(); len(c) != 1 || string(c[0].After) != want || len(p.Manual()) != 0 {
			t.Errorf("SkipServed %v: changed %v, manual %v; want w.yaml at example.com/v1", skipServed, paths(c), p.Manual())
		}
	}
}

func TestWriteLeavesAFileThatChangedSinceItWasReadAndWritesTheOthers(t *testing.T) {
	for _, retain := range []fix.Retain{fix.RetainAll, fix.RetainWrite} {
		writeLeavesAFileThatChangedSinceItWasRead(t, retain)
	}
}

func writeLeavesAFileThatChangedSinceItWasRead(t *testing.T, retain fix.Retain) {
	dir := tree(t, map[string]string{"a.yaml": flowSchema, "b.yaml": flowSchema})
	p, err := fix.Scan(dir, fix.Options{KB: kbtest.Builtin(t), Target: "1.37", Retain: retain})
	if err != nil {
		t.Fatal(err)
	}
	edited := flowSchema + "# edited meanwhile\n"
	if err := os.WriteFile(filepath.Join(dir, "a.yaml"), []byte(edited), 0o640); err != nil {
		t.Fatal(err)
	}
	err = p.Write()
	if !errors.Is(err, fix.ErrChangedSinceRead) || !strings.Contains(err.Error(), "a.yaml") {
		t.Errorf("Write: %v; want a.yaml named as changed since it was read", err)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "a.yaml")); string(got) != edited {
		t.Errorf("a.yaml is now:\n%s\nwant the edit kept", got)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "b.yaml")); !strings.Contains(string(got), "flowcontrol.apiserver.k8s.io/v1 ") {
		t.Errorf("b.yaml is now:\n%s\nwant it converted", got)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("the directory holds %d entries; want no temporary file left", len(entries))
	}
}

func TestTwoWritesOfTheSamePlanBothSucceed(t *testing.T) {
	dir := tree(t, map[string]string{"a.yaml": flowSchema})
	first, second := scan(t, dir, "1.37"), scan(t, dir, "1.37")
	if err := first.Write(); err != nil {
		t.Fatal(err)
	}
	if err := second.Write(); err != nil {
		t.Errorf("the second write of the same conversion: %v; want none", err)
	}
}

// leanDiff is what fix prints of path as the CLI plans it: unparsed served documents, and
// only each changed file's diff kept.
func leanDiff(t *testing.T, path, target string) string {
	t.Helper()
	p, err := fix.Scan(path, fix.Options{KB: kbtest.Builtin(t), Target: target, SkipServed: true, Retain: fix.RetainDiff})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := p.WriteDiff(&out); err != nil {
		t.Fatal(err)
	}
	p.WriteText(&out)
	return out.String()
}
