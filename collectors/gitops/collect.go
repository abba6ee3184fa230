package gitops

import (
	"context"
	"fmt"
	"sort"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"

	"github.com/upgradescope/upgradescope/inventory"
)

// PageSize is how many objects one list page asks for: an Application's status can be large.
const PageSize = 50

// RefusedListTTL is how long a refused list is remembered before it is asked for again.
const RefusedListTTL = time.Hour

var (
	applications = schema.GroupVersionResource{Group: "argoproj.io", Version: "v1alpha1", Resource: "applications"}
	helmGroup    = "helm.toolkit.fluxcd.io"
	// helmVersions in the order they are preferred: the newest the cluster serves is read.
	helmVersions = []string{"v2", "v2beta2", "v2beta1"}
	sourceGroup  = "source.toolkit.fluxcd.io"
	ociVersions  = []string{"v1", "v1beta2"}
)

// Reader reads the charts GitOps tools declare. Keep one across the agent's ticks: it
// remembers refused lists for RefusedListTTL. It is not safe for concurrent use.
type Reader struct {
	dynamic   dynamic.Interface
	discovery discovery.DiscoveryInterface
	metadata  metadata.Interface
	// Clock is time.Now unless a test moves it.
	Clock   func() time.Time
	refused map[string]time.Time
	// Requests counts API requests, for the benchmark.
	Requests int
}

// NewReader builds a Reader from the clients a collector already holds.
func NewReader(dyn dynamic.Interface, disc discovery.DiscoveryInterface, meta metadata.Interface) *Reader {
	return &Reader{dynamic: dyn, discovery: disc, metadata: meta, Clock: time.Now, refused: map[string]time.Time{}}
}

// Result is what one read found, before it is folded into capabilities.
type Result struct {
	Charts []inventory.GitopsChart
	// Tools present: their CRD is served or a workload carries their tracking metadata.
	ArgoCD, Flux bool
	// DiscoveryFailed: it is not known whether either tool is installed.
	DiscoveryFailed error
	// FluxCounted says a HelmRelease deploys into this cluster (so Flux stands for releases).
	FluxCounted bool
	fluxServed  bool
	// Gaps are counted in the helm capability's reason; Incomplete ones make it partial.
	Gaps       []string
	Incomplete bool
	// Forbidden lists, for the reason when nothing could be read.
	Forbidden []string
	// Values are the values each Application or HelmRelease declares for its chart, by
	// ValuesKey. Apply leaves them out of the inventory.
	Values map[string]ChartValues
}

// Read lists Applications, HelmReleases and the OCIRepositories they point to.
func (r *Reader) Read(ctx context.Context) Result {
	var res Result
	served, err := r.servedVersions(ctx)
	if err != nil {
		res.DiscoveryFailed = err
		res.ArgoCD, res.Flux = true, true
		return res
	}
	res.ArgoCD = served[applications.Group]["v1alpha1"]
	helmVersion := firstServed(served[helmGroup], helmVersions)
	res.Flux = helmVersion != ""
	res.fluxServed = res.Flux
	if res.ArgoCD {
		r.readApplications(ctx, &res)
	}
	if res.Flux {
		r.readHelmReleases(ctx, helmVersion, firstServed(served[sourceGroup], ociVersions), &res)
	}
	if !res.ArgoCD || !res.Flux {
		r.workloadMarkers(ctx, &res)
	}
	sort.Slice(res.Charts, func(i, j int) bool { return chartLess(res.Charts[i], res.Charts[j]) })
	return res
}

func (r *Reader) servedVersions(ctx context.Context) (map[string]map[string]bool, error) {
	r.Requests++
	groups, err := discovery.ToDiscoveryInterfaceWithContext(r.discovery).ServerGroupsWithContext(ctx)
	if err != nil {
		return nil, fmt.Errorf("discover API groups: %w", err)
	}
	out := map[string]map[string]bool{}
	for _, g := range groups.Groups {
		out[g.Name] = map[string]bool{}
		for _, v := range g.Versions {
			out[g.Name][v.Version] = true
		}
	}
	return out, nil
}

func firstServed(served map[string]bool, preferred []string) string {
	for _, v := range preferred {
		if served[v] {
			return v
		}
	}
	return ""
}

func (r *Reader) readApplications(ctx context.Context, res *Result) {
	var other, invalid int
	err := r.list(ctx, applications, "", func(u *unstructured.Unstructured) {
		a := fromApplication(u)
		a.keep(res)
		other += b2i(a.otherCluster)
		invalid += b2i(a.invalidNamespace)
	})
	if err != nil {
		res.note(applications.Resource, err)
	}
	if other > 0 {
		res.gap(false, fmt.Sprintf("%d Argo CD Application(s) deploy to other clusters", other))
	}
	if invalid > 0 {
		res.gap(false, fmt.Sprintf("%d Argo CD Application(s) name a destination that is no namespace name", invalid))
	}
}

func (res *Result) gap(incomplete bool, text string) {
	res.Gaps = append(res.Gaps, text)
	res.Incomplete = res.Incomplete || incomplete
}

func (res *Result) note(resource string, err error) {
	if apierrors.IsForbidden(err) || apierrors.IsUnauthorized(err) {
		res.Forbidden = append(res.Forbidden, resource)
		return
	}
	res.gap(true, fmt.Sprintf("list %s: %v", resource, err))
}

// list reads every object of gvr in namespace ("" for all), PageSize at a time.
func (r *Reader) list(ctx context.Context, gvr schema.GroupVersionResource, namespace string, each func(*unstructured.Unstructured)) error {
	return r.listSelected(ctx, gvr, namespace, "", each)
}

// listSelected reads every object of gvr in namespace that selector (a label selector, ""
// for all) matches, PageSize at a time.
func (r *Reader) listSelected(ctx context.Context, gvr schema.GroupVersionResource, namespace, selector string, each func(*unstructured.Unstructured)) error {
	opts := metav1.ListOptions{Limit: PageSize, LabelSelector: selector}
	for {
		r.Requests++
		page, err := r.dynamic.Resource(gvr).Namespace(namespace).List(ctx, opts)
		if err != nil {
			return err
		}
		for i := range page.Items {
			each(&page.Items[i])
		}
		if opts.Continue = page.GetContinue(); opts.Continue == "" {
			return nil
		}
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func chartLess(a, b inventory.GitopsChart) bool {
	if a.Tool != b.Tool {
		return a.Tool < b.Tool
	}
	if a.Namespace != b.Namespace {
		return a.Namespace < b.Namespace
	}
	if a.Name != b.Name {
		return a.Name < b.Name
	}
	return a.Chart < b.Chart
}
