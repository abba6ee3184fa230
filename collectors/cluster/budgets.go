package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upgradescope/upgradescope/collectors/preflight"
	"github.com/upgradescope/upgradescope/inventory"
)

// budgets are the PodDisruptionBudgets, listed before the pod pass so that the pass can name
// the pods each selects, as the disruption controller does (getPodsForPdb): the pods of the
// budget's namespace its selector matches (preflight.BudgetSelectorOf).
type budgets struct {
	byNamespace map[string][]*budget
	byKey       map[string]*budget
}

type budget struct {
	selector preflight.BudgetSelector
	// selects is the selector as written (and the version read), to tell whether a cached
	// pod pass matched the same.
	selects string
	status  *inventory.BudgetStatus
	pods    selectedPods
}

// selectedPods counts the pods a budget selects and keeps the first
// inventory.MaxPreflightNames of their names by order while matching: past twice that the
// names are sorted and cut, so N budgets selecting every pod of a namespace of P pods hold
// at most 2×MaxPreflightNames names each, not P.
type selectedPods struct {
	count int
	names []string
}

func (s *selectedPods) add(name string) {
	s.count++
	s.names = append(s.names, name)
	if len(s.names) > 2*inventory.MaxPreflightNames {
		s.cut()
	}
}

func (s *selectedPods) cut() {
	slices.Sort(s.names)
	if len(s.names) > inventory.MaxPreflightNames {
		clear(s.names[inventory.MaxPreflightNames:])
		s.names = s.names[:inventory.MaxPreflightNames]
	}
}

func (s selectedPods) clone() selectedPods {
	return selectedPods{count: s.count, names: slices.Clone(s.names)}
}

// list is the names sorted, the first inventory.MaxPreflightNames, and how many were left out.
func (s *selectedPods) list() ([]string, int) {
	s.cut()
	if len(s.names) == 0 {
		return nil, s.count
	}
	return slices.Clone(s.names), s.count - len(s.names)
}

// cachedBudget is what a pod pass found for one budget, kept for the collections that reuse
// the pass.
type cachedBudget struct {
	selects string
	pods    selectedPods
}

func newBudgets() *budgets {
	return &budgets{byNamespace: map[string][]*budget{}, byKey: map[string]*budget{}}
}

// disruptionBudgets lists every PodDisruptionBudget (policy/v1; policy/v1beta1 on a cluster
// older than 1.21), observes its spec and keeps its status and selector for the pod pass.
func (p *preflightPass) disruptionBudgets(ctx context.Context) inventory.Capability {
	err := p.listServed(ctx, "policy", "poddisruptionbudgets", "", []string{"v1", "v1beta1"}, metav1.ListOptions{}, func(_ string, page *unstructured.UnstructuredList) {
		for i := range page.Items {
			p.budget(&page.Items[i])
		}
	})
	if errors.Is(err, errNotServed) {
		return inventory.Capability{Available: true, Reason: "the cluster serves no policy/v1 or v1beta1 PodDisruptionBudgets: there are none"}
	}
	if err != nil {
		return access{verb: "list", group: "policy", resource: "poddisruptionbudgets"}.unavailable(err)
	}
	return inventory.Capability{Available: true}
}

// budget keeps a listed budget for the pod pass and observes it.
func (p *preflightPass) budget(obj *unstructured.Unstructured) {
	if p.budgets.add(obj).status == nil {
		// A status the controller wrote for an older spec is none: the recorder keeps the
		// budgets that may block a drain first, and reads it so.
		delete(obj.Object, "status")
	}
	p.observe(obj, "PodDisruptionBudget")
}

// add keeps a budget's selector and, when the disruption controller has seen its current
// spec (status.observedGeneration at its generation), its status.
func (b *budgets) add(obj *unstructured.Unstructured) *budget {
	selector, _, _ := unstructured.NestedFieldNoCopy(obj.Object, "spec", "selector")
	written, _ := json.Marshal(selector)
	bud := &budget{selector: preflight.BudgetSelectorOf(obj.Object), selects: obj.GetAPIVersion() + " " + string(written)}
	if observed, ok, _ := unstructured.NestedInt64(obj.Object, "status", "observedGeneration"); ok && observed > 0 && observed >= obj.GetGeneration() {
		field := func(name string) int {
			n, _, _ := unstructured.NestedInt64(obj.Object, "status", name)
			return int(n)
		}
		bud.status = &inventory.BudgetStatus{
			DisruptionsAllowed: field("disruptionsAllowed"), CurrentHealthy: field("currentHealthy"),
			DesiredHealthy: field("desiredHealthy"), ExpectedPods: field("expectedPods"),
		}
	}
	b.byNamespace[obj.GetNamespace()] = append(b.byNamespace[obj.GetNamespace()], bud)
	b.byKey[obj.GetNamespace()+"/"+obj.GetName()] = bud
	return bud
}

// match names pod in every budget of its namespace that selects it. A pod that has finished
// (Succeeded or Failed) is left out: an eviction of it does not ask the budget.
func (b *budgets) match(pod *corev1.Pod) {
	in := b.byNamespace[pod.Namespace]
	if len(in) == 0 || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed {
		return
	}
	for _, bud := range in {
		if bud.selector.Matches(pod.Labels) {
			bud.pods.add(pod.Name)
		}
	}
}

// snapshot is what this pod pass found, for the collections that reuse it.
func (b *budgets) snapshot() map[string]cachedBudget {
	out := make(map[string]cachedBudget, len(b.byKey))
	for key, bud := range b.byKey {
		out[key] = cachedBudget{selects: bud.selects, pods: bud.pods.clone()}
	}
	return out
}

// reuse takes the pods a cached pass found for each budget that selects as it did then; a
// budget new since, or whose selector changed, names no pods until the next pass.
func (b *budgets) reuse(cached map[string]cachedBudget) {
	for key, bud := range b.byKey {
		if c, ok := cached[key]; ok && c.selects == bud.selects {
			bud.pods = c.pods.clone()
		}
	}
}

// fill writes each recorded budget's status and pods (sorted, the first MaxPreflightNames).
func (b *budgets) fill(sec *inventory.Preflight, podsKnown bool) {
	for i := range sec.DisruptionBudgets {
		d := &sec.DisruptionBudgets[i]
		bud := b.byKey[d.Object.Namespace+"/"+d.Object.Name]
		if bud == nil {
			continue
		}
		d.Status = bud.status
		if !podsKnown {
			continue
		}
		d.Pods, d.PodsOmitted = bud.pods.list()
	}
}

// cutThatMayBlock counts the budgets not listed that may block a drain: no status (the
// disruption controller has not judged their spec) or no disruption allowed.
func (b *budgets) cutThatMayBlock(listed []inventory.DisruptionBudget) int {
	kept := make(map[string]bool, len(listed))
	for _, d := range listed {
		kept[d.Object.Namespace+"/"+d.Object.Name] = true
	}
	n := 0
	for key, bud := range b.byKey {
		if !kept[key] && (bud.status == nil || bud.status.DisruptionsAllowed == 0) {
			n++
		}
	}
	return n
}
