package inventory

import (
	"encoding/json"
	"reflect"
	"testing"
)

func row(group, version, kind string, objects ...ObjectRef) APIUsage {
	u := APIUsage{Group: group, Version: version, Kind: kind, Namespaces: map[string]int{}}
	for _, o := range objects {
		u.Add(o)
	}
	return u
}

func overlayFixtures() (cluster, manifests *Document) {
	live := func(ns, name string) ObjectRef { return ObjectRef{Namespace: ns, Name: name} }
	written := func(ns, name string, line int) ObjectRef {
		return ObjectRef{Namespace: ns, Name: name, File: "app.yaml", Line: line}
	}
	spec := ProbeSpec{ID: "docker-socket", PodTemplate: true, Path: "volumes[*].hostPath.path", Match: "present"}
	cluster = &Document{
		Source: SourceCluster, ClusterID: "uid", ServerVersion: "v1.32.4",
		Capabilities: map[string]Capability{CapAPIUsage: {Available: true}, CapAddons: {Available: true},
			CapHelm: {Available: false, Reason: "forbidden"}},
		APIUsage: []APIUsage{
			row("extensions", "v1beta1", "Ingress", live("shop", "a"), live("shop", "old")),
			row("policy", "v1beta1", "PodSecurityPolicy", live("", "restricted")),
		},
		Nodes:        []NodeGroup{{KubeletVersion: "v1.31.0", Count: 3}},
		Namespaces:   []Namespace{{Name: "shop", Team: "payments"}},
		HelmReleases: []HelmRelease{{Name: "web", Namespace: "shop"}},
		CRDs: []CRD{{Group: "cert-manager.io", Kind: "Certificate", StoredVersions: []string{"v1", "v1alpha2"},
			Usage: []APIUsage{row("cert-manager.io", "v1alpha2", "Certificate", live("shop", "n"))}}},
		Probes: []Probe{{ID: "kb/docker-socket", Probe: spec, Available: true, Examined: 5, Count: 2,
			Objects: []ProbeObject{{Kind: "Deployment", Namespace: "shop", Name: "web"}, {Kind: "Deployment", Namespace: "ci", Name: "runner"}}}},
		WorkloadImages: []WorkloadImage{{Repository: "registry.k8s.io/ingress-nginx/controller", Versions: []ImageVersion{
			{Tag: "v1.9.0", Namespaces: []string{"ingress"}},
			{Tag: "v1.11.0", Namespaces: []string{"edge"}},
		}}},
	}
	manifests = &Document{
		Source: SourceFiles, ClusterID: "files", FilesBase: "/tmp/x",
		Capabilities: map[string]Capability{CapAPIUsage: {Available: true}, CapAddons: {Available: true},
			CapCRDs: {Available: true, Partial: true, Skipped: []string{"cert-manager.io/v1 Certificate", "acme.io/v1 Thing"},
				Reason: "2 custom resource kind(s) " + OrphanReason}},
		APIUsage: []APIUsage{
			row("networking.k8s.io", "v1", "Ingress", written("shop", "a", 1)),
			row("apps", "v1", "Deployment", written("shop", "web", 9)),
		},
		OrphanUsage: []APIUsage{row("cert-manager.io", "v1", "Certificate", written("shop", "m", 20)),
			row("acme.io", "v1", "Thing", written("shop", "t", 30))},
		Probes:     []Probe{{ID: "kb/docker-socket", Probe: spec, Available: true, Examined: 1, Count: 0}},
		Namespaces: []Namespace{{Name: "shop"}, {Name: "new", Team: "payments"}},
		WorkloadImages: []WorkloadImage{
			{Repository: "registry.k8s.io/ingress-nginx/controller", Versions: []ImageVersion{
				{Tag: "v1.9.0", Namespaces: []string{"shop"}, Objects: []ObjectRef{{Name: "nginx", File: "a.yaml", Line: 1}}},
			}},
			{Repository: "nginx", Versions: []ImageVersion{{Tag: "1.27", Namespaces: []string{"shop"}}}},
		},
	}
	return cluster, manifests
}

func names(rows []APIUsage) map[string][]string {
	out := map[string][]string{}
	for _, u := range rows {
		key := u.Group + "/" + u.Version + " " + u.Kind
		for _, o := range u.Objects {
			out[key] = append(out[key], o.Namespace+"/"+o.Name+"@"+o.File)
		}
	}
	return out
}

func TestOverlayJudgesEachObjectAsTheManifestsWriteIt(t *testing.T) {
	cluster, manifests := overlayFixtures()
	before, _ := json.Marshal(cluster)
	beforeM, _ := json.Marshal(manifests)
	got := Overlay(cluster, manifests)
	if after, _ := json.Marshal(cluster); string(after) != string(before) {
		t.Errorf("Overlay changed the cluster's inventory")
	}
	if after, _ := json.Marshal(manifests); string(after) != string(beforeM) {
		t.Errorf("Overlay changed the manifests' inventory")
	}
	want := map[string][]string{
		"extensions/v1beta1 Ingress":       {"shop/old@"},
		"networking.k8s.io/v1 Ingress":     {"shop/a@app.yaml"},
		"apps/v1 Deployment":               {"shop/web@app.yaml"},
		"policy/v1beta1 PodSecurityPolicy": {"/restricted@"},
	}
	if u := names(got.APIUsage); !reflect.DeepEqual(u, want) {
		t.Errorf("usage %v, want %v: the rewritten shop/a leaves the live row, the rest stays", u, want)
	}
	if got.APIUsage[0].Kind != "Deployment" || got.APIUsage[0].Count != 1 {
		t.Errorf("rows should be sorted and counted: %+v", got.APIUsage)
	}
	p := got.Probes[0]
	if p.Count != 1 || p.Examined != 5 || len(p.Objects) != 1 || p.Objects[0].Name != "runner" {
		t.Errorf("probe %+v: shop/web is rewritten without the socket, ci/runner still mounts it", p)
	}
	if got.Source != SourceCluster || got.ClusterID != "uid" || got.FilesBase != "/tmp/x" || len(got.Nodes) != 1 || len(got.HelmReleases) != 1 {
		t.Errorf("what manifests cannot hold should stay the cluster's: %+v", got)
	}
	if want := []Namespace{{Name: "shop", Team: "payments"}, {Name: "new"}}; !reflect.DeepEqual(got.Namespaces, want) {
		t.Errorf("namespaces %+v, want %+v: only the cluster says who owns a namespace", got.Namespaces, want)
	}
	versions := got.WorkloadImages[0].Versions
	if len(got.WorkloadImages) != 2 || len(versions) != 2 || !reflect.DeepEqual(versions[0].Namespaces, []string{"ingress", "shop"}) ||
		len(versions[0].Objects) != 1 || versions[1].Tag != "v1.11.0" {
		t.Errorf("images %+v: a version both run is listed once, with the manifests' objects, in both's namespaces", got.WorkloadImages)
	}
}

func TestOverlayJudgesManifestCustomResourcesAgainstTheClustersCRDs(t *testing.T) {
	cluster, manifests := overlayFixtures()
	got := Overlay(cluster, manifests)
	crd := got.CRDs[0]
	if u := names(crd.Usage); !reflect.DeepEqual(u, map[string][]string{
		"cert-manager.io/v1 Certificate":       {"shop/m@app.yaml"},
		"cert-manager.io/v1alpha2 Certificate": {"shop/n@"},
	}) || !reflect.DeepEqual(crd.StoredVersions, []string{"v1", "v1alpha2"}) {
		t.Errorf("CRD %+v: the manifest Certificate joins the cluster's CRD, whose stored versions stay", crd)
	}
	caps := got.Capabilities[CapCRDs]
	want := Capability{Available: true, Partial: true, Skipped: []string{"acme.io/v1 Thing"}, Reason: "1 custom resource kind(s) " + OrphanReason}
	if !reflect.DeepEqual(caps, want) {
		t.Errorf("crds %+v, want %+v: only the Thing has no CRD anywhere", caps, want)
	}
	// The manifests redefine the CRD: their versions, both's stored versions, the live usage kept.
	manifests.CRDs = []CRD{{Group: "cert-manager.io", Kind: "Certificate", Versions: []CRDVersion{{Name: "v1", Served: true, Storage: true}},
		StoredVersions: []string{"v1"}}}
	crd = Overlay(cluster, manifests).CRDs[0]
	if len(crd.Versions) != 1 || !reflect.DeepEqual(crd.StoredVersions, []string{"v1", "v1alpha2"}) || len(crd.Usage) != 2 {
		t.Errorf("redefined CRD %+v: v1alpha2 is still stored and still used", crd)
	}
}

func TestOverlayKeepsAProbeObservedUnderAnotherDeclarationAsTheClusterHasIt(t *testing.T) {
	cluster, manifests := overlayFixtures()
	manifests.Probes[0].Probe.Path = "volumes[*].hostPath"
	if p := Overlay(cluster, manifests).Probes; len(p) != 1 || !reflect.DeepEqual(p[0], cluster.Probes[0]) {
		t.Errorf("probes %+v: the cluster's observation alone, for the engine to find stale", p)
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
