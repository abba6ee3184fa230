package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apiextv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/upgradescope/upgradescope/collectors/preflight"
	"github.com/upgradescope/upgradescope/inventory"
)

// preflightPass is one collection's pre-flight observations (inventory.Preflight): what
// stalls an upgrade that no API version shows. Several steps feed it, each reading what it
// lists anyway where it can (the versions step's nodes and kube-system pods, the pod pass's
// pods, the CRD step's CRDs) and the pre-flight steps the rest; the last step, service
// endpoints, joins the services the others name and writes doc.Preflight. Each part fills
// its own capability.
type preflightPass struct {
	rec *preflight.Recorder
	dyn dynamic.Interface
	// dynErr is why the dynamic client could not be built; every list through it fails so.
	dynErr error

	budgets *budgets
	// nodes is the node state the versions step read; nil when it could not list nodes.
	nodes *inventory.NodeState
	// configzNodes are the nodes whose kubelet configuration is read, one per kubelet
	// version and OS image.
	configzNodes []string
	// controlPlanePods counts the control-plane pods observed in kube-system (static pods
	// in a cluster that runs its own); kubeSystemPods is why kube-system's pods could not be
	// listed.
	controlPlanePods int
	kubeSystemPods   error
	// podsListed is true when this collection listed pods (a pod pass): what they gave
	// replaces the collector's cached pass, which a collection that reuses it reads.
	podsListed bool
	// counts are what each step found, for its progress line.
	counts map[string]int
}

func (c *Collector) newPreflightPass() *preflightPass {
	p := &preflightPass{rec: preflight.NewRecorder(), budgets: newBudgets(), counts: map[string]int{},
		kubeSystemPods: errVersionsFailed}
	p.dyn, p.dynErr = dynamic.NewForConfig(c.config)
	return p
}

// preflightSteps are the pre-flight steps that run after the others: each lists its kinds;
// the last joins services and writes the section.
func (c *Collector) preflightSteps(doc *inventory.Document, opts Options, p *preflightPass) []step {
	fills := func(name string, run func(context.Context) inventory.Capability) func(context.Context) {
		return func(ctx context.Context) { doc.Capabilities[name] = run(ctx) }
	}
	return []step{
		{inventory.CapWebhooks, fills(inventory.CapWebhooks, p.webhooks),
			func() (int, string) { return p.count(inventory.CapWebhooks), "webhook configurations" }},
		{inventory.CapAPIServices, fills(inventory.CapAPIServices, p.apiServices),
			func() (int, string) { return p.count(inventory.CapAPIServices), "APIServices" }},
		{inventory.CapComponentFlags, fills(inventory.CapComponentFlags, p.kubeProxy),
			func() (int, string) { return p.count(inventory.CapComponentFlags), "components" }},
		{inventory.CapKubeletConfig, fills(inventory.CapKubeletConfig, func(ctx context.Context) inventory.Capability {
			return c.kubeletConfig(ctx, p, opts.KubeletConfigz)
		}), func() (int, string) { return p.count(inventory.CapKubeletConfig), "kubelet configurations" }},
		{inventory.CapEndpoints, func(ctx context.Context) {
			doc.Preflight = p.section(c)
			p.cuts(doc)
			doc.Capabilities[inventory.CapEndpoints] = namersRead(doc, p.endpoints(ctx, doc.Preflight))
		}, func() (int, string) { return p.count(inventory.CapEndpoints), "services" }},
	}
}

// namersRead qualifies service-endpoints by what could name a service: the services of
// webhooks, APIServices or CRDs that could not be listed were not read either. None listed
// leaves it unavailable; some, partial.
func namersRead(doc *inventory.Document, read inventory.Capability) inventory.Capability {
	var unread []string
	for _, name := range []string{inventory.CapWebhooks, inventory.CapAPIServices, inventory.CapCRDs} {
		if c, ok := doc.Capabilities[name]; !ok || !c.Available {
			unread = append(unread, name)
		}
	}
	switch {
	case len(unread) == 0 || !read.Available:
		return read
	case len(unread) == 3:
		return inventory.Capability{Available: false, Reason: "not read: the webhooks, APIServices and CRDs that name the services could not be listed"}
	}
	read.Partial = true
	read.Reason = strings.TrimPrefix(read.Reason+"; ", "; ") + "the services " + strings.Join(unread, " and ") + " name were not read: they could not be listed"
	return read
}

// count is what a step found, for its progress line.
func (p *preflightPass) count(capability string) int {
	return p.counts[capability]
}

// errNotServed says the cluster serves none of the versions asked for.
var errNotServed = errors.New("not served")

// listServed lists resource at the first of versions the cluster serves, in namespace ("" for
// all), and hands each page over. A version the cluster does not serve answers 404 to its
// list, before any page; listServed then tries the next, and answers errNotServed after the
// last.
func (p *preflightPass) listServed(ctx context.Context, group, resource, namespace string, versions []string, opts metav1.ListOptions, each func(version string, page *unstructured.UnstructuredList)) error {
	if p.dynErr != nil {
		return p.dynErr
	}
	for _, v := range versions {
		r := p.dyn.Resource(schema.GroupVersionResource{Group: group, Version: v, Resource: resource})
		list := r.List
		if namespace != "" {
			list = r.Namespace(namespace).List
		}
		handed := false
		err := listPagesWith(ctx, opts, list, func(page *unstructured.UnstructuredList) {
			handed = true
			each(v, page)
		})
		if !(apierrors.IsNotFound(err) && !handed) {
			return err
		}
	}
	return errNotServed
}

// observeAll lists the kinds and hands each object to the recorder; the first list that
// fails makes the capability unavailable, naming the read. A kind the cluster serves at none
// of its versions has no objects.
func (p *preflightPass) observeAll(ctx context.Context, capability string, kinds []listedKind) inventory.Capability {
	var notServed []string
	for _, k := range kinds {
		a := access{verb: "list", group: k.group, resource: k.resource}
		err := p.listServed(ctx, k.group, k.resource, "", k.versions, metav1.ListOptions{}, func(_ string, page *unstructured.UnstructuredList) {
			for i := range page.Items {
				p.observe(&page.Items[i], k.kind)
				p.counts[capability]++
			}
		})
		if errors.Is(err, errNotServed) {
			notServed = append(notServed, fmt.Sprintf("%s.%s (%s)", k.resource, k.group, strings.Join(k.versions, ", ")))
			continue
		}
		if err != nil {
			return a.unavailable(err)
		}
	}
	if len(notServed) > 0 {
		return inventory.Capability{Available: true, Reason: "the cluster serves none of " + strings.Join(notServed, "; ") + ": there are none"}
	}
	return inventory.Capability{Available: true}
}

// listedKind is a kind a pre-flight step lists, at the first of versions served.
type listedKind struct {
	group, resource, kind string
	versions              []string
}

func (p *preflightPass) observe(obj *unstructured.Unstructured, kind string) {
	ref := inventory.ObjectRef{Kind: kind, Namespace: obj.GetNamespace(), Name: obj.GetName(), Ignore: ignoreOf(obj.GetAnnotations())}
	p.rec.Observe(obj.Object, ref, nil)
}

// webhooks observes every validating and mutating admission webhook configuration.
func (p *preflightPass) webhooks(ctx context.Context) inventory.Capability {
	versions := []string{"v1", "v1beta1"}
	return p.observeAll(ctx, inventory.CapWebhooks, []listedKind{
		{"admissionregistration.k8s.io", "validatingwebhookconfigurations", "ValidatingWebhookConfiguration", versions},
		{"admissionregistration.k8s.io", "mutatingwebhookconfigurations", "MutatingWebhookConfiguration", versions},
	})
}

// apiServices observes every APIService; the recorder keeps those a service backs. Every
// kube-apiserver since 1.7 serves apiregistration.k8s.io (the aggregator is part of it); a
// server that does not aggregates nothing, and the capability says so.
func (p *preflightPass) apiServices(ctx context.Context) inventory.Capability {
	return p.observeAll(ctx, inventory.CapAPIServices, []listedKind{
		{"apiregistration.k8s.io", "apiservices", "APIService", []string{"v1", "v1beta1"}},
	})
}

// conversion observes a CRD whose versions convert through a webhook; the CRD step lists
// them anyway.
func (p *preflightPass) conversion(crd *apiextv1.CustomResourceDefinition) {
	if p == nil || crd.Spec.Conversion == nil || crd.Spec.Conversion.Strategy != apiextv1.WebhookConverter {
		return
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(crd)
	if err != nil {
		return
	}
	u := &unstructured.Unstructured{Object: obj}
	u.SetAPIVersion("apiextensions.k8s.io/v1")
	u.SetKind("CustomResourceDefinition")
	p.observe(u, "CustomResourceDefinition")
}

// errVersionsFailed is why the versions step read no nodes and no kube-system pods.
var errVersionsFailed = errors.New("not listed: the server version could not be read")

// nodesRead takes the versions step's nodes, or why they could not be listed, and fills
// node-state.
func (p *preflightPass) nodesRead(doc *inventory.Document, nodes []corev1.Node, err error) {
	if p == nil {
		return
	}
	if err != nil {
		doc.Capabilities[inventory.CapNodeState] = access{verb: "list", resource: "nodes"}.unavailable(err)
		return
	}
	p.nodes, p.configzNodes = nodeState(nodes), configzSample(nodes, MaxConfigzNodes)
	doc.Capabilities[inventory.CapNodeState] = inventory.Capability{Available: true}
}

// kubeSystem takes what the versions step read of kube-system: its labels (webhooks'
// namespaceSelectors are matched against them), its pods or why they could not be listed.
// Every kube-system pod is observed here, for its drain facts and the flags of the
// components it runs (control-plane static pods); the pod pass leaves them out, so each pod
// is observed once, and the components are read at every collection.
func (p *preflightPass) kubeSystem(labels map[string]string, pods []corev1.Pod, podsErr error) {
	if p == nil {
		return
	}
	if labels != nil {
		p.rec.KubeSystemLabels = labels
	}
	p.kubeSystemPods = podsErr
	for i := range pods {
		pod := &pods[i]
		p.observePod(pod)
		if isControlPlane(componentOf(*pod)) {
			p.controlPlanePods++
		}
	}
}

// observePod hands a pod to the recorder.
func (p *preflightPass) observePod(pod *corev1.Pod) {
	if obj, err := podObject(pod); err == nil {
		p.rec.Observe(obj, inventory.ObjectRef{Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name, Ignore: ignoreOf(pod.Annotations)}, nil)
	}
}

func isControlPlane(component string) bool {
	switch component {
	case "kube-apiserver", "kube-controller-manager", "kube-scheduler":
		return true
	}
	return false
}

// podObject is a pod as the recorder reads objects.
func podObject(p *corev1.Pod) (map[string]any, error) {
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(p)
	if err != nil {
		return nil, err
	}
	obj["apiVersion"], obj["kind"] = "v1", "Pod"
	return obj, nil
}

// kubeProxy observes kube-proxy's DaemonSet and ConfigMap in kube-system, by name, and
// judges what the component flags could see: the control-plane static pods the versions
// step observed and kube-proxy.
func (p *preflightPass) kubeProxy(ctx context.Context) inventory.Capability {
	if p.kubeSystemPods != nil {
		return access{verb: "list", resource: "pods", namespace: "kube-system"}.unavailable(p.kubeSystemPods)
	}
	if p.dynErr != nil {
		return inventory.Capability{Available: false, Reason: "dynamic client: " + p.dynErr.Error()}
	}
	found := 0
	for _, k := range []struct{ group, version, resource, kind string }{
		{"apps", "v1", "daemonsets", "DaemonSet"},
		{"", "v1", "configmaps", "ConfigMap"},
	} {
		gvr := schema.GroupVersionResource{Group: k.group, Version: k.version, Resource: k.resource}
		obj, err := p.dyn.Resource(gvr).Namespace("kube-system").Get(ctx, "kube-proxy", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return access{verb: "get", group: k.group, resource: k.resource, namespace: "kube-system", name: "kube-proxy"}.unavailable(err)
		}
		p.observe(obj, k.kind)
		found++
	}
	p.counts[inventory.CapComponentFlags] = p.controlPlanePods + found
	var missing []string
	if p.controlPlanePods == 0 {
		missing = append(missing, "no control-plane pods in kube-system (a managed control plane runs them out of sight)")
	}
	if found == 0 {
		missing = append(missing, "no kube-proxy DaemonSet or ConfigMap in kube-system")
	}
	if len(missing) == 0 {
		return inventory.Capability{Available: true}
	}
	return inventory.Capability{Available: true, Reason: strings.Join(missing, "; ")}
}

// pod takes one pod of the pod pass: the budgets that select it and, but for kube-system's
// (observed whole from the versions step), its drain facts.
func (p *preflightPass) pod(pod *corev1.Pod) {
	p.budgets.match(pod)
	if pod.Namespace != "kube-system" {
		p.rec.Observe(drainView(pod), inventory.ObjectRef{Kind: "Pod", Namespace: pod.Namespace, Name: pod.Name, Ignore: ignoreOf(pod.Annotations)}, nil)
	}
}

// drainView is the part of a pod outside kube-system that the recorder reads, kubectl
// drain's filters: its owner references, annotations (a mirror pod's), emptyDir volumes and
// phase. Built by hand it costs about a seventh of converting the whole pod
// (BenchmarkObservingAPod), once per pod of the cluster; TestADrainViewIsObservedAsTheWholePod
// holds the recorder's section of the two alike.
func drainView(p *corev1.Pod) map[string]any {
	meta := map[string]any{"name": p.Name, "namespace": p.Namespace}
	if len(p.Annotations) > 0 {
		annotations := make(map[string]any, len(p.Annotations))
		for k, v := range p.Annotations {
			annotations[k] = v
		}
		meta["annotations"] = annotations
	}
	if len(p.OwnerReferences) > 0 {
		owners := make([]any, 0, len(p.OwnerReferences))
		for _, o := range p.OwnerReferences {
			owner := map[string]any{"apiVersion": o.APIVersion, "kind": o.Kind, "name": o.Name}
			if o.Controller != nil {
				owner["controller"] = *o.Controller
			}
			owners = append(owners, owner)
		}
		meta["ownerReferences"] = owners
	}
	var volumes []any
	for _, v := range p.Spec.Volumes {
		if v.EmptyDir != nil {
			volumes = append(volumes, map[string]any{"name": v.Name, "emptyDir": map[string]any{}})
		}
	}
	spec := map[string]any{}
	if volumes != nil {
		spec["volumes"] = volumes
	}
	return map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": map[string]any{"phase": string(p.Status.Phase)}}
}

// workloads observes the Deployments and StatefulSets (apps/v1), whole, for the placements
// whose replicas each need a node; the pod pass lists them with the pods. One that cannot be
// listed leaves the pods capability partial, naming the grant.
func (p *preflightPass) workloads(ctx context.Context) inventory.Capability {
	var skipped []string
	for _, k := range []listedKind{
		{"apps", "deployments", "Deployment", []string{"v1"}},
		{"apps", "statefulsets", "StatefulSet", []string{"v1"}},
	} {
		err := p.listServed(ctx, k.group, k.resource, "", k.versions, metav1.ListOptions{}, func(_ string, page *unstructured.UnstructuredList) {
			for i := range page.Items {
				p.observe(&page.Items[i], k.kind)
			}
		})
		if err != nil && !errors.Is(err, errNotServed) {
			skipped = append(skipped, access{verb: "list", group: k.group, resource: k.resource}.failed(err))
		}
	}
	if len(skipped) > 0 {
		return inventory.Capability{Available: true, Partial: true, Reason: "placements not read: " + strings.Join(skipped, "; "), Skipped: skipped}
	}
	return inventory.Capability{Available: true}
}

// section is the recorded section with what the collector joins itself: each budget's status
// and pods, the drain facts and placements of this pod pass or of the last one reused, and
// the node state. Without pods (the list failed) the drain facts, placements and budgets'
// pods are absent, not empty.
func (p *preflightPass) section(c *Collector) *inventory.Preflight {
	sec := p.rec.Section()
	podsKnown := true
	switch {
	case p.podsListed:
		c.pods.drain, c.pods.budgets = cloneDrain(sec.Drain), p.budgets.snapshot()
		c.pods.placements, c.pods.placementsOmitted = slices.Clone(sec.Placements), sec.PlacementsOmitted
	case c.pods.reused && c.pods.budgets != nil:
		sec.Drain = cloneDrain(c.pods.drain)
		sec.Placements, sec.PlacementsOmitted = slices.Clone(c.pods.placements), c.pods.placementsOmitted
		p.budgets.reuse(c.pods.budgets)
	default:
		sec.Drain, sec.Placements, sec.PlacementsOmitted, podsKnown = nil, nil, 0, false
	}
	p.budgets.fill(sec, podsKnown)
	sec.NodeState = p.nodes
	return sec
}

// cuts qualifies each capability whose list the recorder cut at inventory.MaxPreflightItems:
// webhooks, APIServices, conversions (crds) and components are partial whenever cut, naming
// how many and the bound. Budgets are kept those that may block a drain first
// (DisruptionBudget.MayBlock): cut ones are only partial when one of them may block (no
// disruption allowed, or no status yet); otherwise the capability stays whole, saying the
// budgets left out all allowed a disruption. A capability not available stays so.
func (p *preflightPass) cuts(doc *inventory.Document) {
	sec := doc.Preflight
	if sec == nil {
		return
	}
	mark := func(capability string, omitted int, what string) {
		c, ok := doc.Capabilities[capability]
		if !ok || !c.Available || omitted == 0 {
			return
		}
		c.Partial = true
		c.Reason = strings.TrimPrefix(c.Reason+"; ", "; ") + fmt.Sprintf("%d %s past the %d an inventory lists", omitted, what, inventory.MaxPreflightItems)
		doc.Capabilities[capability] = c
	}
	mark(inventory.CapWebhooks, sec.WebhooksOmitted, "webhook(s)")
	mark(inventory.CapAPIServices, sec.APIServicesOmitted, "APIService(s)")
	mark(inventory.CapCRDs, sec.ConversionsOmitted, "CRD conversion webhook(s)")
	mark(inventory.CapComponentFlags, sec.ComponentsOmitted, "component configuration(s)")
	if sec.DisruptionBudgetsOmitted == 0 {
		return
	}
	if blocking := p.budgets.cutThatMayBlock(sec.DisruptionBudgets); blocking > 0 {
		mark(inventory.CapDisruptionBudgets, sec.DisruptionBudgetsOmitted,
			fmt.Sprintf("PodDisruptionBudget(s), %d of them allowing no disruption or not yet judged,", blocking))
		return
	}
	if c, ok := doc.Capabilities[inventory.CapDisruptionBudgets]; ok && c.Available {
		c.Reason = strings.TrimPrefix(c.Reason+"; ", "; ") + fmt.Sprintf("%d PodDisruptionBudget(s) past the %d an inventory lists, all allowing a disruption",
			sec.DisruptionBudgetsOmitted, inventory.MaxPreflightItems)
		doc.Capabilities[inventory.CapDisruptionBudgets] = c
	}
}

func cloneDrain(d *inventory.DrainPods) *inventory.DrainPods {
	if d == nil {
		return nil
	}
	out := *d
	out.Unreplicated.Objects = slices.Clone(d.Unreplicated.Objects)
	out.LocalStorage.Objects = slices.Clone(d.LocalStorage.Objects)
	return &out
}
