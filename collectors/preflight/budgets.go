package preflight

import (
	"cmp"
	"slices"

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

// budgetSeen is a budget and, in files mode, the selector its workloads are joined by;
// mayBlock is DisruptionBudget.MayBlock.
type budgetSeen struct {
	budget   inventory.DisruptionBudget
	selector BudgetSelector
	mayBlock bool
}

// budgetOrder is the order in which budgets are kept past inventory.MaxPreflightItems: those
// that may block a drain first (inventory.DisruptionBudget.MayBlock), each by reference. The
// section lists the ones kept by reference.
func budgetOrder(a, b budgetSeen) int {
	if a.mayBlock != b.mayBlock {
		if a.mayBlock {
			return -1
		}
		return 1
	}
	return refOrder(a.budget.Object, b.budget.Object)
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
	r.budgets.add(budgetSeen{budget: b, selector: BudgetSelectorOf(obj), mayBlock: b.MayBlock(!r.manifests)}, budgetOrder)
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
// replicated pods a drain evicts and reschedules; so are Helm hooks (helmHook).
func (r *Recorder) template(obj map[string]any, ref inventory.ObjectRef, group, kind string) {
	if !r.manifests || helmHook(obj) {
		return
	}
	switch {
	case kind == "Pod" && group == "":
		r.templates.add(ref, at(obj, "metadata", "labels"), 1)
	case kind == "ReplicationController" && group == "", kind == "StatefulSet" && group == "apps",
		(kind == "Deployment" || kind == "ReplicaSet") && (group == "apps" || group == "extensions"):
		r.templates.add(ref, at(obj, "spec", "template", "metadata", "labels"), count(at(obj, "spec", "replicas"), 1))
	}
}

// autoscaledKey names a workload an autoscaler scales: its namespace as written, kind and name.
type autoscaledKey struct{ namespace, kind, name string }

// autoscaler records, in files mode, the workload a HorizontalPodAutoscaler (autoscaling v1,
// v2, v2beta1, v2beta2) or a KEDA ScaledObject (keda.sh/v1alpha1, which makes one) scales:
// spec.scaleTargetRef's kind and name, in the autoscaler's namespace. Its replicas are then
// the autoscaler's, not the ones the workload writes (inventory.WorkloadReplicas.Autoscaled).
// A ScaledObject's target kind defaults to Deployment.
//
//	https://kubernetes.io/docs/tasks/run-application/horizontal-pod-autoscale/
//	https://keda.sh/docs/latest/reference/scaledobject-spec/
func (r *Recorder) autoscaler(obj map[string]any, ref inventory.ObjectRef) {
	if !r.manifests {
		return
	}
	target := mapAt(obj, "spec", "scaleTargetRef")
	kind, name := str(target, "kind"), str(target, "name")
	if kind == "" && str(obj, "kind") == "ScaledObject" {
		kind = "Deployment"
	}
	if kind == "" || name == "" {
		return
	}
	r.autoscale(autoscaledKey{ref.Namespace, kind, name})
}

func (r *Recorder) autoscale(k autoscaledKey) {
	if r.autoscaled == nil {
		r.autoscaled = map[autoscaledKey]bool{}
	}
	r.autoscaled[k] = true
}

// budgetSection joins each listed budget, in files mode, with the pod templates of its
// namespace that its selector matches. The budgets kept (budgetOrder) are listed by
// reference.
func (r *Recorder) budgetSection() ([]inventory.DisruptionBudget, int) {
	seen, omitted := r.budgets.section(budgetOrder)
	slices.SortFunc(seen, func(a, b budgetSeen) int { return refOrder(a.budget.Object, b.budget.Object) })
	out := make([]inventory.DisruptionBudget, 0, len(seen))
	var byNamespace map[string][]template
	if r.manifests {
		budgeted := map[string]bool{}
		for _, s := range seen {
			budgeted[s.budget.Object.Namespace] = true
		}
		byNamespace = r.templates.inNamespaces(budgeted)
	}
	for _, s := range seen {
		b := s.budget
		if r.manifests {
			var matched []inventory.WorkloadReplicas
			for _, t := range byNamespace[b.Object.Namespace] {
				if s.selector.matches(t.labels) {
					matched = append(matched, inventory.WorkloadReplicas{Object: t.ref, Replicas: t.replicas,
						Autoscaled: r.autoscaled[autoscaledKey{t.ref.Namespace, t.ref.Kind, t.ref.Name}]})
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
