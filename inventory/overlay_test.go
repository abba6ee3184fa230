package inventory

import (
	"encoding/json"
	"reflect"
	"testing"
)

func overlayFixtures() (cluster, manifests *Document) {
	cluster = &Document{
		Source: SourceCluster, ClusterID: "uid", ServerVersion: "v1.32.4",
		Capabilities: map[string]Capability{CapAPIUsage: {Available: true}, CapAddons: {Available: true},
			CapHelm: {Available: false, Reason: "forbidden"}},
		APIUsage:     []APIUsage{{Group: "policy", Version: "v1beta1", Kind: "PodSecurityPolicy", Count: 1}},
		Nodes:        []NodeGroup{{KubeletVersion: "v1.31.0", Count: 3}},
		Namespaces:   []Namespace{{Name: "shop", Team: "payments"}},
		CRDs:         []CRD{{Group: "cert-manager.io", Kind: "Certificate"}},
		Probes:       []Probe{{ID: "kb/docker-socket", Available: true, Count: 1}},
		HelmReleases: []HelmRelease{{Name: "web", Namespace: "shop"}},
		WorkloadImages: []WorkloadImage{{Repository: "registry.k8s.io/ingress-nginx/controller", Versions: []ImageVersion{
			{Tag: "v1.9.0", Namespaces: []string{"ingress"}},
			{Tag: "v1.11.0", Namespaces: []string{"edge"}},
		}}},
	}
	manifests = &Document{
		Source: SourceFiles, ClusterID: "files", FilesBase: "/tmp/x",
		Capabilities: map[string]Capability{CapAPIUsage: {Available: true, Partial: true, Reason: "cut"},
			CapAddons: {Available: true}, CapCRDs: {Available: true}},
		APIUsage:   []APIUsage{{Group: "apps", Version: "v1", Kind: "Deployment", Count: 2}},
		Namespaces: []Namespace{{Name: "shop"}, {Name: "new"}},
		CRDs:       []CRD{{Group: "cert-manager.io", Kind: "Certificate", Plural: "certificates"}, {Group: "acme.io", Kind: "Thing"}},
		WorkloadImages: []WorkloadImage{
			{Repository: "registry.k8s.io/ingress-nginx/controller", Versions: []ImageVersion{
				{Tag: "v1.9.0", Namespaces: []string{"shop"}, Objects: []ObjectRef{{Name: "nginx", File: "a.yaml", Line: 1}}},
			}},
			{Repository: "nginx", Versions: []ImageVersion{{Tag: "1.27", Namespaces: []string{"shop"}}}},
		},
	}
	return cluster, manifests
}

func TestOverlayAppliesManifestsToAClusterAsAGateJudgesThem(t *testing.T) {
	cluster, manifests := overlayFixtures()
	before, _ := json.Marshal(cluster)
	got := Overlay(cluster, manifests)
	if after, _ := json.Marshal(cluster); string(after) != string(before) {
		t.Errorf("Overlay changed the cluster's inventory:\n%s\nwas\n%s", after, before)
	}
	if !reflect.DeepEqual(got.APIUsage, manifests.APIUsage) || got.Probes != nil {
		t.Errorf("the manifests' usage and probes should replace the cluster's: %+v, %+v", got.APIUsage, got.Probes)
	}
	if got.Source != SourceCluster || got.ClusterID != "uid" || got.FilesBase != "" || len(got.Nodes) != 1 || len(got.HelmReleases) != 1 {
		t.Errorf("what manifests cannot hold should stay the cluster's: %+v", got)
	}
	if want := []Namespace{{Name: "shop", Team: "payments"}, {Name: "new"}}; !reflect.DeepEqual(got.Namespaces, want) {
		t.Errorf("namespaces %+v, want %+v: the cluster's team stays", got.Namespaces, want)
	}
	if len(got.CRDs) != 2 || got.CRDs[0].Plural != "certificates" || got.CRDs[1].Kind != "Thing" {
		t.Errorf("CRDs %+v: the manifests' copy should win and new ones follow", got.CRDs)
	}
	versions := got.WorkloadImages[0].Versions
	if len(got.WorkloadImages) != 2 || len(versions) != 2 || !reflect.DeepEqual(versions[0].Namespaces, []string{"ingress", "shop"}) ||
		len(versions[0].Objects) != 1 || versions[1].Tag != "v1.11.0" {
		t.Errorf("images %+v: a version both run is listed once, with the manifests' objects, in both's namespaces", got.WorkloadImages)
	}
	caps := got.Capabilities
	if !caps[CapAPIUsage].Partial || caps[CapHelm].Available || !caps[CapCRDs].Available || !caps[CapAddons].Available {
		t.Errorf("capabilities %+v", caps)
	}
}

func TestOverlayKeepsTheWorseOfTwoMergedCapabilities(t *testing.T) {
	cluster, manifests := overlayFixtures()
	cluster.Capabilities[CapAddons] = Capability{Available: false, Reason: "pods: forbidden"}
	manifests.Capabilities[CapAddons] = Capability{Available: true, Partial: true, Reason: "images cut", Skipped: []string{"x"}}
	got := Overlay(cluster, manifests).Capabilities[CapAddons]
	want := Capability{Available: false, Partial: true, Reason: "pods: forbidden; images cut", Skipped: []string{"x"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("addons %+v, want %+v", got, want)
	}
}
