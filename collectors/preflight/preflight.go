// Package preflight turns Kubernetes objects into the inventory's pre-flight observations
// (inventory.Preflight): PodDisruptionBudgets, the pods a node drain treats specially,
// workloads that need a node per replica, admission webhooks, aggregated APIServices, CRD
// conversion webhooks and the flags and configuration of control-plane components,
// kube-proxy and kubelets. The files collector and the live collector share it, so a
// manifest and the live object it becomes are read alike; the live collector adds what only
// a cluster shows (endpoints, nodes) to the section it returns.
package preflight

import (
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/kb/probe"
)

// Recorder accumulates bounded pre-flight observations from objects of any kind. It is not
// safe for concurrent use: give each worker its own and Merge them.
type Recorder struct {
	// KubeSystemLabels are the labels of the kube-system namespace, against which webhooks'
	// namespaceSelectors are evaluated when Section is called; nil means the one label the
	// API server sets on it, kubernetes.io/metadata.name=kube-system, all a manifest shows.
	KubeSystemLabels map[string]string

	manifests bool

	budgets bounded[budgetSeen]
	// templates are the pod templates of the manifests, for the budgets' join, and
	// autoscaled the workloads an autoscaler of the manifests scales.
	templates   templateStore
	autoscaled  map[autoscaledKey]bool
	drain       drainSeen
	placements  bounded[inventory.Placement]
	webhooks    bounded[webhookSeen]
	apiServices bounded[inventory.APIService]
	conversions bounded[inventory.Conversion]
	// components are kept whole, one per configuration (componentAt finds it by
	// componentKey): only kube-system pods, DaemonSets and configuration documents make them.
	components  []inventory.Component
	componentAt map[string]int
}

// Option configures a Recorder.
type Option func(*Recorder)

// FromManifests reads objects as manifests rather than live objects: a PodDisruptionBudget is
// joined with the workloads whose pod template it selects (live, with pods), a workload whose
// pod template has an emptyDir volume counts for the pods it will run (live, the pods
// themselves are observed), and status, which a manifest does not own, is not read from
// PodDisruptionBudgets.
func FromManifests() Option { return func(r *Recorder) { r.manifests = true } }

// NewRecorder starts an empty Recorder.
func NewRecorder(opts ...Option) *Recorder {
	r := &Recorder{}
	for _, o := range opts {
		o(r)
	}
	return r
}

// Reads says whether Observe records anything from objects of this apiVersion and kind; a
// ConfigMap only when it is kube-proxy's (KubeProxyConfigMap).
func Reads(apiVersion, kind string) bool {
	group, version := splitAPIVersion(apiVersion)
	return kindOf(group, version, kind) != other
}

// Subtrees are the parts of an object of this apiVersion and kind that Observe reads, as
// paths from its root; nil means the whole object. A collector may hand Observe an object
// holding only these subtrees (and its apiVersion and kind) and the same is recorded: the
// files collector converts no more of a workload than this.
// TestObservingTheSubtreesRecordsWhatTheWholeObjectDoes holds the table to the readers.
func Subtrees(apiVersion, kind string) [][]string {
	group, version := splitAPIVersion(apiVersion)
	switch kindOf(group, version, kind) {
	case podKind:
		return podSubtrees
	case workloadKind:
		return workloadSubtrees[kind][group]
	}
	return nil
}

var podSubtrees = [][]string{
	{"metadata", "labels"}, {"metadata", "annotations"}, {"metadata", "ownerReferences"},
	{"spec", "volumes"}, {"spec", "containers"}, {"spec", "nodeName"}, {"status", "phase"},
}

// templatePaths are where each workload kind keeps its pod template (probe.TemplatePath), by
// kind and group, looked up without building a key per object; workloadSubtrees are
// templateSubtrees likewise.
var templatePaths, workloadSubtrees = func() (map[string]map[string][]string, map[string]map[string][][]string) {
	paths, subtrees := map[string]map[string][]string{}, map[string]map[string][][]string{}
	for _, key := range probe.TemplateKinds() {
		group, kind, _ := strings.Cut(key, "/")
		if group == "core" {
			group = ""
		}
		t, ok := probe.TemplatePath(group, kind)
		if !ok || len(t) == 0 {
			continue
		}
		if paths[kind] == nil {
			paths[kind], subtrees[kind] = map[string][]string{}, map[string][][]string{}
		}
		paths[kind][group], subtrees[kind][group] = t, templateSubtrees(t, kind == "DaemonSet")
	}
	return paths, subtrees
}()

// templateSubtrees are what is read of a workload whose pod template is at path t: its
// annotations (a Helm hook's), replicas, the template's labels, volumes and placement rules,
// and a DaemonSet's containers (kube-proxy's flags).
func templateSubtrees(t []string, containers bool) [][]string {
	at := func(p ...string) []string { return slices.Concat(t, p) }
	out := [][]string{
		{"metadata", "annotations"}, {"spec", "replicas"}, at("metadata", "labels"), at("spec", "volumes"),
		at("spec", "affinity"), at("spec", "topologySpreadConstraints"),
	}
	if containers {
		out = append(out, at("spec", "containers"))
	}
	return out
}

// KubeProxyConfigMap is the name of the ConfigMap kubeadm keeps kube-proxy's configuration
// in; Observe reads no other ConfigMap.
const KubeProxyConfigMap = "kube-proxy"

// Observe records what one decoded object shows; kinds it does not judge are ignored. obj is
// the object as unstructured JSON, ref names it (in files mode with File, Line, RenderedFrom
// and Ignore). src, when not nil, is the object's own YAML or JSON text as written, starting
// on ref.Line, from which flags and feature gates are given their own lines; live passes nil.
// Observe keeps no reference to obj, any map or list in it, or src once it returns: a
// collector may reuse them.
func (r *Recorder) Observe(obj map[string]any, ref inventory.ObjectRef, src []byte) {
	r.ObserveIn(obj, ref, src, ref.Line)
}

// ObserveIn is Observe for an object read from text whose first line is line first of
// ref.File: a YAML document that may start with comments, a JSON value, one item of a List.
// The object is found in text by ref.Line, the line of its apiVersion or kind.
func (r *Recorder) ObserveIn(obj map[string]any, ref inventory.ObjectRef, text []byte, first int) {
	av, kind := str(obj, "apiVersion"), str(obj, "kind")
	group, version := splitAPIVersion(av)
	k := kindOf(group, version, kind)
	if k == other {
		return
	}
	if ref.Kind == "" {
		ref.Kind = kind
	}
	ref = boundRef(ref)
	src := source{text: text, first: first, objLine: ref.Line}
	switch k {
	case budgetKind:
		r.budget(obj, ref, av)
	case podKind:
		r.pod(obj, ref, src)
	case workloadKind:
		r.workload(obj, ref, group, src)
	case webhookKind:
		r.webhookConfiguration(obj, ref, av)
	case apiServiceKind:
		r.apiService(obj, ref)
	case crdKind:
		r.conversion(obj, ref)
	case configMapKind:
		r.kubeProxyConfigMap(obj, ref, src)
	case autoscalerKind:
		r.autoscaler(obj, ref)
	case kubeletConfigKind:
		r.configFile(obj, ref, "kubelet", src)
	case kubeProxyConfigKind:
		r.configFile(obj, ref, "kube-proxy", src)
	}
}

// Merge adds what another Recorder of the same mode recorded, as if its objects had been
// observed after this one's. other must not be used afterwards.
func (r *Recorder) Merge(other *Recorder) {
	r.budgets.merge(&other.budgets, budgetOrder)
	r.templates.merge(&other.templates)
	for k := range other.autoscaled {
		r.autoscale(k)
	}
	r.drain.merge(&other.drain)
	r.placements.merge(&other.placements, placementOrder)
	r.webhooks.merge(&other.webhooks, webhookOrder)
	r.apiServices.merge(&other.apiServices, apiServiceOrder)
	r.conversions.merge(&other.conversions, conversionOrder)
	for _, c := range other.components {
		r.addComponent(c)
	}
}

// Section returns what was recorded, sorted and within the inventory's bounds
// (inventory.MaxPreflightItems and the others in inventory/preflight.go), with what was
// left out counted in the Omitted fields. Drain is nil when no pod or workload was seen.
func (r *Recorder) Section() *inventory.Preflight {
	p := &inventory.Preflight{}
	p.DisruptionBudgets, p.DisruptionBudgetsOmitted = r.budgetSection()
	p.Drain = r.drain.section()
	p.Placements, p.PlacementsOmitted = r.placements.section(placementOrder)
	p.Webhooks, p.WebhooksOmitted = r.webhookSection()
	p.APIServices, p.APIServicesOmitted = r.apiServices.section(apiServiceOrder)
	p.Conversions, p.ConversionsOmitted = r.conversions.section(conversionOrder)
	p.Components, p.ComponentsOmitted = r.componentSection()
	return p
}

// kind is what Observe makes of an object.
type kind int

const (
	other kind = iota
	budgetKind
	podKind
	workloadKind
	webhookKind
	apiServiceKind
	crdKind
	configMapKind
	kubeletConfigKind
	kubeProxyConfigKind
	autoscalerKind
)

func kindOf(group, version, k string) kind {
	served := version == "v1" || version == "v1beta1"
	switch {
	case k == "Pod" && group == "":
		return podKind
	case workloadGroups[k][group]:
		return workloadKind
	case k == "PodDisruptionBudget" && group == "policy" && served:
		return budgetKind
	case (k == "ValidatingWebhookConfiguration" || k == "MutatingWebhookConfiguration") && group == "admissionregistration.k8s.io" && served:
		return webhookKind
	case k == "APIService" && group == "apiregistration.k8s.io" && served:
		return apiServiceKind
	case k == "CustomResourceDefinition" && group == "apiextensions.k8s.io":
		return crdKind
	case k == "ConfigMap" && group == "":
		return configMapKind
	case k == "KubeletConfiguration" && group == "kubelet.config.k8s.io":
		return kubeletConfigKind
	case k == "KubeProxyConfiguration" && group == "kubeproxy.config.k8s.io":
		return kubeProxyConfigKind
	case k == "HorizontalPodAutoscaler" && group == "autoscaling" && (version == "v1" || version == "v2" || version == "v2beta1" || version == "v2beta2"),
		k == "ScaledObject" && group == "keda.sh" && version == "v1alpha1":
		return autoscalerKind
	}
	return other
}

// workloadGroups are the groups of each workload kind Observe reads.
var workloadGroups = map[string]map[string]bool{
	"ReplicationController": {"": true},
	"Deployment":            {"apps": true, "extensions": true},
	"ReplicaSet":            {"apps": true, "extensions": true},
	"DaemonSet":             {"apps": true, "extensions": true},
	"StatefulSet":           {"apps": true},
	"Job":                   {"batch": true},
	"CronJob":               {"batch": true},
}

// splitAPIVersion splits "group/version"; the core group is "".
func splitAPIVersion(av string) (group, version string) {
	if i := strings.LastIndexByte(av, '/'); i >= 0 {
		return av[:i], av[i+1:]
	}
	return "", av
}

// kubeSystem is the label set webhooks' namespaceSelectors are evaluated against.
func (r *Recorder) kubeSystem() labels.Set {
	if r.KubeSystemLabels == nil {
		return labels.Set{"kubernetes.io/metadata.name": "kube-system"}
	}
	return labels.Set(r.KubeSystemLabels)
}

// boundRef keeps every string of ref within inventory.MaxStringLength.
func boundRef(r inventory.ObjectRef) inventory.ObjectRef {
	b := inventory.BoundString
	r.Kind, r.Namespace, r.Name, r.File, r.RenderedFrom = b(r.Kind), b(r.Namespace), b(r.Name), b(r.File), b(r.RenderedFrom)
	if r.Ignore != nil {
		r.Ignore = &inventory.IgnoreAnnotation{Rules: b(r.Ignore.Rules), Reason: b(r.Ignore.Reason)}
	}
	if r.Line < 0 {
		r.Line = 0
	}
	return r
}
