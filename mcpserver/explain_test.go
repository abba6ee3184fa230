package mcpserver_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/upgradescope/upgradescope/collectors/files"
	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/fix"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/mcpserver"
	"github.com/upgradescope/upgradescope/policies"
	"github.com/upgradescope/upgradescope/report"
)

// cliInventory collects dir as scan --files does.
func cliInventory(t *testing.T, eng *engine.Engine, dir string) *inventory.Document {
	t.Helper()
	res, err := files.Collect(dir, files.Options{Observe: eng.Observe(), TeamLabel: "team"})
	if err != nil {
		t.Fatal(err)
	}
	return files.Inventory(res, now)
}

// cliReport judges dir with eng as scan --files does, for answers to be held to.
func cliReport(t *testing.T, eng *engine.Engine, dir string, targets []string, opts ...engine.EvalOption) *report.Report {
	t.Helper()
	rep, err := eng.Evaluate(context.Background(), cliInventory(t, eng, dir), targets, now, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// cliFinding is the finding key at target in rep.
func cliFinding(t *testing.T, rep *report.Report, target, key string) report.Finding {
	t.Helper()
	for _, tr := range rep.Targets {
		for _, f := range tr.Findings {
			if tr.Target == target && f.Key == key {
				return f
			}
		}
	}
	t.Fatalf("the CLI's report has no %s at %s", key, target)
	return report.Finding{}
}

// cliFix plans upgradescope fix --files dir --target target as the CLI does, keeping the
// bytes every output reads.
func cliFix(t *testing.T, dir, target string) *fix.Plan {
	t.Helper()
	plan, err := fix.Scan(dir, fix.Options{KB: builtinEngine(t).KB(), Target: target, SkipServed: true})
	if err != nil {
		t.Fatal(err)
	}
	return plan
}

// fileDiff is the CLI's diff of one file of plan.
func fileDiff(t *testing.T, plan *fix.Plan, path string) string {
	t.Helper()
	for _, f := range plan.Changed() {
		if f.Path == path {
			var b bytes.Buffer
			if err := (&fix.Plan{Files: []fix.File{*f}}).WriteDiff(&b); err != nil {
				t.Fatal(err)
			}
			return b.String()
		}
	}
	t.Fatalf("fix does not change %s", path)
	return ""
}

// scanned scans path at targets through cs and returns the scan's id.
func scanned(t *testing.T, cs *mcp.ClientSession, path string, targets ...string) string {
	t.Helper()
	a, _ := call[mcpserver.ScanAnswer](t, cs, "scan", map[string]any{"path": path, "targets": targets})
	return a.Scan
}

func TestExplainFindingAnswersTheFindingAndTheFixTheCLIReports(t *testing.T) {
	root := repoRoot(t)
	dir := filepath.Join(root, "examples", "manifests")
	const key = "removed-api/extensions/v1beta1/Ingress"
	want := cliFinding(t, cliReport(t, builtinEngine(t), dir, []string{"1.37"}), "1.37", key)
	made := packagesOfKeys(t, cliInventory(t, builtinEngine(t), dir), []string{"1.37"})
	plan := cliFix(t, dir, "1.37")
	var wantNotes []string
	for _, it := range plan.Notes() {
		if it.File == "ingress.yaml" {
			wantNotes = append(wantNotes, it.String())
		}
	}
	for _, tr := range transports {
		t.Run(string(tr), func(t *testing.T) {
			cs := connect(t, newServer(t, root), tr)
			id := scanned(t, cs, "examples/manifests", "1.37")
			a, _ := call[mcpserver.ExplainAnswer](t, cs, "explain_finding", map[string]any{"key": key})
			if a.Scan != id || a.Key != key || a.Target != "1.37" || a.Severity != want.Severity || a.Category != want.Category ||
				a.Title != want.Title || a.Detail != want.Detail || a.Remediation != want.Remediation {
				t.Errorf("answer = %+v, want the CLI's finding %+v of %s", a, want, id)
			}
			if !slices.Equal(a.Citations, want.Citations) || !slices.Equal(a.Teams, want.Teams) || len(a.Clipped) != 0 {
				t.Errorf("citations %v teams %v clipped %v, want the CLI's %v %v whole", a.Citations, a.Teams, a.Clipped, want.Citations, want.Teams)
			}
			if len(a.Objects) != 1 || !strings.HasPrefix(a.Objects[0], fmt.Sprintf("%s:%d ", want.Objects[0].File, want.Objects[0].Line)) || a.ObjectsTotal != 1 || a.Next != "" {
				t.Errorf("objects = %v (total %d), want %s:%d alone", a.Objects, a.ObjectsTotal, want.Objects[0].File, want.Objects[0].Line)
			}
			rule := mcpserver.RuleFired{Bundle: "rules " + policies.RulesRevision, Packages: made[key], Title: a.Rule.Title}
			if a.Rule == nil || !equalRule(*a.Rule, rule) || a.Rule.Title == "" {
				t.Errorf("rule = %+v, want %+v, the package whose findings rule makes the key, with its title", a.Rule, rule)
			}
			if a.Fix == nil {
				t.Fatal("no fix, want what upgradescope fix changes in ingress.yaml")
			}
			if !slices.Equal(a.Fix.Files, []string{"ingress.yaml"}) || !slices.Equal(a.Fix.Objects, []string{"ingress.yaml:4 Ingress shop/shop: extensions/v1beta1 → networking.k8s.io/v1"}) ||
				!slices.Equal(a.Fix.Notes, wantNotes) || len(a.Fix.Manual) != 0 {
				t.Errorf("fix = %+v, want ingress.yaml's conversion and the notes %v", a.Fix, wantNotes)
			}
			// The whole diff takes more than the answer has left: its first hunks, whole.
			d := fileDiff(t, plan, "ingress.yaml")
			if !strings.HasPrefix(d, a.Fix.Diff) || !strings.HasPrefix(d[len(a.Fix.Diff):], "@@ ") || !strings.Contains(a.Fix.DiffNote, "hunks") {
				t.Errorf("diff =\n%s\n(%s), want whole hunks of the CLI's diff of ingress.yaml\n%s", a.Fix.Diff, a.Fix.DiffNote, d)
			}
			if a.Fix.Command != "upgradescope fix --files examples/manifests --target 1.37" {
				t.Errorf("command = %q", a.Fix.Command)
			}
		})
	}
}

func TestExplainFindingShowsTheWholeDiffWhenItFits(t *testing.T) {
	root := repoRoot(t)
	want := fileDiff(t, cliFix(t, filepath.Join(root, "examples", "manifests"), "1.37"), "flowcontrol.yaml")
	for _, tr := range transports {
		t.Run(string(tr), func(t *testing.T) {
			cs := connect(t, newServer(t, root), tr)
			scanned(t, cs, "examples/manifests", "1.37")
			a, _ := call[mcpserver.ExplainAnswer](t, cs, "explain_finding", map[string]any{"key": "removed-api/flowcontrol.apiserver.k8s.io/v1beta3/FlowSchema"})
			if a.Fix == nil || a.Fix.Diff != want || a.Fix.DiffNote != "" {
				t.Errorf("fix = %+v, want the CLI's diff of flowcontrol.yaml whole:\n%s", a.Fix, want)
			}
		})
	}
}

func equalRule(a, b mcpserver.RuleFired) bool {
	return a.Bundle == b.Bundle && a.Pack == b.Pack && slices.Equal(a.Packages, b.Packages) && a.Title == b.Title && a.Note == b.Note
}

// writeFiles writes name → content under a new directory and returns it.
func writeFiles(t *testing.T, fs map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range fs {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const (
	flowSchema = `apiVersion: flowcontrol.apiserver.k8s.io/v1beta3
kind: FlowSchema
metadata:
  name: batch-jobs
spec:
  priorityLevelConfiguration:
    name: workload-low
  matchingPrecedence: 1000
`
	ingress = `apiVersion: extensions/v1beta1
kind: Ingress
metadata:
  name: shop
  namespace: shop
spec:
  backend:
    serviceName: shop
    servicePort: 80
`
	configMap = `apiVersion: v1
kind: ConfigMap
metadata:
  name: filler-%d
  namespace: shop
data:
  a: "1"
  b: "2"
  c: "3"
`
)

func TestExplainFindingShowsOnlyTheHunksOfItsOwnObjects(t *testing.T) {
	var filler []string
	for i := range 3 {
		filler = append(filler, fmt.Sprintf(configMap, i))
	}
	for _, tc := range []struct {
		name, file string
		shared     bool
	}{
		{name: "another finding's object far below is left out of the diff",
			file: flowSchema + "---\n" + strings.Join(filler, "---\n") + "---\n" + ingress},
		{name: "another finding's object next to it shares its hunk, and the answer says so",
			file: ingress + "---\n" + flowSchema, shared: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := writeFiles(t, map[string]string{"apps.yaml": tc.file})
			whole := fileDiff(t, cliFix(t, root, "1.37"), "apps.yaml")
			if !strings.Contains(whole, "+apiVersion: networking.k8s.io/v1\n") || !strings.Contains(whole, "+apiVersion: flowcontrol.apiserver.k8s.io/v1\n") {
				t.Fatalf("the CLI's diff converts both objects, want them in it:\n%s", whole)
			}
			cs := connect(t, newServer(t, root), pipes)
			scanned(t, cs, ".", "1.37")
			a, _ := call[mcpserver.ExplainAnswer](t, cs, "explain_finding", map[string]any{"key": "removed-api/flowcontrol.apiserver.k8s.io/v1beta3/FlowSchema"})
			d := a.Fix.Diff
			if !strings.HasPrefix(d, "--- a/apps.yaml\n+++ b/apps.yaml\n@@ -") || !strings.Contains(d, "+apiVersion: flowcontrol.apiserver.k8s.io/v1\n") {
				t.Errorf("diff =\n%s\nwant the FlowSchema's hunk of\n%s", d, whole)
			}
			if got := strings.Contains(d, "networking.k8s.io/v1"); got != tc.shared {
				t.Errorf("the Ingress's change in the diff: %v, want %v:\n%s", got, tc.shared, d)
			}
			if got := a.Fix.DiffNote != ""; got != tc.shared {
				t.Errorf("diff note %q, want one: %v", a.Fix.DiffNote, tc.shared)
			}
			if !slices.Equal(a.Fix.Files, []string{"apps.yaml"}) || len(a.Fix.Objects) != 1 || !strings.Contains(a.Fix.Objects[0], " FlowSchema batch-jobs: flowcontrol.apiserver.k8s.io/v1beta3 → flowcontrol.apiserver.k8s.io/v1") {
				t.Errorf("fix = %+v, want the FlowSchema alone", a.Fix)
			}
		})
	}
}

func TestExplainFindingSaysWhenFixChangesNothingForIt(t *testing.T) {
	cs := connect(t, newServer(t, repoRoot(t)), pipes)
	scanned(t, cs, "examples/manifests", "1.37")
	for _, tc := range []struct{ name, key, want string }{
		{"a finding about something else than an API version, on objects fix leaves", "drain/pdb-no-disruption/prod-shop/checkout", "does not change what this finding is about"},
		{"a finding about an API version 1.37 still serves", "deprecated-api/core/v1/Endpoints", "changes nothing for this finding: it rewrites only objects at an API 1.37 does not serve"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, _ := call[mcpserver.ExplainAnswer](t, cs, "explain_finding", map[string]any{"key": tc.key})
			if a.Fix == nil || !strings.Contains(a.Fix.Changes, tc.want) || len(a.Fix.Files)+len(a.Fix.Objects)+len(a.Fix.ConvertedFor) != 0 || a.Fix.Diff != "" {
				t.Errorf("fix = %+v, want nothing changed, said so: %q", a.Fix, tc.want)
			}
		})
	}
}

func TestExplainFindingPagesItsObjectsToTheCountTheReportGives(t *testing.T) {
	fs := map[string]string{}
	for i := range 130 {
		fs[fmt.Sprintf("ing-%03d.yaml", i)] = strings.Replace(ingress, "name: shop\n", fmt.Sprintf("name: shop-%03d\n", i), 1)
	}
	root := writeFiles(t, fs)
	const key = "removed-api/extensions/v1beta1/Ingress"
	want := cliFinding(t, cliReport(t, builtinEngine(t), root, []string{"1.37"}), "1.37", key)
	if want.ObjectsOmitted == 0 {
		t.Fatalf("the report lists all %d objects, want some omitted for the test", len(want.Objects))
	}
	for _, tr := range transports {
		t.Run(string(tr), func(t *testing.T) {
			cs := connect(t, newServer(t, root), tr)
			scanned(t, cs, ".", "1.37")
			var got []string
			args := map[string]any{"key": key}
			for pages := 0; ; pages++ {
				if pages > len(want.Objects) {
					t.Fatal("pages do not end")
				}
				a, _ := call[mcpserver.ExplainAnswer](t, cs, "explain_finding", args)
				if a.ObjectsFirst != len(got) || a.ObjectsTotal != len(want.Objects)+want.ObjectsOmitted || a.ObjectsOmitted != want.ObjectsOmitted {
					t.Fatalf("page from %d total %d omitted %d, want from %d of %d+%d", a.ObjectsFirst, a.ObjectsTotal, a.ObjectsOmitted, len(got), len(want.Objects), want.ObjectsOmitted)
				}
				if pages > 0 && (a.Detail != "" || a.Fix != nil || a.Rule != nil) {
					t.Errorf("page %d repeats the finding: %+v", pages, a)
				}
				got = append(got, a.Objects...)
				if a.Next == "" {
					break
				}
				args = map[string]any{"cursor": a.Next}
			}
			if len(got) != len(want.Objects) {
				t.Fatalf("%d objects paged, the report lists %d", len(got), len(want.Objects))
			}
			for i, o := range want.Objects {
				if !strings.HasPrefix(got[i], o.File+":"+strconv.Itoa(o.Line)+" ") || !strings.HasSuffix(got[i], "/"+o.Name) {
					t.Errorf("object %d = %q, want %s:%d %s", i, got[i], o.File, o.Line, o.Name)
				}
			}
		})
	}
}

func TestExplainFindingOfAnInventoryHasNoFix(t *testing.T) {
	root := repoRoot(t)
	cs := connect(t, newServer(t, root), pipes)
	s, _ := call[mcpserver.ScanAnswer](t, cs, "scan", map[string]any{"inventory": "testdata/preflight-live-stalls/inventory.json", "targets": []string{"1.35"}})
	if len(s.TopBlockers) == 0 {
		t.Fatalf("scan = %+v, want a blocker to explain", s)
	}
	a, _ := call[mcpserver.ExplainAnswer](t, cs, "explain_finding", map[string]any{"key": s.TopBlockers[0].Key, "target": "1.35"})
	if a.Fix != nil || a.Title != s.TopBlockers[0].Title {
		t.Errorf("answer = %+v, want %q without a fix (no files were read)", a, s.TopBlockers[0].Title)
	}
}

func TestExplainFindingNamesTheCustomPackThatMadeIt(t *testing.T) {
	root := repoRoot(t)
	eng, err := engine.New(context.Background(), engine.WithPolicy(filepath.Join(root, "examples", "policies")))
	if err != nil {
		t.Fatal(err)
	}
	const key = "acme-limits/prod-deployments-without-limits"
	want := cliFinding(t, cliReport(t, eng, filepath.Join(root, "examples", "manifests"), []string{"1.37"}), "1.37", key)
	cs := connect(t, newServer(t, root, func(c *mcpserver.Config) { c.Engine = eng }), pipes)
	scanned(t, cs, "examples/manifests", "1.37")
	a, _ := call[mcpserver.ExplainAnswer](t, cs, "explain_finding", map[string]any{"key": key})
	rule := mcpserver.RuleFired{Bundle: "acme 2026-11-29.1", Pack: want.Pack, Packages: []string{"data.upgradescope.custom.acme.limits"}}
	if want.Pack != "custom/acme/limits" || !equalRule(*a.Rule, rule) {
		t.Errorf("rule = %+v, want %+v (the report's pack %q)", a.Rule, rule, want.Pack)
	}
}

func TestExplainFindingRefuses(t *testing.T) {
	cs := connect(t, newServer(t, repoRoot(t)), pipes)
	if msg := callError(t, cs, "explain_finding", map[string]any{"key": "removed-api/extensions/v1beta1/Ingress"}); !strings.Contains(msg, "no scan yet") {
		t.Errorf("before a scan: %s", msg)
	}
	id := scanned(t, cs, "examples/manifests", "1.36", "1.37")
	for _, tc := range []struct {
		name string
		args map[string]any
		want []string
	}{
		{"an unknown key, naming keys that exist", map[string]any{"key": "removed-api/extensions/v1beta1/Ingres"}, []string{"no such finding", "removed-api/extensions/v1beta1/Ingress"}},
		{"a key at two targets without the target", map[string]any{"key": "removed-api/extensions/v1beta1/Ingress"}, []string{"1.36 and 1.37", "name one of them as target"}},
		{"a target that is not a minor", map[string]any{"key": "removed-api/extensions/v1beta1/Ingress", "target": "latest"}, []string{"target:"}},
		{"a target the scan did not judge", map[string]any{"key": "removed-api/extensions/v1beta1/Ingress", "target": "1.30"}, []string{"target 1.30", "1.36, 1.37"}},
		{"a scan and a cluster both", map[string]any{"key": "removed-api/extensions/v1beta1/Ingress", "scan": id, "cluster": "prod"}, []string{"not both"}},
		{"no key", map[string]any{"scan": id}, []string{"key:"}},
		{"a cursor it did not give", map[string]any{"cursor": "bm90IGEgY3Vyc29y"}, []string{"cursor"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg := callError(t, cs, "explain_finding", tc.args)
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q, want it to say %q", msg, w)
				}
			}
		})
	}
}

func TestExplainFindingReadsNoFileOutsideTheRootToPlanTheFix(t *testing.T) {
	outside := writeFiles(t, map[string]string{"secret.yaml": ingress})
	root := writeFiles(t, map[string]string{"apps.yaml": flowSchema})
	if err := os.Symlink(filepath.Join(outside, "secret.yaml"), filepath.Join(root, "link.yaml")); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, newServer(t, root), pipes)
	scanned(t, cs, ".", "1.37")
	a, _ := call[mcpserver.ExplainAnswer](t, cs, "explain_finding", map[string]any{"key": "removed-api/flowcontrol.apiserver.k8s.io/v1beta3/FlowSchema"})
	if a.Fix == nil || !strings.Contains(a.Fix.Changes, "link.yaml leads out of the root") || a.Fix.Diff != "" {
		t.Errorf("fix = %+v, want it not planned, naming the symlink fix would follow", a.Fix)
	}
}

func TestExplainFindingClipsAHunkTooLongForTheAnswerAtALine(t *testing.T) {
	var paths strings.Builder
	for i := range 60 {
		fmt.Fprintf(&paths, "          - path: /p%d\n            backend:\n              serviceName: svc-%d\n              servicePort: 80\n", i, i)
	}
	// The default backend's change joins the apiVersion's and the first path's: one hunk.
	root := writeFiles(t, map[string]string{"big.yaml": `apiVersion: extensions/v1beta1
kind: Ingress
metadata:
  name: big
spec:
  backend:
    serviceName: default
    servicePort: 80
  rules:
    - host: shop.example.com
      http:
        paths:
` + paths.String()})
	whole := fileDiff(t, cliFix(t, root, "1.37"), "big.yaml")
	cs := connect(t, newServer(t, root), pipes)
	scanned(t, cs, ".", "1.37")
	a, _ := call[mcpserver.ExplainAnswer](t, cs, "explain_finding", map[string]any{"key": "removed-api/extensions/v1beta1/Ingress"})
	d, ok := strings.CutSuffix(a.Fix.Diff, "\n…")
	if strings.Count(whole, "\n@@ ") != 1 {
		t.Fatalf("the CLI's diff has more than one hunk, want one too long for an answer:\n%s", whole)
	}
	if !ok || !strings.HasPrefix(whole, d+"\n") || len(d) < 160 || !strings.Contains(a.Fix.DiffNote, "clipped") {
		t.Errorf("diff of %d bytes (%s), want the start of the CLI's %d, cut after a line and marked", len(a.Fix.Diff), a.Fix.DiffNote, len(whole))
	}
}

func TestExplainFindingPlansTheFixAtTheFindingsTarget(t *testing.T) {
	// storage.k8s.io/v1beta1 VolumeAttributesClass is served by 1.36 and removed in 1.37.
	root := writeFiles(t, map[string]string{"vac.yaml": `apiVersion: storage.k8s.io/v1beta1
kind: VolumeAttributesClass
metadata:
  name: gold
driverName: pd.csi.storage.gke.io
parameters:
  iops: "3000"
`})
	cs := connect(t, newServer(t, root), pipes)
	scanned(t, cs, ".", "1.36", "1.37")
	l, _ := call[mcpserver.FindingsAnswer](t, cs, "list_findings", map[string]any{"target": "1.36"})
	if len(l.Findings) == 0 {
		t.Fatal("no finding at 1.36, want the deprecated VolumeAttributesClass")
	}
	// In turn, so a plan kept for one target must not answer for the other.
	for _, tc := range []struct {
		target, key string
		converts    bool
	}{
		{"1.37", "removed-api/storage.k8s.io/v1beta1/VolumeAttributesClass", true},
		{"1.36", l.Findings[0].Key, false},
		{"1.37", "removed-api/storage.k8s.io/v1beta1/VolumeAttributesClass", true},
	} {
		a, _ := call[mcpserver.ExplainAnswer](t, cs, "explain_finding", map[string]any{"key": tc.key, "target": tc.target})
		if converts := len(a.Fix.Files) == 1 && a.Fix.Diff != ""; converts != tc.converts || !strings.HasSuffix(a.Fix.Command, "--target "+tc.target) {
			t.Errorf("%s at %s: fix %+v, want a conversion: %v", tc.key, tc.target, a.Fix, tc.converts)
		}
	}
}

func TestExplainFindingOfAFleetClusterAnswersTheServersFinding(t *testing.T) {
	f := startFleet(t)
	var clusters struct {
		Clusters []struct {
			ID   int64  `json:"id"`
			Name string `json:"name"`
		} `json:"clusters"`
	}
	f.get(t, fleetReadToken, "/api/v1/clusters", &clusters)
	i := slices.IndexFunc(clusters.Clusters, func(c struct {
		ID   int64  `json:"id"`
		Name string `json:"name"`
	}) bool {
		return c.Name == "teams-a"
	})
	var want struct {
		Report report.Report `json:"report"`
	}
	f.get(t, fleetReadToken, fmt.Sprintf("/api/v1/clusters/%d/report?target=1.37", clusters.Clusters[i].ID), &want)
	findings := want.Report.Targets[0].Findings
	if len(findings) == 0 {
		t.Fatal("the server's report of teams-a at 1.37 has no finding")
	}
	for _, tr := range transports {
		t.Run(string(tr), func(t *testing.T) {
			cs := connect(t, f.mcpServer(t, t.TempDir(), fleetReadToken), tr)
			for _, w := range findings[:min(len(findings), 3)] {
				a, _ := call[mcpserver.ExplainAnswer](t, cs, "explain_finding", map[string]any{"cluster": "teams-a", "target": "1.37", "key": w.Key})
				if a.Key != w.Key || a.Title != w.Title || a.Severity != w.Severity || !slices.Equal(a.Citations, w.Citations) ||
					a.ObjectsTotal != len(w.Objects)+w.ObjectsOmitted || a.Fix != nil || !strings.HasPrefix(a.Source, "fleet cluster teams-a") {
					t.Errorf("%s = %+v, the server's %+v, without a fix (no files)", w.Key, a, w)
				}
			}
		})
	}
}

func TestExplainFindingsFirstPageFitsWhateverTheLengthOfItsNames(t *testing.T) {
	// Names from short to long move the first page's size across MaxAnswer's edge, where
	// its cursor, the fix summary and the first object must all be counted.
	for n := 8; n <= 200; n += 12 {
		fs := map[string]string{}
		for i := range 12 {
			name := fmt.Sprintf("%s-%02d", strings.Repeat("n", n), i)
			fs[fmt.Sprintf("%02d-%s.yaml", i, name[:min(len(name), 100)])] = strings.Replace(ingress, "name: shop\n", "name: "+name+"\n", 1)
		}
		cs := connect(t, newServer(t, writeFiles(t, fs)), pipes)
		scanned(t, cs, ".", "1.37")
		// call fails the test for a page past MaxAnswer.
		if a, _ := call[mcpserver.ExplainAnswer](t, cs, "explain_finding", map[string]any{"key": "removed-api/extensions/v1beta1/Ingress"}); a.Next == "" {
			t.Errorf("names of %d bytes: all %d objects on the first page, want it paged", n, a.ObjectsTotal)
		}
	}
}

func TestExplainFindingShowsFixsConversionOnlyForAFindingAboutTheAPIVersion(t *testing.T) {
	root := repoRoot(t)
	// fix converts the Ingress's apiVersion and never touches its ingress.class annotation.
	d := fileDiff(t, cliFix(t, filepath.Join(root, "examples", "manifests"), "1.37"), "ingress.yaml")
	for l := range strings.Lines(d) {
		if (l[0] == '-' || l[0] == '+') && strings.Contains(l, "ingress.class") {
			t.Fatalf("the CLI's fix changes the ingress.class annotation, want it untouched:\n%s", d)
		}
	}
	cs := connect(t, newServer(t, root), pipes)
	scanned(t, cs, "examples/manifests", "1.37")
	for _, tc := range []struct {
		name, key    string
		files        []string
		changes      string
		convertedFor []string
	}{
		{name: "the removed Ingress API's finding shows fix converting the Ingress",
			key: "removed-api/extensions/v1beta1/Ingress", files: []string{"ingress.yaml"}, changes: "would rewrite 1 object in 1 file"},
		{name: "the ingress.class annotation's finding on the same Ingress says fix leaves what it is about, naming the finding the conversion is for",
			key: "deprecated-behaviour/ingress-class-annotation", changes: "does not change what this finding is about",
			convertedFor: []string{"removed-api/extensions/v1beta1/Ingress"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, _ := call[mcpserver.ExplainAnswer](t, cs, "explain_finding", map[string]any{"key": tc.key})
			if a.Fix == nil || !strings.Contains(a.Fix.Changes, tc.changes) || !slices.Equal(a.Fix.Files, tc.files) ||
				!slices.Equal(a.Fix.ConvertedFor, tc.convertedFor) || (a.Fix.Diff != "") != (tc.files != nil) || (len(a.Fix.Objects) > 0) != (tc.files != nil) {
				t.Errorf("fix = %+v, want %q, files %v and converted for %v", a.Fix, tc.changes, tc.files, tc.convertedFor)
			}
		})
	}
}

func TestExplainFindingNamesEveryObjectsKind(t *testing.T) {
	cs := connect(t, newServer(t, repoRoot(t)), pipes)
	scanned(t, cs, "examples/manifests", "1.37")
	for _, tc := range []struct{ name, key, want string }{
		{"a removed API's object, which the report names without its kind, is named with the kind of the API",
			"removed-api/flowcontrol.apiserver.k8s.io/v1beta3/FlowSchema", "flowcontrol.yaml:1 FlowSchema batch-jobs"},
		{"a removed API's object rendered from a chart",
			"removed-api/extensions/v1beta1/Ingress", "ingress.yaml:4 Ingress shop/shop (rendered from shop/templates/ingress.yaml)"},
		{"a deprecated API's object of the core group", "deprecated-api/core/v1/Endpoints", "endpoints.json:1 Endpoints shop/legacy-db"},
		{"an object the report names with its kind", "deprecated-behaviour/ingress-class-annotation",
			"ingress.yaml:4 Ingress shop/shop (rendered from shop/templates/ingress.yaml)"},
		{"an object of a finding about something else than an API",
			"feature-gates/removed/kube-apiserver/StructuredAuthenticationConfiguration", "control-plane/kube-apiserver.yaml:21 Pod kube-system/kube-apiserver"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, _ := call[mcpserver.ExplainAnswer](t, cs, "explain_finding", map[string]any{"key": tc.key})
			if len(a.Objects) == 0 || a.Objects[0] != tc.want {
				t.Errorf("objects = %q, want %q first", a.Objects, tc.want)
			}
		})
	}
}

func TestExplainFindingShowsFixMovingACustomResourceToTheVersionItsCRDServes(t *testing.T) {
	schema := "      schema:\n        openAPIV3Schema:\n          type: object\n          properties:\n            spec:\n              type: object\n              properties:\n                size: {type: integer}\n"
	crd := "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets.example.com\nspec:\n  group: example.com\n" +
		"  names: {kind: Widget, plural: widgets}\n  scope: Namespaced\n  versions:\n    - name: v1beta1\n      served: false\n      storage: false\n" +
		schema + "    - name: v1\n      served: true\n      storage: true\n" + schema
	root := writeFiles(t, map[string]string{"crd.yaml": crd, "w.yaml": "apiVersion: example.com/v1beta1\nkind: Widget\nmetadata:\n  name: w\n  namespace: shop\nspec:\n  size: 3\n"})
	const key = "crd-version/unserved/example.com/v1beta1/Widget"
	cliFinding(t, cliReport(t, builtinEngine(t), root, []string{"1.37"}), "1.37", key)
	cs := connect(t, newServer(t, root), pipes)
	scanned(t, cs, ".", "1.37")
	a, _ := call[mcpserver.ExplainAnswer](t, cs, "explain_finding", map[string]any{"key": key})
	if a.Fix == nil || !slices.Equal(a.Fix.Files, []string{"w.yaml"}) || !strings.Contains(a.Fix.Diff, "+apiVersion: example.com/v1\n") ||
		!slices.Equal(a.Fix.Objects, []string{"w.yaml:1 Widget shop/w: example.com/v1beta1 → example.com/v1"}) {
		t.Errorf("fix = %+v, want w.yaml's Widget moved to example.com/v1", a.Fix)
	}
	if !slices.Equal(a.Objects, []string{"w.yaml:1 Widget shop/w"}) {
		t.Errorf("objects = %q, want the Widget with its kind", a.Objects)
	}
}
