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
	o := &preflightOverlay{cluster: cluster, manifests: manifests, endpoints: serviceEndpoints(cluster)}
	out := *cluster
	out.DisruptionBudgets, out.DisruptionBudgetsOmitted = o.budgets()
	out.Webhooks, out.WebhooksOmitted = o.webhooks()
	out.APIServices, out.APIServicesOmitted = o.apiServices()
	out.Conversions, out.ConversionsOmitted = o.conversions()
	out.Placements, out.PlacementsOmitted = o.placements()
	out.Components, out.ComponentsOmitted = o.components()
	out.Drain = overlayDrain(cluster.Drain, manifests.Drain)
	return &out, o.cuts
}

// preflightOverlay merges one list of the section at a time, gathering what it cut.
type preflightOverlay struct {
	cluster, manifests *Preflight
	endpoints          serviceBackends
	cuts               []preflightCut
}

func idOf(r ObjectRef) objectID { return objectID{r.Kind, r.Namespace, r.Name} }

// idsOf are the objects items name.
func idsOf[T any](items []T, ref func(T) ObjectRef) map[objectID]bool {
	m := make(map[objectID]bool, len(items))
	for _, it := range items {
		m[idOf(ref(it))] = true
	}
	return m
}

func (o *preflightOverlay) budgets() ([]DisruptionBudget, int) {
	liveBudgets := map[objectID]DisruptionBudget{}
	for _, b := range o.cluster.DisruptionBudgets {
		liveBudgets[idOf(b.Object)] = b
	}
	written := slices.Clone(o.manifests.DisruptionBudgets)
	for i := range written {
		if live, ok := liveBudgets[idOf(written[i].Object)]; ok && written[i].Status == nil {
			b := &written[i]
			b.Status, b.Pods, b.PodsOmitted = live.Status, live.Pods, live.PodsOmitted
		}
	}
	rewritten := idsOf(written, func(b DisruptionBudget) ObjectRef { return b.Object })
	out, omitted, cut, blocking := overlayList(o.cluster.DisruptionBudgets, written,
		func(b DisruptionBudget) bool { return rewritten[idOf(b.Object)] },
		func(a, b DisruptionBudget) int { return refCompare(a.Object, b.Object) },
		o.cluster.DisruptionBudgetsOmitted+o.manifests.DisruptionBudgetsOmitted,
		DisruptionBudget.MayBlock)
	if cut > 0 {
		o.cuts = append(o.cuts, preflightCut{CapDisruptionBudgets, "PodDisruptionBudget(s)", cut, blocking})
	}
	return out, omitted
}

func (o *preflightOverlay) webhooks() ([]Webhook, int) {
	coversLive := map[[2]any]bool{}
	for _, w := range o.cluster.Webhooks {
		if w.CoversKubeSystem {
			coversLive[[2]any{idOf(w.Configuration), w.Name}] = true
		}
	}
	written := slices.Clone(o.manifests.Webhooks)
	for i := range written {
		w := &written[i]
		w.Service = o.endpoints.of(w.Service)
		w.CoversKubeSystem = w.CoversKubeSystem || coversLive[[2]any{idOf(w.Configuration), w.Name}]
	}
	rewritten := idsOf(written, func(w Webhook) ObjectRef { return w.Configuration })
	out, omitted, cut, _ := overlayList(o.cluster.Webhooks, written,
		func(w Webhook) bool { return rewritten[idOf(w.Configuration)] },
		func(a, b Webhook) int { return refCompare(a.Configuration, b.Configuration) }, // a configuration's in its order
		o.cluster.WebhooksOmitted+o.manifests.WebhooksOmitted, nil)
	o.cuts = appendCut(o.cuts, CapWebhooks, "webhook(s)", cut)
	return out, omitted
}

func (o *preflightOverlay) apiServices() ([]APIService, int) {
	liveServices := map[objectID]APIService{}
	for _, a := range o.cluster.APIServices {
		liveServices[idOf(a.Object)] = a
	}
	written := slices.Clone(o.manifests.APIServices)
	for i := range written {
		a := &written[i]
		a.Service = o.endpoints.of(a.Service)
		if live, ok := liveServices[idOf(a.Object)]; ok && a.Available == "" {
			a.Available, a.Reason, a.Message = live.Available, live.Reason, live.Message
		}
	}
	rewritten := idsOf(written, func(a APIService) ObjectRef { return a.Object })
	out, omitted, cut, _ := overlayList(o.cluster.APIServices, written,
		func(a APIService) bool { return rewritten[idOf(a.Object)] },
		func(a, b APIService) int { return refCompare(a.Object, b.Object) },
		o.cluster.APIServicesOmitted+o.manifests.APIServicesOmitted, nil)
	o.cuts = appendCut(o.cuts, CapAPIServices, "APIService(s)", cut)
	return out, omitted
}

func (o *preflightOverlay) conversions() ([]Conversion, int) {
	written := slices.Clone(o.manifests.Conversions)
	for i := range written {
		written[i].Service = o.endpoints.of(written[i].Service)
	}
	rewritten := idsOf(written, func(c Conversion) ObjectRef { return c.CRD })
	out, omitted, cut, _ := overlayList(o.cluster.Conversions, written,
		func(c Conversion) bool { return rewritten[idOf(c.CRD)] },
		func(a, b Conversion) int { return refCompare(a.CRD, b.CRD) },
		o.cluster.ConversionsOmitted+o.manifests.ConversionsOmitted, nil)
	o.cuts = appendCut(o.cuts, CapCRDs, "CRD conversion webhook(s)", cut)
	return out, omitted
}

func (o *preflightOverlay) placements() ([]Placement, int) {
	rewritten := idsOf(o.manifests.Placements, func(p Placement) ObjectRef { return p.Object })
	out, omitted, cut, _ := overlayList(o.cluster.Placements, o.manifests.Placements,
		func(p Placement) bool { return rewritten[idOf(p.Object)] },
		func(a, b Placement) int { return cmp.Or(refCompare(a.Object, b.Object), cmp.Compare(a.Rule, b.Rule)) },
		o.cluster.PlacementsOmitted+o.manifests.PlacementsOmitted, nil)
	o.cuts = appendCut(o.cuts, CapPods, "placement(s)", cut)
	return out, omitted
}

func (o *preflightOverlay) components() ([]Component, int) {
	liveNodes := map[objectID]Component{}
	for _, c := range o.cluster.Components {
		if _, seen := liveNodes[idOf(c.Object)]; !seen && len(c.Nodes) > 0 {
			liveNodes[idOf(c.Object)] = c
		}
	}
	written := slices.Clone(o.manifests.Components)
	for i := range written {
		c := &written[i]
		if live, ok := liveNodes[idOf(c.Object)]; ok && len(c.Nodes) == 0 {
			c.Nodes, c.NodesOmitted = live.Nodes, live.NodesOmitted
		}
	}
	rewritten := idsOf(written, func(c Component) ObjectRef { return c.Object })
	out, omitted, cut, _ := overlayList(o.cluster.Components, written,
		func(c Component) bool { return rewritten[idOf(c.Object)] },
		func(a, b Component) int {
			return cmp.Or(cmp.Compare(a.Component, b.Component), cmp.Compare(a.Source, b.Source), refCompare(a.Object, b.Object))
		},
		o.cluster.ComponentsOmitted+o.manifests.ComponentsOmitted, nil)
	o.cuts = appendCut(o.cuts, CapComponentFlags, "component configuration(s)", cut)
	return out, omitted
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
		written := idsOf(m.Objects, func(o ObjectRef) ObjectRef { return o })
		for _, o := range c.Objects {
			switch {
			case written[idOf(o)]:
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

// refCompare orders references by namespace, name, kind, file and line.
func refCompare(a, b ObjectRef) int {
	return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name), cmp.Compare(a.Kind, b.Kind),
		cmp.Compare(a.File, b.File), cmp.Compare(a.Line, b.Line))
}

// preflightCapabilities are the pre-flight capabilities manifests assess too.
var preflightCapabilities = []string{CapDisruptionBudgets, CapPods, CapWebhooks, CapComponentFlags, CapKubeletConfig}
