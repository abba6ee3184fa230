package inventory

import (
	"cmp"
	"slices"
)

// overlayPreflight answers the cluster's pre-flight section with the manifests' applied, as
// Overlay treats the other sections: an object the manifests hold (a PodDisruptionBudget, a
// webhook configuration, an APIService, a CRD, a workload or pod, a component's pod, DaemonSet
// or ConfigMap) is judged as they write it, its live entry leaving the section; the others
// stay, and node state stays the cluster's. A manifest's entry has no live status (a budget's
// disruptions allowed, an APIService's Available condition) since it is not applied yet; the
// services it calls are given the endpoints the cluster counted for them, which still back
// them once it is. A live placement whose workload the manifests rewrite without one cannot
// be told from one they leave alone (manifests list placements only) and stays: the overlay
// may look worse than the cluster will be, never better. Neither argument is changed.
func overlayPreflight(cluster, manifests *Preflight) *Preflight {
	if manifests == nil {
		return cluster
	}
	if cluster == nil {
		cluster = &Preflight{}
	}
	out := *cluster
	ids := func(refs ...ObjectRef) map[objectID]bool {
		m := map[objectID]bool{}
		for _, r := range refs {
			m[objectID{r.Kind, r.Namespace, r.Name}] = true
		}
		return m
	}
	endpoints := serviceEndpoints(cluster)

	budgets := ids(mapRefs(manifests.DisruptionBudgets, func(b DisruptionBudget) ObjectRef { return b.Object })...)
	out.DisruptionBudgets, out.DisruptionBudgetsOmitted = overlayList(cluster.DisruptionBudgets, manifests.DisruptionBudgets,
		func(b DisruptionBudget) bool {
			return budgets[objectID{b.Object.Kind, b.Object.Namespace, b.Object.Name}]
		},
		func(a, b DisruptionBudget) int { return refCompare(a.Object, b.Object) },
		cluster.DisruptionBudgetsOmitted+manifests.DisruptionBudgetsOmitted)

	configs := ids(mapRefs(manifests.Webhooks, func(w Webhook) ObjectRef { return w.Configuration })...)
	written := slices.Clone(manifests.Webhooks)
	for i := range written {
		written[i].Service = endpoints.of(written[i].Service)
	}
	out.Webhooks, out.WebhooksOmitted = overlayList(cluster.Webhooks, written,
		func(w Webhook) bool {
			return configs[objectID{w.Configuration.Kind, w.Configuration.Namespace, w.Configuration.Name}]
		},
		func(a, b Webhook) int { return refCompare(a.Configuration, b.Configuration) }, // a configuration's in its order
		cluster.WebhooksOmitted+manifests.WebhooksOmitted)

	services := ids(mapRefs(manifests.APIServices, func(a APIService) ObjectRef { return a.Object })...)
	writtenServices := slices.Clone(manifests.APIServices)
	for i := range writtenServices {
		writtenServices[i].Service = endpoints.of(writtenServices[i].Service)
	}
	out.APIServices, out.APIServicesOmitted = overlayList(cluster.APIServices, writtenServices,
		func(a APIService) bool { return services[objectID{a.Object.Kind, a.Object.Namespace, a.Object.Name}] },
		func(a, b APIService) int { return refCompare(a.Object, b.Object) },
		cluster.APIServicesOmitted+manifests.APIServicesOmitted)

	crds := ids(mapRefs(manifests.Conversions, func(c Conversion) ObjectRef { return c.CRD })...)
	writtenConversions := slices.Clone(manifests.Conversions)
	for i := range writtenConversions {
		writtenConversions[i].Service = endpoints.of(writtenConversions[i].Service)
	}
	out.Conversions, out.ConversionsOmitted = overlayList(cluster.Conversions, writtenConversions,
		func(c Conversion) bool { return crds[objectID{c.CRD.Kind, c.CRD.Namespace, c.CRD.Name}] },
		func(a, b Conversion) int { return refCompare(a.CRD, b.CRD) },
		cluster.ConversionsOmitted+manifests.ConversionsOmitted)

	placed := ids(mapRefs(manifests.Placements, func(p Placement) ObjectRef { return p.Object })...)
	out.Placements, out.PlacementsOmitted = overlayList(cluster.Placements, manifests.Placements,
		func(p Placement) bool { return placed[objectID{p.Object.Kind, p.Object.Namespace, p.Object.Name}] },
		func(a, b Placement) int { return cmp.Or(refCompare(a.Object, b.Object), cmp.Compare(a.Rule, b.Rule)) },
		cluster.PlacementsOmitted+manifests.PlacementsOmitted)

	components := ids(mapRefs(manifests.Components, func(c Component) ObjectRef { return c.Object })...)
	out.Components, out.ComponentsOmitted = overlayList(cluster.Components, manifests.Components,
		func(c Component) bool { return components[objectID{c.Object.Kind, c.Object.Namespace, c.Object.Name}] },
		func(a, b Component) int {
			return cmp.Or(cmp.Compare(a.Component, b.Component), cmp.Compare(a.Source, b.Source), refCompare(a.Object, b.Object))
		},
		cluster.ComponentsOmitted+manifests.ComponentsOmitted)

	out.Drain = overlayDrain(cluster.Drain, manifests.Drain)
	return &out
}

// overlayList answers the cluster's items the manifests do not rewrite and the manifests'
// items, sorted (items order ties keep their order), within MaxPreflightItems; omitted adds
// what each side left out already.
func overlayList[T any](cluster, manifests []T, rewritten func(T) bool, order func(a, b T) int, omitted int) ([]T, int) {
	var out []T
	for _, c := range cluster {
		if !rewritten(c) {
			out = append(out, c)
		}
	}
	out = append(out, manifests...)
	slices.SortStableFunc(out, order)
	if len(out) > MaxPreflightItems {
		omitted += len(out) - MaxPreflightItems
		out = out[:MaxPreflightItems]
	}
	return out, omitted
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
