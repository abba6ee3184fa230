package facts

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/upgradescope/upgradescope/inventory"
)

// TestKubeVersionFactsFollowHelm pins the constraint cases users hit: "-0" admits vendor
// and pre-release builds, upper bounds exclude their own minor, garbage does not parse.
func TestKubeVersionFactsFollowHelm(t *testing.T) {
	tests := []struct {
		constraint, target, want string
	}{
		{">=1.21.0-0 <1.33.0-0", "1.33", KubeVersionExcludes},
		{">=1.21.0-0 <1.33.0-0", "1.32", KubeVersionAdmits},
		{">=1.21.0-0", "1.33", KubeVersionAdmits},
		{">=1.21.0-0 <1.30.0-0", "1.30", KubeVersionExcludes},
		{">= 1.19.0-0, < 1.31.0-0", "1.31", KubeVersionExcludes},
		{">=1.34.0-0", "1.33", KubeVersionExcludes},
		{"^1.20.0-0", "1.33", KubeVersionAdmits},
		{"~1.32.0", "1.33", KubeVersionExcludes},
		{">=1.21.0-0 <<1.30", "1.33", KubeVersionInvalid},
	}
	for _, tt := range tests {
		inv := &inventory.Document{HelmReleases: []inventory.HelmRelease{{Name: "r", Namespace: "ns", Chart: "c", KubeVersion: tt.constraint}}}
		if got := kubeVersionFacts(inv, []string{tt.target})["ns/r"][tt.target]; got != tt.want {
			t.Errorf("kubeVersion %q at %s = %s, want %s", tt.constraint, tt.target, got, tt.want)
		}
	}
	inv := &inventory.Document{HelmReleases: []inventory.HelmRelease{{Name: "r", Namespace: "ns", Chart: "c"}}}
	if facts := kubeVersionFacts(inv, []string{"1.33"}); len(facts) != 0 {
		t.Errorf("a release without kubeVersion got facts %v", facts)
	}
}

// TestHelmReleaseFactsIndexTheInventory pins the release facts the Helm and add-on rules walk
// instead of every release: indices into input.inventory.helmReleases, by chart and by API key
// ("core" for the core group), each release once per API however often its manifest lists it.
func TestHelmReleaseFactsIndexTheInventory(t *testing.T) {
	inv := &inventory.Document{HelmReleases: []inventory.HelmRelease{
		{Name: "a", Namespace: "web", ManifestAPIs: []inventory.APIUsage{
			{Group: "policy", Version: "v1beta1", Kind: "PodDisruptionBudget"},
			{Group: "", Version: "v1", Kind: "Endpoints"},
			{Group: "policy", Version: "v1beta1", Kind: "PodDisruptionBudget"},
		}},
		{Name: "b", Namespace: "web"},
		{Name: "a", Namespace: "web", Status: "uninstalled", ManifestAPIs: []inventory.APIUsage{
			{Group: "policy", Version: "v1beta1", Kind: "PodDisruptionBudget"},
		}},
	}}
	inv.HelmReleases[0].Chart, inv.HelmReleases[1].Chart, inv.HelmReleases[2].Chart = "shop", "blog", "shop"
	if charts, want := helmChartIndex(inv), map[string][]int{"shop": {0, 2}, "blog": {1}}; !reflect.DeepEqual(charts, want) {
		t.Errorf("helmChartIndex = %v, want %v", charts, want)
	}
	apis := helmManifestAPIs(inv)
	if want := map[string][]int{"policy/v1beta1/PodDisruptionBudget": {0, 2}, "core/v1/Endpoints": {0}}; !reflect.DeepEqual(apis, want) {
		t.Errorf("helmManifestAPIs = %v, want %v", apis, want)
	}
}

// TestKubeVersionFlaggedNamesReleasesByIndex pins input.facts.kubeVersionFlagged: each release
// (by index, duplicates of a name included) and target its constraint does not admit, in
// release then target order; releases without a constraint are absent.
func TestKubeVersionFlaggedNamesReleasesByIndex(t *testing.T) {
	inv := &inventory.Document{HelmReleases: []inventory.HelmRelease{
		{Name: "a", Namespace: "web", KubeVersion: ">=1.21.0-0 <1.33.0-0"},
		{Name: "b", Namespace: "web"},
		{Name: "c", Namespace: "web", KubeVersion: ">=1.21.0-0"},
		{Name: "d", Namespace: "web", KubeVersion: ">=1.21.0-0 <<1.30"},
	}}
	got := kubeVersionFlagged(inv, []string{"1.32", "1.33"})
	want := []KubeVersionFlag{
		{0, "1.33", KubeVersionExcludes},
		{3, "1.32", KubeVersionInvalid}, {3, "1.33", KubeVersionInvalid},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("kubeVersionFlagged = %v, want %v", got, want)
	}
	if b, _ := json.Marshal(got); string(b) != `[[0,"1.33","excludes"],[3,"1.32","invalid"],[3,"1.33","invalid"]]` {
		t.Errorf("kubeVersionFlagged encodes as %s", b)
	}
}

// TestTheJudgedReleasesAreThoseARuleMayRead pins input.facts.helmReleases: a release with a
// kubeVersion flag, one whose stored manifest uses an API the kb flags, one of a chart the
// add-on registry matches; no other.
func TestTheJudgedReleasesAreThoseARuleMayRead(t *testing.T) {
	inv := &inventory.Document{HelmReleases: []inventory.HelmRelease{
		{Name: "flagged", Namespace: "web", Chart: "shop", KubeVersion: ">=1.34.0-0"},
		{Name: "admitted", Namespace: "web", Chart: "shop", KubeVersion: ">=1.21.0-0"},
		{Name: "old-pdb", Namespace: "web", Chart: "blog", ManifestAPIs: []inventory.APIUsage{{Group: "policy", Version: "v1beta1", Kind: "PodDisruptionBudget"}}},
		{Name: "new-pdb", Namespace: "web", Chart: "blog", ManifestAPIs: []inventory.APIUsage{{Group: "policy", Version: "v1", Kind: "PodDisruptionBudget"}}},
		{Name: "ingress", Namespace: "edge", Chart: "ingress-nginx"},
	}}
	k := Knowledge{
		FlaggedStoredAPIs: map[string]bool{"policy/v1beta1/PodDisruptionBudget": true},
		AddonCharts:       map[string]bool{"ingress-nginx": true},
	}
	d := Compute(inv, []string{"1.33"}, k)
	var got []string
	for _, i := range []int{0, 1, 2, 3, 4} {
		if r, ok := d.HelmReleases[i]; ok {
			got = append(got, r.Name)
		}
	}
	if want := []string{"flagged", "old-pdb", "ingress"}; !reflect.DeepEqual(got, want) {
		t.Errorf("judged releases = %v, want %v", got, want)
	}
}

func TestAdmitsTargetJudgesAsTheHelmRulesDo(t *testing.T) {
	cases := []struct {
		constraint, target string
		want               bool
		err                bool
	}{
		{">=1.19.0-0", "1.36", true, false},
		{"<1.36.0-0", "1.36", false, false},
		{"<1.36.0-0", "1.35", true, false},
		{">=1.16.0 <1.22.0", "1.22", false, false},
		{"not a constraint", "1.36", false, true},
		{">=1.19.0-0", "latest", false, true},
	}
	for _, c := range cases {
		got, err := AdmitsTarget(c.constraint, c.target)
		if (err != nil) != c.err || got != c.want {
			t.Errorf("AdmitsTarget(%q, %q) = %v, %v; want %v, error %v", c.constraint, c.target, got, err, c.want, c.err)
		}
		if !c.err {
			fact := checkConstraint(c.constraint, []string{c.target})[c.target]
			if (fact == KubeVersionAdmits) != got {
				t.Errorf("AdmitsTarget(%q, %q) = %v but the rules' fact is %s", c.constraint, c.target, got, fact)
			}
		}
	}
}
