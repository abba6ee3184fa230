package corpus

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"time"

	"github.com/upgradescope/upgradescope/inventory"
)

// ClusterMinor is the Kubernetes minor Cluster's inventories run (v1.35.x): a fleet server
// started with --target 1.36,1.37 judges each of them at exactly two targets, since the
// next minor (1.36) is one of the --target minors.
const ClusterMinor = 35

// namespacePrefixes name namespaces the way platform teams do: a product or function, then
// an environment or a shard.
var namespacePrefixes = []string{
	"checkout", "payments", "search", "catalog", "identity", "billing", "ledger", "orders",
	"shipping", "inventory", "pricing", "reviews", "ads", "analytics", "ml-serving", "feature-store",
	"notifications", "gateway", "observability", "security", "data-pipeline", "reporting", "crm", "support",
}

var environments = []string{"prod", "staging", "dev", "canary", "perf", "sandbox"}

// usageKinds are the group/version/kinds a live collector records per namespace: the
// judged ones (deprecated or removed at some minor) a real cluster still has objects of.
var usageKinds = []struct {
	group, version, kind string
	perMille             int // share of namespaces that hold objects of the kind
}{
	{"", "v1", "Endpoints", 900},
	{"", "v1", "ComponentStatus", 0},
	{"autoscaling", "v2", "HorizontalPodAutoscaler", 600},
	{"batch", "v1", "CronJob", 400},
	{"discovery.k8s.io", "v1", "EndpointSlice", 900},
	{"flowcontrol.apiserver.k8s.io", "v1beta3", "FlowSchema", 0},
	{"networking.k8s.io", "v1", "Ingress", 500},
	{"policy", "v1", "PodDisruptionBudget", 700},
	{"storage.k8s.io", "v1beta1", "VolumeAttributesClass", 30},
	{"resource.k8s.io", "v1beta1", "ResourceClaim", 20},
}

// Cluster is the inventory of a live cluster with the given number of namespaces, shaped
// like LargeCluster and scaled to it: per namespace about 10 nodes, 5 Helm releases and 3
// application images, the namespaces owned by one team for every 8, API usage spread over
// the namespaces with 100 object references per kind, plus 30 add-on images and 250 CRDs.
// seed varies the cluster UID, the names, the counts and the patch version, so two seeds
// give two distinct snapshots (distinct inventory hashes); the same arguments give the same
// document. It runs v1.35 (ClusterMinor) and stays within inventory.MaxValues (about 132 values a
// namespace) up to 1,400 namespaces.
func Cluster(namespaces, seed int) *inventory.Document {
	g := &clusterGen{rng: rand.New(rand.NewPCG(uint64(seed), uint64(namespaces))), seed: seed}
	version := fmt.Sprintf("v1.%d.%d-eks-%07x", ClusterMinor, 1+g.rng.IntN(8), g.rng.Uint32()>>4)
	doc := &inventory.Document{
		SchemaVersion: inventory.SchemaVersion, Source: inventory.SourceCluster, Provider: "eks",
		ClusterID:     g.uuid(),
		ServerVersion: version,
		CollectedAt:   time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC).Add(time.Duration(seed) * time.Minute),
		Capabilities: map[string]inventory.Capability{
			inventory.CapAPIUsage: {Available: true}, inventory.CapVersions: {Available: true},
			inventory.CapHelm: {Available: true}, inventory.CapAddons: {Available: true},
			inventory.CapDisruptionBudgets: {Available: true}, inventory.CapPods: {Available: true},
			inventory.CapWebhooks: {Available: true}, inventory.CapEndpoints: {Available: true},
			inventory.CapAPIServices: {Available: true}, inventory.CapNodeState: {Available: true},
			inventory.CapComponentFlags: {Available: true},
			inventory.CapCRDs:           {Available: true}, inventory.CapDeprecatedCalls: {Available: true},
		},
	}
	g.namespaces(doc, namespaces)
	g.nodes(doc, version, namespaces)
	g.releases(doc, namespaces)
	g.images(doc, namespaces)
	g.crds(doc)
	g.apiUsage(doc)
	observeProbes(doc, g.rng, 10*namespaces, g.nsName)
	doc.DeprecatedCalls = []inventory.DeprecatedCall{
		{Group: "flowcontrol.apiserver.k8s.io", Version: "v1beta3", Resource: "flowschemas", RemovedRelease: "1.32"},
		{Group: "", Version: "v1", Resource: "endpoints"},
	}
	return doc
}

type clusterGen struct {
	rng  *rand.Rand
	seed int
	ns   []inventory.Namespace
}

// uuid is a version-4-shaped UUID from the generator: the kube-system UID a cluster binds.
func (g *clusterGen) uuid() string {
	a, b := g.rng.Uint64(), g.rng.Uint64()
	return fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", a>>32, a>>16&0xffff, a&0xfff, b>>48&0xfff, b&0xffffffffffff)
}

// around is n varied by ±10%, so counts differ from seed to seed.
func (g *clusterGen) around(n int) int {
	spread := max(n/10, 1)
	return max(n-spread+g.rng.IntN(2*spread+1), 1)
}

// namespaces names n namespaces product-environment-shard; one team owns about every 8,
// and one namespace in 20 has no team label (system and forgotten namespaces).
func (g *clusterGen) namespaces(doc *inventory.Document, n int) {
	teams := max(n/8, 1)
	offset := g.rng.IntN(len(namespacePrefixes))
	for i := range n {
		name := fmt.Sprintf("%s-%s-%d", namespacePrefixes[(i+offset)%len(namespacePrefixes)],
			environments[i/len(namespacePrefixes)%len(environments)], i)
		ns := inventory.Namespace{Name: name}
		if g.rng.IntN(20) != 0 {
			ns.Team = fmt.Sprintf("team-%03d", g.rng.IntN(teams))
		}
		g.ns = append(g.ns, ns)
	}
	doc.Namespaces = g.ns
}

func (g *clusterGen) nsName(i int) string { return g.ns[i%len(g.ns)].Name }

// nodes spreads about 10 nodes a namespace over four kubelet minors (the control plane's
// and three behind it), as LargeCluster does; kube-proxy runs each group's version.
func (g *clusterGen) nodes(doc *inventory.Document, version string, namespaces int) {
	doc.ControlPlane = []inventory.ControlPlaneComponent{
		{Component: "kube-apiserver", Version: version},
		{Component: "kube-controller-manager", Version: version},
		{Component: "kube-scheduler", Version: version},
	}
	for minor := range 4 {
		count := g.around(10 * namespaces / 4)
		kubelet := fmt.Sprintf("v1.%d.%d-eks-%07x", ClusterMinor-3+minor, 1+g.rng.IntN(9), g.rng.Uint32()>>4)
		names := make([]string, 0, min(count, inventory.MaxNodeNames))
		for i := range cap(names) {
			names = append(names, fmt.Sprintf("ip-10-%d-%d-%d.ec2.internal", minor, (i+g.seed)/256%256, (i+g.seed)%256))
		}
		omitted := count - len(names)
		doc.Nodes = append(doc.Nodes, inventory.NodeGroup{KubeletVersion: kubelet, ContainerRuntime: "containerd://1.7.27",
			Count: count, Names: names, NamesOmitted: omitted})
		doc.ControlPlane = append(doc.ControlPlane, inventory.ControlPlaneComponent{Component: "kube-proxy",
			Version: kubelet, KubeletVersion: kubelet, Count: count, Nodes: names, NodesOmitted: omitted})
	}
}

// releases installs about 5 Helm releases a namespace; as in LargeCluster 4% cap
// Kubernetes below 1.35, 2% hold a removed API in their stored manifest, 4% are
// ingress-nginx.
func (g *clusterGen) releases(doc *inventory.Document, namespaces int) {
	for i := range g.around(5 * namespaces) {
		ns := g.nsName(g.rng.IntN(namespaces))
		r := inventory.HelmRelease{
			Name: fmt.Sprintf("release-%05d", i), Namespace: ns, Chart: fmt.Sprintf("app-%d", g.rng.IntN(120)),
			ChartVersion: fmt.Sprintf("1.%d.%d", g.rng.IntN(20), g.rng.IntN(5)), AppVersion: fmt.Sprintf("2.%d.1", g.rng.IntN(15)),
			Status: "deployed", Revision: 1 + g.rng.IntN(30),
			KubeVersion: []string{"", ">=1.21.0-0", "^1.28.0-0", ">=1.25.0-0"}[g.rng.IntN(4)],
			ManifestAPIs: []inventory.APIUsage{
				{Group: "apps", Version: "v1", Kind: "Deployment", Count: 1 + g.rng.IntN(3), Namespaces: map[string]int{ns: 1}},
			},
		}
		r.ManifestAPIs[0].Namespaces[ns] = r.ManifestAPIs[0].Count
		switch x := g.rng.IntN(100); {
		case x < 4:
			r.KubeVersion = ">=1.24.0-0 <1.35.0-0"
		case x < 6:
			r.ManifestAPIs = append(r.ManifestAPIs, inventory.APIUsage{Group: "policy", Version: "v1beta1",
				Kind: "PodDisruptionBudget", Count: 1, Namespaces: map[string]int{ns: 1}})
		case x < 10:
			r.Chart, r.AppVersion = "ingress-nginx", "1.9.4"
		}
		doc.HelmReleases = append(doc.HelmReleases, r)
	}
}

// images lists the 30 add-on images and about 3 application images a namespace, each
// version with the namespaces that run it.
func (g *clusterGen) images(doc *inventory.Document, namespaces int) {
	for i, img := range clusterAddonImages {
		repo, tag, digest := inventory.SplitImage(img)
		doc.WorkloadImages = append(doc.WorkloadImages, inventory.WorkloadImage{Repository: repo, Versions: []inventory.ImageVersion{
			{Tag: tag, Digest: digest, Namespaces: []string{g.nsName(i * 5)}},
		}})
	}
	apps := min(g.around(3*namespaces), inventory.MaxListedImages-len(clusterAddonImages))
	for i := range apps {
		v := inventory.ImageVersion{Tag: fmt.Sprintf("%d.%d.%d", g.rng.IntN(4), g.rng.IntN(30), g.rng.IntN(10)),
			Namespaces: g.someNamespaces(1+g.rng.IntN(3), namespaces)}
		doc.WorkloadImages = append(doc.WorkloadImages, inventory.WorkloadImage{
			Repository: fmt.Sprintf("123456789012.dkr.ecr.eu-west-1.amazonaws.com/team-%03d/service-%d", i%max(namespaces/8, 1), i),
			Versions:   []inventory.ImageVersion{v},
		})
	}
	sort.Slice(doc.WorkloadImages, func(i, j int) bool { return doc.WorkloadImages[i].Repository < doc.WorkloadImages[j].Repository })
}

// someNamespaces draws n distinct namespaces, sorted, as the collector lists them.
func (g *clusterGen) someNamespaces(n, namespaces int) []string {
	set := map[string]bool{}
	for len(set) < min(n, namespaces) {
		set[g.nsName(g.rng.IntN(namespaces))] = true
	}
	out := make([]string, 0, len(set))
	for ns := range set {
		out = append(out, ns)
	}
	sort.Strings(out)
	return out
}

// crds defines about 250 CRDs, one in ten with a deprecated served v1beta1.
func (g *clusterGen) crds(doc *inventory.Document) {
	for i := range g.around(250) {
		doc.CRDs = append(doc.CRDs, inventory.CRD{
			Group: fmt.Sprintf("group%d.example.com", i), Kind: fmt.Sprintf("Kind%d", i), Plural: fmt.Sprintf("kind%ds", i),
			Versions:       []inventory.CRDVersion{{Name: "v1", Served: true, Storage: true}, {Name: "v1beta1", Served: true, Deprecated: g.rng.IntN(10) == 0}},
			StoredVersions: []string{"v1"},
		})
	}
}

// apiUsage spreads every usage kind over its share of the namespaces, a few objects in
// each, naming the first 100 objects as the collector does; cluster-scoped kinds count
// under the "" namespace.
func (g *clusterGen) apiUsage(doc *inventory.Document) {
	for _, k := range usageKinds {
		u := inventory.APIUsage{Group: k.group, Version: k.version, Kind: k.kind, Namespaces: map[string]int{}}
		if k.perMille == 0 {
			u.Count = 1 + g.rng.IntN(5)
			u.Namespaces[""] = u.Count
			doc.APIUsage = append(doc.APIUsage, u)
			continue
		}
		for i := range g.ns {
			if g.rng.IntN(1000) >= k.perMille {
				continue
			}
			for j := range 1 + g.rng.IntN(4) {
				u.Add(inventory.ObjectRef{Namespace: g.ns[i].Name, Name: fmt.Sprintf("%s-%d", strings.ToLower(k.kind), j)})
			}
		}
		if u.Count > 0 {
			doc.APIUsage = append(doc.APIUsage, u)
		}
	}
	inventory.SortAPIUsage(doc.APIUsage)
}

// Pad grows doc until its JSON is close to (and at most) size bytes, within every bound of
// the inventory schema: API usage rows of a custom kind, each naming 100 objects whose
// names are 4,000 characters long (MaxStringLength is 4,096). Strings that long are what
// makes a push this large while it stays under MaxValues (200,000 values): 20 MiB holds
// about 5,000 of them. It answers the JSON size reached.
func Pad(doc *inventory.Document, size int) (int, error) {
	n, err := jsonSize(doc)
	for row := 0; err == nil && n < size; row++ {
		doc.APIUsage = append(doc.APIUsage, paddingRow(row))
		var grown int
		if grown, err = jsonSize(doc); err != nil {
			break
		}
		if grown <= size {
			n = grown
			continue
		}
		// The last row overshoots: keep the prefix of its names that fits. A name and its
		// JSON punctuation take about 4,040 bytes, so this never removes too few.
		last := &doc.APIUsage[len(doc.APIUsage)-1]
		keep := len(last.Objects) - (grown-size)/4000 - 1
		if keep < 1 {
			doc.APIUsage = doc.APIUsage[:len(doc.APIUsage)-1]
			break
		}
		*last = paddingRowOf(row, keep)
		n, err = jsonSize(doc)
		break
	}
	return n, err
}

func paddingRow(row int) inventory.APIUsage { return paddingRowOf(row, inventory.MaxObjectRefs) }

// paddingRowOf is a custom kind's usage row naming that many long-named objects.
func paddingRowOf(row, objects int) inventory.APIUsage {
	name := strings.Repeat("padded-object-name-", 4000/19+1)
	u := inventory.APIUsage{Group: "padding.example.com", Version: "v1", Kind: fmt.Sprintf("Padding%d", row), Namespaces: map[string]int{}}
	for i := range objects {
		u.Add(inventory.ObjectRef{Namespace: fmt.Sprintf("ns-%d", i%10), Name: (fmt.Sprintf("%d-", i) + name)[:4000]})
	}
	return u
}

func jsonSize(doc *inventory.Document) (int, error) {
	b, err := json.Marshal(doc)
	return len(b), err
}
