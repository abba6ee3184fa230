package preflight

import (
	"cmp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/upgradescope/upgradescope/inventory"
)

// BudgetSelector is which pods a PodDisruptionBudget selects, read as the disruption
// controller reads it: metav1.LabelSelectorAsSelector over spec.selector, so an absent
// selector selects no pod and an empty one every pod of the namespace — except in
// policy/v1beta1, where the API server stores an empty selector as one that selects none
// (getPodsForPdb in the disruption controller; Convert_v1beta1_PodDisruptionBudget_To_policy):
//
//	https://github.com/kubernetes/kubernetes/blob/v1.35.4/pkg/controller/disruption/disruption.go
//	[pdb-v1beta1-empty] https://github.com/kubernetes/kubernetes/blob/v1.35.4/pkg/apis/policy/v1beta1/conversion.go
//
// The zero value selects nothing.
type BudgetSelector struct {
	selector labels.Selector
}

// BudgetSelectorOf reads a PodDisruptionBudget's selector (obj is the whole object, as
// unstructured JSON).
func BudgetSelectorOf(obj map[string]any) BudgetSelector {
	sel := at(obj, "spec", "selector")
	if _, version := splitAPIVersion(str(obj, "apiVersion")); version == "v1beta1" && emptySelector(sel) {
		return BudgetSelector{labels.Nothing()}
	}
	return BudgetSelector{selectorOf(sel)}
}

// Matches says whether a pod with these labels, in the budget's namespace, is selected.
func (b BudgetSelector) Matches(podLabels map[string]string) bool {
	return b.matches(labels.Set(podLabels))
}

func (b BudgetSelector) matches(l labels.Labels) bool {
	return b.selector != nil && b.selector.Matches(l)
}

// budgetSeen is a budget and, in files mode, the selector its workloads are joined by.
type budgetSeen struct {
	budget   inventory.DisruptionBudget
	selector BudgetSelector
}

func budgetOrder(a, b budgetSeen) int { return refOrder(a.budget.Object, b.budget.Object) }

// podTemplate is a workload or bare Pod of the manifests, as a budget's selector sees it,
// kept small: a repository holds tens of thousands of templates and few budgets, and every
// template is kept until the last file is read. Its labels are packed into one string
// (packLabels) matched in place; its reference is the object's kind, namespace, name, file
// and line (a budget's workloads are named, not judged, so their chart and suppression
// annotation are left out).
type podTemplate struct {
	kind, namespace, name, file string
	line, replicas              int
	labels                      string
}

func (t *podTemplate) ref() inventory.ObjectRef {
	return inventory.ObjectRef{Kind: t.kind, Namespace: t.namespace, Name: t.name, File: t.file, Line: t.line}
}

// packLabels packs a label map as key NUL value NUL …. A label holding a NUL, or whose value
// is no string, is left out: the API server refuses it.
func packLabels(v any) string {
	m, _ := v.(map[string]any)
	n := 0
	for k, val := range m {
		if s, ok := val.(string); ok {
			n += len(k) + len(s) + 2
		}
	}
	b := make([]byte, 0, n)
	for k, val := range m {
		if s, ok := val.(string); ok && strings.IndexByte(k, 0) < 0 && strings.IndexByte(s, 0) < 0 {
			b = append(append(append(append(b, k...), 0), s...), 0)
		}
	}
	return string(b)
}

// packedLabels are packLabels's string read as labels.Labels, for a selector to match
// without a map.
type packedLabels string

func (p packedLabels) Lookup(label string) (string, bool) {
	for s := string(p); s != ""; {
		k, rest, _ := strings.Cut(s, "\x00")
		v, next, _ := strings.Cut(rest, "\x00")
		if k == label {
			return v, true
		}
		s = next
	}
	return "", false
}

func (p packedLabels) Has(label string) bool {
	_, ok := p.Lookup(label)
	return ok
}

func (p packedLabels) Get(label string) string {
	v, _ := p.Lookup(label)
	return v
}

func (r *Recorder) budget(obj map[string]any, ref inventory.ObjectRef, apiVersion string) {
	spec := mapAt(obj, "spec")
	b := inventory.DisruptionBudget{
		Object:                     ref,
		APIVersion:                 inventory.BoundString(apiVersion),
		MinAvailable:               intOrString(spec["minAvailable"]),
		MaxUnavailable:             intOrString(spec["maxUnavailable"]),
		SelectorEmpty:              emptySelector(spec["selector"]),
		UnhealthyPodEvictionPolicy: inventory.BoundString(str(spec, "unhealthyPodEvictionPolicy")),
	}
	if !r.manifests {
		b.Status = budgetStatus(mapAt(obj, "status"))
	}
	r.budgets.add(budgetSeen{budget: b, selector: BudgetSelectorOf(obj)}, budgetOrder)
}

// budgetStatus reads a live budget's status; nil before the disruption controller wrote it.
func budgetStatus(status map[string]any) *inventory.BudgetStatus {
	if status == nil || status["disruptionsAllowed"] == nil && status["expectedPods"] == nil {
		return nil
	}
	return &inventory.BudgetStatus{
		DisruptionsAllowed: count(status["disruptionsAllowed"], 0),
		CurrentHealthy:     count(status["currentHealthy"], 0),
		DesiredHealthy:     count(status["desiredHealthy"], 0),
		ExpectedPods:       count(status["expectedPods"], 0),
	}
}

// template remembers, in files mode, a workload's pod template (or a bare Pod) for the
// budgets that may select it. DaemonSets, Jobs and CronJobs are left out: a budget guards
// replicated pods a drain evicts and reschedules.
func (r *Recorder) template(obj map[string]any, ref inventory.ObjectRef, group, kind string) {
	if !r.manifests {
		return
	}
	t := podTemplate{kind: ref.Kind, namespace: ref.Namespace, name: ref.Name, file: ref.File, line: ref.Line}
	switch {
	case kind == "Pod" && group == "":
		t.labels, t.replicas = packLabels(at(obj, "metadata", "labels")), 1
	case kind == "ReplicationController" && group == "", kind == "StatefulSet" && group == "apps",
		(kind == "Deployment" || kind == "ReplicaSet") && (group == "apps" || group == "extensions"):
		t.labels, t.replicas = packLabels(at(obj, "spec", "template", "metadata", "labels")), count(at(obj, "spec", "replicas"), 1)
	default:
		return
	}
	if len(r.templates) == 0 {
		r.templates = [][]podTemplate{nil}
	}
	last := len(r.templates) - 1
	r.templates[last] = append(r.templates[last], t)
}

// budgetSection joins each listed budget, in files mode, with the pod templates of its
// namespace that its selector matches.
func (r *Recorder) budgetSection() ([]inventory.DisruptionBudget, int) {
	seen, omitted := r.budgets.section(budgetOrder)
	out := make([]inventory.DisruptionBudget, 0, len(seen))
	type joined struct {
		*podTemplate
		labels labels.Labels // boxed once, not once per budget
	}
	byNamespace := map[string][]joined{}
	if r.manifests {
		budgeted := map[string]bool{}
		for _, s := range seen {
			budgeted[s.budget.Object.Namespace] = true
		}
		for _, chunk := range r.templates {
			for i := range chunk {
				if ns := chunk[i].namespace; budgeted[ns] {
					byNamespace[ns] = append(byNamespace[ns], joined{&chunk[i], packedLabels(chunk[i].labels)})
				}
			}
		}
	}
	for _, s := range seen {
		b := s.budget
		if r.manifests {
			var matched []inventory.WorkloadReplicas
			for _, t := range byNamespace[b.Object.Namespace] {
				if s.selector.matches(t.labels) {
					matched = append(matched, inventory.WorkloadReplicas{Object: t.ref(), Replicas: t.replicas})
				}
			}
			slices.SortFunc(matched, func(a, b inventory.WorkloadReplicas) int {
				return cmp.Or(refOrder(a.Object, b.Object), cmp.Compare(a.Replicas, b.Replicas))
			})
			if len(matched) > inventory.MaxPreflightNames {
				b.WorkloadsOmitted = len(matched) - inventory.MaxPreflightNames
				matched = matched[:inventory.MaxPreflightNames]
			}
			b.Workloads = matched
		}
		out = append(out, b)
	}
	if len(out) == 0 {
		return nil, omitted
	}
	return out, omitted
}
