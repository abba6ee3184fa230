package preflight

import (
	"cmp"
	"slices"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/upgradescope/upgradescope/inventory"
)

// hostnameKey is the node label a per-node placement rule spreads over.
const hostnameKey = "kubernetes.io/hostname"

// Placement rules.
const (
	ruleAntiAffinity   = "anti-affinity"
	ruleTopologySpread = "topology-spread"
)

func placementOrder(a, b inventory.Placement) int {
	return cmp.Or(refOrder(a.Object, b.Object), cmp.Compare(a.Rule, b.Rule), cmp.Compare(a.Replicas, b.Replicas))
}

// pod records what a Pod shows: its drain filters, in files mode its labels for budgets,
// and the flags of a control-plane component or kube-proxy it runs.
func (r *Recorder) pod(obj map[string]any, ref inventory.ObjectRef, src source) {
	r.drainPod(obj, ref)
	r.template(obj, ref, "", "Pod")
	r.podComponents(obj, ref, src)
}

// workload records what a workload shows: its pod template for budgets and drains (files
// mode), the placement rules of Deployments, StatefulSets and ReplicaSets, and kube-proxy's
// flags on its DaemonSet.
func (r *Recorder) workload(obj map[string]any, ref inventory.ObjectRef, group string, src source) {
	kind := str(obj, "kind")
	r.template(obj, ref, group, kind)
	r.drainTemplate(obj, ref, group, kind)
	switch kind {
	case "Deployment", "StatefulSet", "ReplicaSet":
		if group != "" {
			r.placement(obj, ref)
		}
	case "DaemonSet":
		r.daemonSetComponents(obj, ref, src)
	}
}

// placement records the rules that give each of a workload's pods a node of its own: a
// required pod anti-affinity over kubernetes.io/hostname, or a DoNotSchedule topology spread
// with maxSkew 1 over it, either matching the workload's own pods.
func (r *Recorder) placement(obj map[string]any, ref inventory.ObjectRef) {
	template := mapAt(obj, "spec", "template")
	spec := mapAt(template, "spec")
	terms := listAt(spec, "affinity", "podAntiAffinity", "requiredDuringSchedulingIgnoredDuringExecution")
	spread := listAt(spec, "topologySpreadConstraints")
	if len(terms) == 0 && len(spread) == 0 {
		return // most workloads
	}
	own := labels.Set(stringMap(at(template, "metadata", "labels")))
	replicas := count(at(obj, "spec", "replicas"), 1)
	var rules []string
	for _, term := range terms {
		if str(term, "topologyKey") == hostnameKey && selectsOwnPods(term, own, ref.Namespace) {
			rules = append(rules, ruleAntiAffinity)
			break
		}
	}
	for _, c := range spread {
		if skew, ok := integer(at(c, "maxSkew")); ok && skew == 1 &&
			str(c, "whenUnsatisfiable") == "DoNotSchedule" && str(c, "topologyKey") == hostnameKey &&
			selectorOf(at(c, "labelSelector")).Matches(own) {
			rules = append(rules, ruleTopologySpread)
			break
		}
	}
	for _, rule := range rules {
		r.placements.add(inventory.Placement{Object: ref, Replicas: replicas, Rule: rule}, placementOrder)
	}
}

// selectsOwnPods says whether a pod affinity term counts the workload's own pods: its
// labelSelector matches their labels (an absent one matches none), in their namespace (no
// namespaces and no namespaceSelector, their namespace listed, or an empty
// namespaceSelector), and no mismatchLabelKeys key they carry (which selects other values
// of it). matchLabelKeys only narrows the selector to values the pods carry themselves.
func selectsOwnPods(term any, own labels.Set, namespace string) bool {
	if !selectorOf(at(term, "labelSelector")).Matches(own) {
		return false
	}
	for _, k := range strs(term, "mismatchLabelKeys") {
		if own.Has(k) {
			return false
		}
	}
	nsSel := at(term, "namespaceSelector")
	switch namespaces := strs(term, "namespaces"); {
	case nsSel != nil && emptySelector(nsSel):
		return true
	case slices.Contains(namespaces, namespace):
		return true
	default:
		return len(namespaces) == 0 && nsSel == nil
	}
}
