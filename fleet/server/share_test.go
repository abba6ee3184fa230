package server

import (
	"encoding/json"
	"testing"

	"github.com/upgradescope/upgradescope/inventory"
)

// shareBase is a cluster of team pay (namespace shop), team ops (namespace ops) and no team
// (namespace free, and cluster-scoped objects).
func shareBase() *inventory.Document {
	return &inventory.Document{
		Capabilities: map[string]inventory.Capability{
			inventory.CapAPIUsage: {Available: true},
			inventory.CapAddons:   {Available: true},
			inventory.CapHelm:     {Available: false, Reason: "ops/vault: forbidden", Skipped: []string{"ops/vault"}},
		},
		Namespaces: []inventory.Namespace{{Name: "shop", Team: "pay"}, {Name: "ops", Team: "ops"}, {Name: "free"}},
	}
}

func usage(kind string, objects ...inventory.ObjectRef) inventory.APIUsage {
	u := inventory.APIUsage{Group: "g", Version: "v1", Kind: kind, Namespaces: map[string]int{}}
	for _, o := range objects {
		u.Add(o)
	}
	return u
}

func ref(ns, name string) inventory.ObjectRef { return inventory.ObjectRef{Namespace: ns, Name: name} }

var payScope = scope{teams: []string{"pay"}}

func TestAShareOfAnInventory(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  func(*inventory.Document)
		check func(t *testing.T, share *inventory.Document)
	}{
		{"keeps the team's and no team's objects and counts, and drops another team's",
			func(d *inventory.Document) {
				d.APIUsage = []inventory.APIUsage{usage("Ingress", ref("shop", "a"), ref("ops", "b"), ref("free", "c"), ref("", "d"))}
			},
			func(t *testing.T, share *inventory.Document) {
				u := share.APIUsage[0]
				if u.Count != 3 || len(u.Objects) != 3 || u.Namespaces["ops"] != 0 || u.ObjectsOmitted != 0 {
					t.Errorf("the share's row is %+v; want shop, free and the cluster-scoped object", u)
				}
			}},
		{"drops a row with nothing of the share",
			func(d *inventory.Document) { d.APIUsage = []inventory.APIUsage{usage("Ingress", ref("ops", "b"))} },
			func(t *testing.T, share *inventory.Document) {
				if len(share.APIUsage) != 0 {
					t.Errorf("rows %+v; want none", share.APIUsage)
				}
			}},
		{"counts the share's objects past a row's list from its namespace counts",
			func(d *inventory.Document) {
				var objects []inventory.ObjectRef
				for range inventory.MaxObjectRefs {
					objects = append(objects, ref("ops", "b"))
				}
				d.APIUsage = []inventory.APIUsage{usage("Ingress", append(objects, ref("shop", "a"), ref("shop", "z"))...)}
			},
			func(t *testing.T, share *inventory.Document) {
				if u := share.APIUsage[0]; u.Count != 2 || len(u.Objects) != 0 || u.ObjectsOmitted != 2 {
					t.Errorf("the share's row is %+v; want 2 objects, none listed", u)
				}
			}},
		{"fails closed when a row's namespace counts were cut",
			func(d *inventory.Document) {
				u := usage("Ingress", ref("shop", "a"))
				u.NamespacesOmitted = 5
				d.APIUsage = []inventory.APIUsage{u}
			},
			func(t *testing.T, share *inventory.Document) {
				if c := share.Capabilities[inventory.CapAPIUsage]; !c.Partial || c.Reason != unattributable {
					t.Errorf("api-usage is %+v; want partial", c)
				}
			}},
		{"withholds every reason, and whether there was one",
			func(d *inventory.Document) {
				d.Capabilities[inventory.CapCRDs] = inventory.Capability{Available: false}
			},
			func(t *testing.T, share *inventory.Document) {
				for _, name := range []string{inventory.CapHelm, inventory.CapCRDs} {
					if c := share.Capabilities[name]; c.Reason != withheldReason || c.Skipped != nil || c.Available {
						t.Errorf("%s is %+v; want unavailable for a withheld reason", name, c)
					}
				}
			}},
		{"keeps deprecated calls, which stop every team's upgrade and name nobody's objects",
			func(d *inventory.Document) {
				d.DeprecatedCalls = []inventory.DeprecatedCall{{Group: "extensions", Version: "v1beta1", Resource: "ingresses"}}
			},
			func(t *testing.T, share *inventory.Document) {
				if len(share.DeprecatedCalls) != 1 {
					t.Errorf("calls %+v, want the cluster's", share.DeprecatedCalls)
				}
			}},
		{"keeps Helm releases and GitOps charts wholly in the share",
			func(d *inventory.Document) {
				d.HelmReleases = []inventory.HelmRelease{{Name: "mine", Namespace: "shop"}, {Name: "theirs", Namespace: "ops"}}
				d.GitopsCharts = []inventory.GitopsChart{{Name: "mine", Namespace: "free", TargetNamespace: "shop"},
					{Name: "into-theirs", Namespace: "free", TargetNamespace: "ops"}, {Name: "from-theirs", Namespace: "ops", TargetNamespace: "shop"}}
			},
			func(t *testing.T, share *inventory.Document) {
				if len(share.HelmReleases) != 1 || share.HelmReleases[0].Name != "mine" || len(share.GitopsCharts) != 1 || share.GitopsCharts[0].Name != "mine" {
					t.Errorf("releases %+v, charts %+v; want only mine", share.HelmReleases, share.GitopsCharts)
				}
			}},
		{"keeps the label sets of an image version only the share runs",
			func(d *inventory.Document) {
				labels := []map[string]string{{"app.kubernetes.io/name": "x"}}
				d.WorkloadImages = []inventory.WorkloadImage{{Repository: "r", Versions: []inventory.ImageVersion{
					{Tag: "only-mine", Namespaces: []string{"free", "shop"}, LabelSets: labels},
					{Tag: "shared", Namespaces: []string{"ops", "shop"}, LabelSets: labels, ObjectsOmitted: 9,
						Objects: []inventory.ObjectRef{ref("ops", "w"), ref("shop", "v")}},
					{Tag: "theirs", Namespaces: []string{"ops"}, LabelSets: labels},
				}}}
			},
			func(t *testing.T, share *inventory.Document) {
				vs := share.WorkloadImages[0].Versions
				if len(vs) != 2 || vs[0].LabelSets == nil || vs[1].LabelSets != nil || len(vs[1].Objects) != 1 || vs[1].ObjectsOmitted != 1 {
					t.Errorf("versions %+v; want only-mine with its labels, shared without them and one unlisted workload", vs)
				}
			}},
		{"recounts a probe from the share's objects",
			func(d *inventory.Document) {
				d.Probes = []inventory.Probe{{ID: "kb/p", Probe: inventory.ProbeSpec{Values: true}, Available: true, Examined: 9, Count: 2,
					Objects: []inventory.ProbeObject{{Namespace: "shop", Name: "a", Values: []string{"x"}}, {Namespace: "ops", Name: "b", Values: []string{"y"}}},
					Values:  []inventory.ProbeValue{{Value: "x", Count: 1}, {Value: "y", Count: 1}}}}
			},
			func(t *testing.T, share *inventory.Document) {
				p := share.Probes[0]
				if !p.Available || p.Count != 1 || p.Examined != 1 || len(p.Objects) != 1 || len(p.Values) != 1 || p.Values[0].Value != "x" {
					t.Errorf("probe %+v; want shop/a and its value alone", p)
				}
			}},
		{"fails closed on a probe whose list was cut",
			func(d *inventory.Document) {
				d.Probes = []inventory.Probe{{ID: "kb/p", Available: true, Count: 200, ObjectsOmitted: 100,
					Objects: []inventory.ProbeObject{{Namespace: "shop", Name: "a"}}}}
			},
			func(t *testing.T, share *inventory.Document) {
				if p := share.Probes[0]; p.Available || p.Reason != unattributable || p.Count != 0 {
					t.Errorf("probe %+v; want not available", p)
				}
			}},
		{"keeps the share's budgets, placements and drain pods, and every webhook and node",
			func(d *inventory.Document) {
				d.Capabilities[inventory.CapPods] = inventory.Capability{Available: true}
				d.Preflight = &inventory.Preflight{
					DisruptionBudgets: []inventory.DisruptionBudget{{Object: ref("shop", "a")}, {Object: ref("ops", "b")}},
					Placements:        []inventory.Placement{{Object: ref("ops", "c"), Replicas: 3, Rule: "anti-affinity"}},
					Drain: &inventory.DrainPods{Examined: 40,
						Unreplicated: inventory.PodList{Count: 2, Objects: []inventory.ObjectRef{ref("shop", "p"), ref("ops", "q")}},
						LocalStorage: inventory.PodList{Count: 3, Objects: []inventory.ObjectRef{ref("ops", "r")}, ObjectsOmitted: 2},
					},
					Webhooks:  []inventory.Webhook{{Configuration: ref("", "hooks"), Name: "w", Service: &inventory.ServiceRef{Namespace: "ops", Name: "svc"}}},
					NodeState: &inventory.NodeState{Examined: 3, Schedulable: 2},
				}
			},
			func(t *testing.T, share *inventory.Document) {
				p := share.Preflight
				if len(p.DisruptionBudgets) != 1 || p.DisruptionBudgets[0].Object.Name != "a" || len(p.Placements) != 0 {
					t.Errorf("budgets %+v, placements %+v; want shop/a and none", p.DisruptionBudgets, p.Placements)
				}
				if p.Drain.Unreplicated.Count != 1 || p.Drain.LocalStorage.Count != 0 || p.Drain.Examined != 1 {
					t.Errorf("drain %+v; want the shop pod alone", p.Drain)
				}
				if len(p.Webhooks) != 1 || p.NodeState.Examined != 3 {
					t.Errorf("webhooks %+v, nodes %+v; want both kept whole", p.Webhooks, p.NodeState)
				}
				if c := share.Capabilities[inventory.CapPods]; !c.Partial {
					t.Errorf("pods %+v; want partial: a cut drain list cannot be split by namespace", c)
				}
			}},
		{"lists the share's namespaces alone",
			func(*inventory.Document) {},
			func(t *testing.T, share *inventory.Document) {
				if len(share.Namespaces) != 2 || share.Namespaces[0].Name != "shop" || share.Namespaces[1].Name != "free" {
					t.Errorf("namespaces %+v; want shop and free", share.Namespaces)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := shareBase()
			tc.edit(doc)
			before, _ := json.Marshal(doc)
			tc.check(t, shareOf(doc, payScope))
			if after, _ := json.Marshal(doc); string(after) != string(before) {
				t.Errorf("shareOf changed the inventory it was given")
			}
		})
	}
}

func TestAFleetScopeSharesTheWholeInventory(t *testing.T) {
	doc := shareBase()
	if shareOf(doc, fleetScope) != doc {
		t.Errorf("a fleet-wide reader's share is not the inventory itself")
	}
}
