package rehearsal_test

import (
	"testing"

	yaml "go.yaml.in/yaml/v3"

	"github.com/upgradescope/upgradescope/convert"
	"github.com/upgradescope/upgradescope/fix"
	"github.com/upgradescope/upgradescope/rehearsal"
)

// node parses y as the document starting at line of a file, as fix gives its nodes the
// file's lines.
func node(t *testing.T, line int, y string) *yaml.Node {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(y), &doc); err != nil {
		t.Fatal(err)
	}
	var shift func(n *yaml.Node)
	shift = func(n *yaml.Node) {
		n.Line += line - 1
		for _, c := range n.Content {
			shift(c)
		}
	}
	shift(doc.Content[0])
	return doc.Content[0]
}

func TestAPlanIsReplayedAsTheTargetWouldReceiveIt(t *testing.T) {
	oldIngress := node(t, 8, "apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata: {name: shop, namespace: web}\n")
	newIngress := node(t, 8, "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata: {name: shop, namespace: web}\n")
	plan := &fix.Plan{Root: "m", Files: []fix.File{{
		Path: "apps/shop.yaml",
		Docs: []fix.Doc{
			{Line: 1, Object: node(t, 2, "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: web}\ndata: {n: \"1\"}\n")},
			{Line: 7, Object: oldIngress, Outcome: convert.Outcome{
				From: convert.ParseGVK("extensions/v1beta1", "Ingress"), To: convert.ParseGVK("networking.k8s.io/v1", "Ingress"), Object: newIngress,
			}},
			{Line: 12, Ref: fix.Ref{APIVersion: "policy/v1beta1", Kind: "PodDisruptionBudget", Namespace: "web", Name: "pdb"}, Object: node(t, 12, "apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata: {name: pdb, namespace: web}\n"),
				Outcome: convert.Outcome{Manual: []convert.Remark{{Path: "/spec/selector", Message: "an empty selector selects every pod in policy/v1"}}}},
			{Line: 16, Skip: "a Helm template"},
			{Line: 20}, // comments only
			{Line: 21, Object: node(t, 21, "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Secret\n  metadata: {name: s, namespace: web}\n- apiVersion: v1\n  kind: ServiceAccount\n  metadata: {name: sa, namespace: web}\n")},
		},
	}}}
	objs, skipped := rehearsal.FromPlan(plan)
	type got struct {
		apiVersion, kind, original string
		line                       int
	}
	want := []got{
		{"v1", "ConfigMap", "", 2}, // a comment line above it
		{"networking.k8s.io/v1", "Ingress", "extensions/v1beta1", 8},
		{"v1", "Secret", "", 24},
		{"v1", "ServiceAccount", "", 27},
	}
	if len(objs) != len(want) {
		t.Fatalf("%d objects, want %d", len(objs), len(want))
	}
	for i, w := range want {
		o := objs[i]
		g := got{o.Obj.GetAPIVersion(), o.Obj.GetKind(), o.OriginalAPIVersion, o.Source.Line}
		if g != w || o.Source.File != "apps/shop.yaml" {
			t.Errorf("object %d = %+v in %s, want %+v in apps/shop.yaml", i, g, o.Source.File, w)
		}
	}
	if len(skipped) != 2 ||
		skipped[0].Kind != "PodDisruptionBudget" || skipped[0].Reason != rehearsal.ReasonNoConversion || skipped[0].Message != "/spec/selector: an empty selector selects every pod in policy/v1" ||
		skipped[1].Source.Line != 16 || skipped[1].Reason != rehearsal.ReasonNotConverted || skipped[1].Message != "a Helm template" {
		t.Errorf("skipped %+v, want the PDB left to a person and the template", skipped)
	}
}
