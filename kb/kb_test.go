package kb_test

import (
	"strings"
	"testing"

	"github.com/upgradescope/upgradescope/bundles"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/kb"
	"github.com/upgradescope/upgradescope/kb/probe"
	"github.com/upgradescope/upgradescope/policies"
)

// builtinTree is the built-in kb bundle's data at upgradescope.kb, as the bundle reader
// reads it (a fresh copy each call, which a test may break).
func builtinTree(t testing.TB) map[string]any {
	t.Helper()
	b, err := bundles.ReadFS(policies.KB)
	if err != nil {
		t.Fatal(err)
	}
	top, _ := b.Data["upgradescope"].(map[string]any)
	tree, _ := top["kb"].(map[string]any)
	return tree
}

func builtin(t testing.TB) *kb.KB {
	t.Helper()
	k, err := kb.Decode("built-in", builtinTree(t))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func observe(t testing.TB, images []string, probes []probe.Declared) kb.Observe {
	t.Helper()
	o, err := builtin(t).Observe(images, probes)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func TestTheBuiltinKnowledgeBaseDecodes(t *testing.T) {
	k := builtin(t)
	if k.Meta().Horizon == "" || len(k.APIs()) == 0 || len(k.Addons()) == 0 || len(k.Probes()) == 0 {
		t.Fatalf("meta %+v, %d APIs, %d add-ons, %d probes: want every table filled", k.Meta(), len(k.APIs()), len(k.Addons()), len(k.Probes()))
	}
	for i, a := range k.APIs() {
		if got, ok := k.API(a.Key()); !ok || got.Key() != a.Key() {
			t.Errorf("API(%q) = %+v, %v", a.Key(), got, ok)
		}
		if i > 0 && k.APIs()[i-1].Key() >= a.Key() {
			t.Errorf("APIs not in key order at %s", a.Key())
		}
	}
	for i, a := range k.Addons() {
		if a.ID == "" || i > 0 && k.Addons()[i-1].ID >= a.ID {
			t.Errorf("add-on %d (%q): want ids set and in order", i, a.ID)
		}
	}
	if charts := k.AddonCharts(); !charts["ingress-nginx"] || charts["shop"] {
		t.Error("AddonCharts: want the registry's ingress-nginx chart and not an unknown one")
	}
}

func TestABrokenTableIsRefusedWithItsPointer(t *testing.T) {
	tests := []struct {
		name string
		edit func(map[string]any)
		says string
	}{
		{"no meta", func(tree map[string]any) { delete(tree, "meta") }, "kb bundle (kb.tar.gz): /upgradescope/kb/meta has no horizon"},
		{"no APIs", func(tree map[string]any) { tree["apis"] = map[string]any{} }, "kb bundle (kb.tar.gz): /upgradescope/kb/apis holds no API lifecycle data"},
		{"a registry not by id", func(tree map[string]any) { tree["addons"] = []any{"x"} }, "kb bundle (kb.tar.gz): /upgradescope/kb/addons is not an add-on registry by id"},
		{"groups not a set", func(tree map[string]any) { tree["groups"] = []any{"apps"} }, "kb bundle (kb.tar.gz): /upgradescope/kb/groups is not a set of API groups"},
		{"an add-on index not an object", func(tree map[string]any) { tree["addonindex"] = []any{"x"} }, "kb bundle (kb.tar.gz): /upgradescope/kb/addonindex is not an add-on index"},
		{"an add-on index whose segments are not a set", func(tree map[string]any) {
			tree["addonindex"].(map[string]any)["firstSegments"] = []any{"calico"}
		}, "kb bundle (kb.tar.gz): /upgradescope/kb/addonindex is not an add-on index"},
		{"probes not a list", func(tree map[string]any) { tree["probes"] = map[string]any{} }, "bundle kb.tar.gz: /upgradescope/kb/probes must be a list of probes"},
		{"a misspelt probe field", func(tree map[string]any) {
			tree["probes"] = []any{map[string]any{"id": "x", "kinds": []any{"core/Service"}, "path": "spec", "podTemplat": true}}
		}, `bundle kb.tar.gz: /upgradescope/kb/probes/0: json: unknown field "podTemplat"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tree := builtinTree(t)
			tt.edit(tree)
			if _, err := kb.Decode("kb.tar.gz", tree); err == nil || !strings.Contains(err.Error(), tt.says) {
				t.Errorf("Decode = %v, want an error saying %q", err, tt.says)
			}
		})
	}
}

func TestWatchedKindsCoverRemovedDeprecatedAndRecentAPIs(t *testing.T) {
	w := observe(t, nil, nil).Watched
	for _, k := range []string{
		"extensions/v1beta1/Ingress", "v1/Endpoints", "resource.k8s.io/v1/ResourceClaim", "networking.k8s.io/v1/Ingress",
		"authentication.k8s.io/v1beta1/TokenReview", "authorization.k8s.io/v1beta1/SubjectAccessReview", // request-only
	} {
		if !w[k] {
			t.Errorf("%s is not watched", k)
		}
	}
	for _, k := range []string{"v1/ConfigMap", "apps/v1/Deployment", "autoscaling/v1/Scale", "authentication.k8s.io/v1/TokenReview"} {
		if w[k] {
			t.Errorf("%s is watched; every target serves it", k)
		}
	}
}

func TestKnownKindsAndBuiltinGroupsAreTheKnowledgeBases(t *testing.T) {
	o := observe(t, nil, nil)
	if !o.Known["v1/ConfigMap"] || !o.Known["apps/v1/Deployment"] || o.Known["example.com/v1/Widget"] {
		t.Error("Known: want the kb's kinds, core ones by version only, and no custom resource")
	}
	if !o.BuiltinGroups[""] || !o.BuiltinGroups["apps"] || o.BuiltinGroups["example.com"] {
		t.Error(`BuiltinGroups: want "" (core) and apps, not example.com`)
	}
}

// A live cluster keeps no objects of a request-only kind, so its collector never lists them;
// their use shows only in the deprecated-API calls the apiserver counts.
func TestFlaggedAPIsAreTheStoredKindsALiveCollectorCanList(t *testing.T) {
	listed := map[string]bool{}
	for _, a := range builtin(t).FlaggedAPIs() {
		listed[a.Group+"/"+a.Version+"/"+a.Kind] = true
		if !a.Stored {
			t.Errorf("%s/%s %s is listed but never stored", a.Group, a.Version, a.Kind)
		}
	}
	if !listed["extensions/v1beta1/Ingress"] || listed["authentication.k8s.io/v1beta1/TokenReview"] {
		t.Errorf("listed %v: want extensions/v1beta1 Ingress and no TokenReview", listed)
	}
}

func TestOnlyImagesAMatcherCouldClaimAreObservedClosely(t *testing.T) {
	watch := observe(t, nil, nil).Images
	tests := []struct {
		repository string
		labels     map[string]string
		observed   bool
	}{
		{"registry.k8s.io/ingress-nginx/controller", nil, true},
		{"harbor.corp.example/mirror/ingress-nginx/controller", nil, true},
		{"traefik", nil, true}, // docker.io/library/traefik
		{"corp.example/edge/nginx-rebuilt", map[string]string{inventory.NameLabel: "ingress-nginx"}, true},
		{"registry.example.com/team-07/svc-00042", map[string]string{inventory.NameLabel: "svc-00042"}, false},
		{"123456789012.dkr.ecr.eu-west-1.amazonaws.com/payments/api", nil, false},
	}
	for _, tt := range tests {
		if got := watch.Observes(tt.repository, tt.labels); got != tt.observed {
			t.Errorf("Observes(%q, %v) = %v, want %v", tt.repository, tt.labels, got, tt.observed)
		}
	}
}

// What custom packs declare joins the knowledge base's: their repositories are observed
// closely, their probes run beside the kb's, and the KB's own tables stay as they were.
func TestObserveAddsWhatCustomPacksDeclare(t *testing.T) {
	spec := probe.Spec{ID: "lb-ip", Kinds: []string{"core/Service"}, Path: "spec.loadBalancerIP", Values: true}
	o := observe(t, []string{"registry.example.com/payments/"}, []probe.Declared{{ID: "custom/lb/lb-ip", Spec: spec}})
	if !o.Images.Observes("registry.example.com/payments/api", nil) || o.Images.Observes("registry.example.com/shop/api", nil) {
		t.Errorf("images %+v: want payments observed and shop not", o.Images.Repositories)
	}
	ids := map[string]bool{}
	for _, d := range o.Probes.Declared() {
		ids[d.ID] = true
	}
	if !ids["custom/lb/lb-ip"] || !ids["kb/pod-docker-socket"] {
		t.Errorf("probes %v: want the pack's custom/lb/lb-ip beside the kb's", ids)
	}
	if _, err := builtin(t).Observe(nil, []probe.Declared{{ID: "kb/pod-docker-socket", Spec: spec}}); err == nil {
		t.Error("a probe id the kb declares, declared again: want it refused")
	}
}
