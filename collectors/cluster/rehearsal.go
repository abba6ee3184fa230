package cluster

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"

	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/kb"
	"github.com/upgradescope/upgradescope/rehearsal"
)

// Default bounds of the full-object collection (--rehearse-max-objects, and the JSON bytes of
// the objects kept, which the rehearsal holds in memory).
const (
	DefaultRehearsalMaxObjects = 20_000
	DefaultRehearsalMaxBytes   = 512 << 20
)

// RehearsalOptions say what the objects are collected for and how many to keep.
type RehearsalOptions struct {
	// KB says which APIs Target serves; Target is the minor the objects are replayed into
	// ("1.35").
	KB     *kb.KB
	Target string
	// MaxObjects and MaxBytes bound the objects kept (0: the defaults); past either the rest
	// are skipped with reason "bound", so the rehearsal's verdict is unknown.
	MaxObjects int
	MaxBytes   int64
}

func (o RehearsalOptions) withDefaults() RehearsalOptions {
	if o.MaxObjects <= 0 {
		o.MaxObjects = DefaultRehearsalMaxObjects
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultRehearsalMaxBytes
	}
	return o
}

// LiveRehearsalObjects reads whole objects of every listable, creatable resource the cluster
// serves, each at its preferred version, paged, for `upgradescope rehearse`. It leaves out
// what controllers and the server make again (recreated) and strips what the server sets.
// An object whose last-applied-configuration wrote an apiVersion the target does not serve is
// replayed as that configuration, converted: it is what the next `kubectl apply` sends.
//
// This is opt-in and for the CLI, run with the user's kubeconfig: it lists every resource,
// Secrets included, which the agent's ClusterRole (deploy/chart, deploy/chart/genrbac) does
// not grant and must not. A resource the identity may not list is one skip with reason
// "forbidden", never a failure. The error is for a cluster whose resources cannot be
// discovered at all.
func (c *Collector) LiveRehearsalObjects(ctx context.Context, opts RehearsalOptions) ([]rehearsal.Object, []rehearsal.Skipped, error) {
	opts = opts.withDefaults()
	return c.liveRehearsal(ctx, opts, &replayBudget{objects: opts.MaxObjects, bytes: opts.MaxBytes})
}

func (c *Collector) liveRehearsal(ctx context.Context, opts RehearsalOptions, b *replayBudget) ([]rehearsal.Object, []rehearsal.Skipped, error) {
	resources, skipped, err := c.rehearsalResources(ctx)
	if err != nil {
		return nil, nil, err
	}
	dyn, err := dynamic.NewForConfig(c.config)
	if err != nil {
		return nil, nil, fmt.Errorf("create dynamic client: %w", err)
	}
	col := &liveCollection{opts: opts, budget: b, skipped: skipped}
	col.apps = argoApplications(ctx, dyn, resources)
	for _, r := range resources {
		col.list(ctx, dyn, r)
	}
	return col.objects, col.skipped, nil
}

// resource is one resource the collection lists.
type resource struct {
	gvr  schema.GroupVersionResource
	kind string
}

// rehearsalResources are the resources to list, at each group's preferred version, in group
// and resource order. A group whose discovery failed is a skip.
func (c *Collector) rehearsalResources(ctx context.Context) ([]resource, []rehearsal.Skipped, error) {
	disc := discovery.ToDiscoveryInterfaceWithContext(c.client.Discovery())
	lists, err := disc.ServerPreferredResourcesWithContext(ctx)
	var skipped []rehearsal.Skipped
	var failed *discovery.ErrGroupDiscoveryFailed
	switch {
	case errors.As(err, &failed):
		for gv, gerr := range failed.Groups {
			skipped = append(skipped, rehearsal.Skipped{APIVersion: gv.String(), Source: inventory.RehearsalSource{Live: true}, Reason: SkipListFailed, Message: fmt.Sprintf("discover %s: %v", gv, gerr)})
		}
	case err != nil:
		return nil, nil, fmt.Errorf("discover the cluster's resources: %w", err)
	}
	var out []resource
	for _, l := range lists {
		gv, perr := schema.ParseGroupVersion(l.GroupVersion)
		if perr != nil {
			continue
		}
		for _, r := range l.APIResources {
			gr := gv.WithResource(r.Name).GroupResource()
			// Subresources, and what cannot be listed and made again (reviews, metrics).
			if strings.Contains(r.Name, "/") || !hasVerb(r.Verbs, "list") || !hasVerb(r.Verbs, "create") || notReplayedResources[gr] {
				continue
			}
			out = append(out, resource{gvr: gv.WithResource(r.Name), kind: r.Kind})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].gvr.String() < out[j].gvr.String() })
	sortSkipped(skipped)
	return out, skipped, nil
}

// replayBudget is what is left of the bounds, shared by the live objects and the Helm manifests'.
type replayBudget struct {
	objects int
	bytes   int64
}

// take spends one object of size bytes, or says the bounds are reached.
func (b *replayBudget) take(size int) bool {
	if b.objects < 1 || int64(size) > b.bytes {
		b.objects = 0
		return false
	}
	b.objects--
	b.bytes -= int64(size)
	return true
}

func (b *replayBudget) spent() bool { return b.objects < 1 }

// liveCollection accumulates one collection's objects and skips.
type liveCollection struct {
	opts    RehearsalOptions
	budget  *replayBudget
	apps    map[string][]string // Argo CD Application name → its namespaces
	objects []rehearsal.Object
	skipped []rehearsal.Skipped
}

// list reads one resource page by page; a refusal or failure is one skip for the resource.
func (col *liveCollection) list(ctx context.Context, dyn dynamic.Interface, r resource) {
	if col.budget.spent() {
		col.skipResource(r, SkipBound, col.boundMessage()+": not listed")
		return
	}
	err := listPages(ctx, dyn.Resource(r.gvr).List, func(page *unstructured.UnstructuredList) {
		for i := range page.Items {
			col.add(r, &page.Items[i])
		}
	})
	switch {
	case err == nil:
	case isDenied(err):
		a := access{verb: "list", group: r.gvr.Group, resource: r.gvr.Resource}
		col.skipResource(r, SkipForbidden, a.failed(err))
	default:
		col.skipResource(r, SkipListFailed, fmt.Sprintf("list %s: %v", r.gvr.GroupResource(), err))
	}
}

func (col *liveCollection) skipResource(r resource, reason, msg string) {
	col.skipped = append(col.skipped, rehearsal.Skipped{
		APIVersion: r.gvr.GroupVersion().String(), Kind: r.kind,
		Source: inventory.RehearsalSource{Live: true}, Reason: reason, Message: msg,
	})
}

func (col *liveCollection) boundMessage() string {
	return fmt.Sprintf("the rehearsal's bound of %d objects or %d MiB of objects was reached", col.opts.MaxObjects, col.opts.MaxBytes>>20)
}

// add keeps one listed object, as the rehearsal replays it, unless it is recreated.
func (col *liveCollection) add(r resource, obj *unstructured.Unstructured) {
	if recreated(r.gvr.GroupResource(), obj) {
		return
	}
	src := liveSource(obj, col.apps)
	o, err := replayable(col.opts, obj)
	skip := rehearsal.Skipped{APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind(), Namespace: obj.GetNamespace(), Name: obj.GetName(), Source: src}
	if err != nil {
		skip.Reason, skip.Message = SkipNoConversion, err.Error()
		col.skipped = append(col.skipped, skip)
		return
	}
	raw, err := o.Obj.MarshalJSON()
	if err != nil || !col.budget.take(len(raw)) {
		skip.Reason, skip.Message = SkipBound, col.boundMessage()
		col.skipped = append(col.skipped, skip)
		return
	}
	o.Source, o.FieldManager = src, fieldManager(obj)
	col.objects = append(col.objects, o)
}

// replayable is the object as the rehearsal sends it: the last-applied-configuration when it
// wrote an apiVersion the target does not serve, else the object as listed; converted when
// its apiVersion is not served; stripped.
func replayable(opts RehearsalOptions, obj *unstructured.Unstructured) (rehearsal.Object, error) {
	written := obj.DeepCopy()
	if applied := lastApplied(obj); applied != nil && applied.GetAPIVersion() != obj.GetAPIVersion() &&
		!servedBy(opts.KB, applied.GetAPIVersion(), applied.GetKind(), opts.Target) {
		written = applied
		if written.GetNamespace() == "" {
			written.SetNamespace(obj.GetNamespace())
		}
	}
	var out rehearsal.Object
	if !servedBy(opts.KB, written.GetAPIVersion(), written.GetKind(), opts.Target) {
		converted, err := toTarget(opts.KB, written.Object, opts.Target)
		if err != nil {
			return out, err
		}
		out.OriginalAPIVersion = written.GetAPIVersion()
		written = converted
	}
	rehearsal.Strip(written, true)
	out.Obj = written
	return out, nil
}

// lastApplied is the object kubectl apply last sent, or nil when there is none or it does not
// decode as an object of the same kind.
func lastApplied(obj *unstructured.Unstructured) *unstructured.Unstructured {
	text := obj.GetAnnotations()["kubectl.kubernetes.io/last-applied-configuration"]
	if text == "" {
		return nil
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON([]byte(text)); err != nil || u.GetKind() != obj.GetKind() {
		return nil
	}
	return u
}

// fieldManager is the manager of the object's Apply entry in managedFields, else of its first
// Update, else "". Writes to a subresource are left out: a controller applying its status
// (the priority and fairness consumer on every FlowSchema) did not write the object.
func fieldManager(obj *unstructured.Unstructured) string {
	fields := obj.GetManagedFields()
	for _, f := range fields {
		if f.Operation == metav1.ManagedFieldsOperationApply && f.Subresource == "" {
			return f.Manager
		}
	}
	for _, f := range fields {
		if f.Operation == metav1.ManagedFieldsOperationUpdate && f.Subresource == "" {
			return f.Manager
		}
	}
	return ""
}

// liveSource names where a live object comes from: the cluster, and the Helm release or Argo
// CD Application that manages it.
func liveSource(obj *unstructured.Unstructured, apps map[string][]string) inventory.RehearsalSource {
	src := inventory.RehearsalSource{Live: true}
	ann := obj.GetAnnotations()
	if name, ns := ann["meta.helm.sh/release-name"], ann["meta.helm.sh/release-namespace"]; name != "" && ns != "" {
		src.HelmRelease = ns + "/" + name
	}
	src.Application = argoApplication(ann["argocd.argoproj.io/tracking-id"], obj.GetLabels()["app.kubernetes.io/instance"], apps)
	return src
}

// argoApplication reads the Application from a tracking id ("app:group/Kind:ns/name", where
// app is "namespace_name" for an Application outside Argo CD's own namespace), else from the
// instance label when exactly one Application has that name. It is "namespace/name" when the
// namespace is known.
func argoApplication(trackingID, instance string, apps map[string][]string) string {
	if app, _, ok := strings.Cut(trackingID, ":"); ok && app != "" {
		if ns, name, ok := strings.Cut(app, "_"); ok {
			return ns + "/" + name
		}
		if nss := apps[app]; len(nss) == 1 {
			return nss[0] + "/" + app
		}
		return app
	}
	if nss := apps[instance]; instance != "" && len(nss) == 1 {
		return nss[0] + "/" + instance
	}
	return ""
}

// argoApplications maps the name of every Argo CD Application the identity can list to its
// namespaces; none when Argo CD is not installed or the list is refused.
func argoApplications(ctx context.Context, dyn dynamic.Interface, resources []resource) map[string][]string {
	apps := map[string][]string{}
	for _, r := range resources {
		if r.gvr.Group != "argoproj.io" || r.kind != "Application" {
			continue
		}
		_ = listPages(ctx, dyn.Resource(r.gvr).List, func(page *unstructured.UnstructuredList) {
			for _, a := range page.Items {
				apps[a.GetName()] = append(apps[a.GetName()], a.GetNamespace())
			}
		})
	}
	return apps
}

func sortSkipped(s []rehearsal.Skipped) {
	sort.SliceStable(s, func(i, j int) bool { return skipKey(s[i]) < skipKey(s[j]) })
}

func skipKey(s rehearsal.Skipped) string {
	return strings.Join([]string{s.APIVersion, s.Kind, s.Namespace, s.Name}, "/")
}
