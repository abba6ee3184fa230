package inventory

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// overlayPreflight answers the cluster's pre-flight section with the manifests' applied, as
// Overlay treats the other sections: an object the manifests hold (a PodDisruptionBudget, a
// webhook configuration, an APIService, a CRD, a workload or pod, a component's pod, DaemonSet
// or ConfigMap) is judged as they write it, its live entry leaving the section; the others
// stay, and node state stays the cluster's. What only the cluster shows of an object is kept
// on the manifests' copy of it, since applying the manifest does not change it at once: a
// budget's status and pods, an APIService's Available condition, a webhook's coverage of
// kube-system (by its live labels, which a manifest's copy is judged without), a component's
// nodes, and the endpoints the cluster counted for the services a copy calls. A manifest's
// object the cluster does not have has none of it. A live placement whose workload the
// manifests rewrite without one cannot be told from one they leave alone (manifests list
// placements only) and stays: the overlay may look worse than the cluster will be, never
// better. Each list is kept within MaxPreflightItems (budgets that may block a drain first);
// what it cut is answered, for its capability. Neither argument is changed.
func overlayPreflight(cluster, manifests *Preflight) (*Preflight, []preflightCut) {
	if manifests == nil {
		return cluster, nil
	}
	if cluster == nil {
		cluster = &Preflight{}
	}
	out := *cluster
	var cuts []preflightCut
	ids := func(refs ...ObjectRef) map[objectID]bool {
		m := map[objectID]bool{}
		for _, r := range refs {
			m[objectID{r.Kind, r.Namespace, r.Name}] = true
		}
		return m
	}
	idOf := func(r ObjectRef) objectID { return objectID{r.Kind, r.Namespace, r.Name} }
	endpoints := serviceEndpoints(cluster)

	liveBudgets := map[objectID]DisruptionBudget{}
	for _, b := range cluster.DisruptionBudgets {
		liveBudgets[idOf(b.Object)] = b
	}
	writtenBudgets := slices.Clone(manifests.DisruptionBudgets)
	for i := range writtenBudgets {
		if live, ok := liveBudgets[idOf(writtenBudgets[i].Object)]; ok && writtenBudgets[i].Status == nil {
			b := &writtenBudgets[i]
			b.Status, b.Pods, b.PodsOmitted = live.Status, live.Pods, live.PodsOmitted
		}
	}
	budgets := ids(mapRefs(manifests.DisruptionBudgets, func(b DisruptionBudget) ObjectRef { return b.Object })...)
	var cut, blocking int
	out.DisruptionBudgets, out.DisruptionBudgetsOmitted, cut, blocking = overlayList(cluster.DisruptionBudgets, writtenBudgets,
		func(b DisruptionBudget) bool { return budgets[idOf(b.Object)] },
		func(a, b DisruptionBudget) int { return refCompare(a.Object, b.Object) },
		cluster.DisruptionBudgetsOmitted+manifests.DisruptionBudgetsOmitted,
		DisruptionBudget.MayBlock)
	if cut > 0 {
		cuts = append(cuts, preflightCut{CapDisruptionBudgets, "PodDisruptionBudget(s)", cut, blocking})
	}

	liveHooks := map[[2]any]bool{}
	for _, w := range cluster.Webhooks {
		if w.CoversKubeSystem {
			liveHooks[[2]any{idOf(w.Configuration), w.Name}] = true
		}
	}
	configs := ids(mapRefs(manifests.Webhooks, func(w Webhook) ObjectRef { return w.Configuration })...)
	written := slices.Clone(manifests.Webhooks)
	for i := range written {
		written[i].Service = endpoints.of(written[i].Service)
		written[i].CoversKubeSystem = written[i].CoversKubeSystem || liveHooks[[2]any{idOf(written[i].Configuration), written[i].Name}]
	}
	out.Webhooks, out.WebhooksOmitted, cut, _ = overlayList(cluster.Webhooks, written,
		func(w Webhook) bool { return configs[idOf(w.Configuration)] },
		func(a, b Webhook) int { return refCompare(a.Configuration, b.Configuration) }, // a configuration's in its order
		cluster.WebhooksOmitted+manifests.WebhooksOmitted, nil)
	cuts = appendCut(cuts, CapWebhooks, "webhook(s)", cut)

	liveServices := map[objectID]APIService{}
	for _, a := range cluster.APIServices {
		liveServices[idOf(a.Object)] = a
	}
	services := ids(mapRefs(manifests.APIServices, func(a APIService) ObjectRef { return a.Object })...)
	writtenServices := slices.Clone(manifests.APIServices)
	for i := range writtenServices {
		a := &writtenServices[i]
		a.Service = endpoints.of(a.Service)
		if live, ok := liveServices[idOf(a.Object)]; ok && a.Available == "" {
			a.Available, a.Reason, a.Message = live.Available, live.Reason, live.Message
		}
	}
	out.APIServices, out.APIServicesOmitted, cut, _ = overlayList(cluster.APIServices, writtenServices,
		func(a APIService) bool { return services[idOf(a.Object)] },
		func(a, b APIService) int { return refCompare(a.Object, b.Object) },
		cluster.APIServicesOmitted+manifests.APIServicesOmitted, nil)
	cuts = appendCut(cuts, CapAPIServices, "APIService(s)", cut)

	crds := ids(mapRefs(manifests.Conversions, func(c Conversion) ObjectRef { return c.CRD })...)
	writtenConversions := slices.Clone(manifests.Conversions)
	for i := range writtenConversions {
		writtenConversions[i].Service = endpoints.of(writtenConversions[i].Service)
	}
	out.Conversions, out.ConversionsOmitted, cut, _ = overlayList(cluster.Conversions, writtenConversions,
		func(c Conversion) bool { return crds[idOf(c.CRD)] },
		func(a, b Conversion) int { return refCompare(a.CRD, b.CRD) },
		cluster.ConversionsOmitted+manifests.ConversionsOmitted, nil)
	cuts = appendCut(cuts, CapCRDs, "CRD conversion webhook(s)", cut)

	placed := ids(mapRefs(manifests.Placements, func(p Placement) ObjectRef { return p.Object })...)
	out.Placements, out.PlacementsOmitted, cut, _ = overlayList(cluster.Placements, manifests.Placements,
		func(p Placement) bool { return placed[idOf(p.Object)] },
		func(a, b Placement) int { return cmp.Or(refCompare(a.Object, b.Object), cmp.Compare(a.Rule, b.Rule)) },
		cluster.PlacementsOmitted+manifests.PlacementsOmitted, nil)
	cuts = appendCut(cuts, CapPods, "placement(s)", cut)

	liveNodes := map[objectID]Component{}
	for _, c := range cluster.Components {
		if _, seen := liveNodes[idOf(c.Object)]; !seen && len(c.Nodes) > 0 {
			liveNodes[idOf(c.Object)] = c
		}
	}
	writtenComponents := slices.Clone(manifests.Components)
	for i := range writtenComponents {
		c := &writtenComponents[i]
		if live, ok := liveNodes[idOf(c.Object)]; ok && len(c.Nodes) == 0 {
			c.Nodes, c.NodesOmitted = live.Nodes, live.NodesOmitted
		}
	}
	components := ids(mapRefs(manifests.Components, func(c Component) ObjectRef { return c.Object })...)
	out.Components, out.ComponentsOmitted, cut, _ = overlayList(cluster.Components, writtenComponents,
		func(c Component) bool { return components[idOf(c.Object)] },
		func(a, b Component) int {
			return cmp.Or(cmp.Compare(a.Component, b.Component), cmp.Compare(a.Source, b.Source), refCompare(a.Object, b.Object))
		},
		cluster.ComponentsOmitted+manifests.ComponentsOmitted, nil)
	cuts = appendCut(cuts, CapComponentFlags, "component configuration(s)", cut)

	out.Drain = overlayDrain(cluster.Drain, manifests.Drain)
	return &out, cuts
}

// preflightCut is a list the overlay cut at MaxPreflightItems: how many of what, and for
// budgets how many of those cut may block a drain.
type preflightCut struct {
	capability, what string
	cut, blocking    int
}

func appendCut(cuts []preflightCut, capability, what string, cut int) []preflightCut {
	if cut == 0 {
		return cuts
	}
	return append(cuts, preflightCut{capability, what, cut, cut})
}

// markCuts makes the capability of each list the overlay cut partial, naming how many were
// left out; budgets only when one of those cut may block a drain, and otherwise the reason
// says they all allowed a disruption. A capability not reported, or not available, is a gap
// already and stays as it is.
func markCuts(caps map[string]Capability, cuts []preflightCut) {
	for _, cut := range cuts {
		c, ok := caps[cut.capability]
		if !ok || !c.Available {
			continue
		}
		reason := fmt.Sprintf("%d %s past the %d an inventory lists", cut.cut, cut.what, MaxPreflightItems)
		switch {
		case cut.capability == CapDisruptionBudgets && cut.blocking == 0:
			reason += ", all allowing a disruption"
		case cut.capability == CapDisruptionBudgets:
			reason = fmt.Sprintf("%d %s, %d of them that may block a drain, past the %d an inventory lists", cut.cut, cut.what, cut.blocking, MaxPreflightItems)
			c.Partial = true
		default:
			c.Partial = true
		}
		c.Reason = strings.TrimPrefix(c.Reason+"; "+reason, "; ")
		caps[cut.capability] = c
	}
}

// overlayList answers the cluster's items the manifests do not rewrite and the manifests'
// items, sorted (items order ties keep their order), within MaxPreflightItems; omitted adds
// what each side left out already. Past the bound the items first says first of (given
// whether the item is the cluster's) are kept before the others; cut counts what this merge
// left out, and cutFirst those of them first said first of.
func overlayList[T any](cluster, manifests []T, rewritten func(T) bool, order func(a, b T) int, omitted int,
	first func(item T, live bool) bool) (out []T, _ int, cut, cutFirst int) {
	type item struct {
		v     T
		first bool
	}
	var all []item
	for _, c := range cluster {
		if !rewritten(c) {
			all = append(all, item{c, first != nil && first(c, true)})
		}
	}
	for _, m := range manifests {
		all = append(all, item{m, first != nil && first(m, false)})
	}
	slices.SortStableFunc(all, func(a, b item) int {
		if a.first != b.first {
			if a.first {
				return -1
			}
			return 1
		}
		return order(a.v, b.v)
	})
	if len(all) > MaxPreflightItems {
		cut = len(all) - MaxPreflightItems
		for _, it := range all[MaxPreflightItems:] {
			if it.first {
				cutFirst++
			}
		}
		all = all[:MaxPreflightItems]
	}
	out = make([]T, len(all))
	for i, it := range all {
		out[i] = it.v
	}
	slices.SortStableFunc(out, order)
	return out, omitted + cut, cut, cutFirst
}

// overlayDrain adds the manifests' pods and pod templates to the cluster's pods: a bare Pod
// they write replaces the live one of its name; the manifests' objects are listed first.
func overlayDrain(cluster, manifests *DrainPods) *DrainPods {
	switch {
	case manifests == nil:
		return cluster
	case cluster == nil:
		return manifests
	}
	merge := func(c, m PodList) PodList {
		out := PodList{Count: m.Count + c.Count, Objects: slices.Clone(m.Objects), ObjectsOmitted: m.ObjectsOmitted + c.ObjectsOmitted}
		written := map[objectID]bool{}
		for _, o := range m.Objects {
			written[objectID{o.Kind, o.Namespace, o.Name}] = true
		}
		for _, o := range c.Objects {
			switch {
			case written[objectID{o.Kind, o.Namespace, o.Name}]:
				out.Count-- // the manifests' copy is counted
			case len(out.Objects) < MaxObjectRefs:
				out.Objects = append(out.Objects, o)
			default:
				out.ObjectsOmitted++
			}
		}
		return out
	}
	return &DrainPods{
		Examined:     cluster.Examined + manifests.Examined,
		Unreplicated: merge(cluster.Unreplicated, manifests.Unreplicated),
		LocalStorage: merge(cluster.LocalStorage, manifests.LocalStorage),
	}
}

// serviceBackends are the services the cluster's section found, with what backs them.
type serviceBackends map[[3]any]ServiceRef

func serviceEndpoints(p *Preflight) serviceBackends {
	out := serviceBackends{}
	add := func(s *ServiceRef) {
		if s != nil && (s.Found != nil || s.ReadyEndpoints != nil) {
			out[[3]any{s.Namespace, s.Name, s.Port}] = *s
		}
	}
	for _, w := range p.Webhooks {
		add(w.Service)
	}
	for _, a := range p.APIServices {
		add(a.Service)
	}
	for _, c := range p.Conversions {
		add(c.Service)
	}
	return out
}

// of is s with what backs the same service in the cluster, or s when the cluster found
// nothing of it.
func (b serviceBackends) of(s *ServiceRef) *ServiceRef {
	if s == nil {
		return nil
	}
	live, ok := b[[3]any{s.Namespace, s.Name, s.Port}]
	if !ok {
		return s
	}
	c := *s
	c.Found, c.ReadyEndpoints = live.Found, live.ReadyEndpoints
	return &c
}

func mapRefs[T any](items []T, ref func(T) ObjectRef) []ObjectRef {
	out := make([]ObjectRef, len(items))
	for i, it := range items {
		out[i] = ref(it)
	}
	return out
}

// refCompare orders references by namespace, name, kind, file and line.
func refCompare(a, b ObjectRef) int {
	return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name), cmp.Compare(a.Kind, b.Kind),
		cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line))
}

// preflightCapabilities are the pre-flight capabilities manifests assess too.
var preflightCapabilities = []string{CapDisruptionBudgets, CapPods, CapWebhooks, CapComponentFlags, CapKubeletConfig}
