package cluster

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"

	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/kb/probe"
)

// Probes looks at every object of the kinds the set's probes name, listed whole (probes read
// spec fields) and paged at the version the cluster prefers, and records what each probe
// found in doc.Probes. It answers the number of objects examined.
//
// A kind the cluster does not serve (no CRD, an API gone) has no objects to look at, and its
// probes stay available. A kind whose list fails (forbidden, timed out) makes the probes
// looking at it unavailable, with the reason, and the other kinds are still listed; so does a
// kind whose group discovery could not read. The pod template probes look at each template
// once, at the object a user edits: an object a workload controls (a ReplicaSet's Pod, a
// Deployment's ReplicaSet, a CronJob's Job) is a copy of its template, and only the probes
// naming its kind look at it. An object served under two groups (Ingress under extensions
// and networking.k8s.io up to 1.21, the workloads under extensions and apps up to 1.15, Event
// under core and events.k8s.io) is observed once by each probe, and examined once. A nil or
// empty set records nothing, not even an empty section.
func (c *Collector) Probes(ctx context.Context, doc *inventory.Document, set *probe.Set) int {
	return c.probes(ctx, doc, set, false)
}

// podProbes are the observations of Pods at the last pod pass, reused in between as the
// add-on images are: on a large cluster the full pod list is most of a tick's bytes.
type podProbes struct {
	sets     probeSets
	obs      observers
	examined int
}

// probes is Probes, with the Pods' observations of the last pod pass when reusePods says the
// collection reuses that pass and they were made for this set.
func (c *Collector) probes(ctx context.Context, doc *inventory.Document, set *probe.Set, reusePods bool) int {
	if set.Len() == 0 {
		return 0
	}
	cached := c.podProbes
	if cached != nil && cached.sets.of != set {
		cached, c.podProbes = nil, nil
	}
	var sets probeSets
	if cached != nil {
		sets = cached.sets
	} else if split, err := splitProbes(set); err == nil {
		sets = split
	} else { // the set's probes compiled once already; never guess
		obs := observers{byKinds: []*probe.Observer{set.NewObserver()}, template: (*probe.Set)(nil).NewObserver()}
		obs.unavailableAll(set, "split the probes: "+err.Error())
		doc.Probes = obs.probes()
		return 0
	}
	obs := sets.newObservers()
	defer func() { doc.Probes = obs.probes() }()
	servedBy, discoveryErr := c.discover(ctx)
	if servedBy == nil {
		obs.unavailableAll(set, unavailable("discovery", discoveryErr).Reason)
		return 0
	}
	dyn, err := dynamic.NewForConfig(c.config)
	if err != nil {
		obs.unavailableAll(set, unavailable("dynamic client", err).Reason)
		return 0
	}
	at := preferredServed(servedBy)
	kinds := listingOrder(set.Kinds())
	aliased := servedUnderGroups(kinds, at)
	seenAs := map[types.UID][]schema.GroupKind{} // what each object of an aliased kind was listed as
	examined := 0
	for _, key := range kinds {
		group, kind, _ := probe.SplitKind(key)
		pods := group == "" && kind == "Pod"
		if pods && reusePods && cached != nil {
			obs.merge(cached.obs)
			examined += cached.examined
			continue
		}
		s, ok := at[schema.GroupKind{Group: group, Kind: kind}]
		if !ok {
			if undiscovered(discoveryErr, group) {
				obs.unavailable(group, kind, unavailable("discover "+key, discoveryErr).Reason)
			}
			continue
		}
		into := obs
		if pods {
			into = sets.newObservers() // merged below, as a reused pass is
		}
		n := 0
		gk := schema.GroupKind{Group: group, Kind: kind}
		err := listPages(ctx, dyn.Resource(s.gvr).List, func(page *unstructured.UnstructuredList) {
			for i := range page.Items {
				obj := &page.Items[i]
				var before []schema.GroupKind
				if uid := obj.GetUID(); aliased[kind] && uid != "" {
					before = seenAs[uid]
					seenAs[uid] = append(before[:len(before):len(before)], gk)
				}
				into.observe(obj, group, kind, before)
				if len(before) == 0 {
					n++
				}
			}
		})
		if err != nil {
			into.unavailable(group, kind, unavailable("list "+key, err).Reason)
		}
		if pods {
			obs.merge(into)
			c.podProbes = nil
			if err == nil {
				c.podProbes = &podProbes{sets: sets, obs: into, examined: n}
			}
		}
		examined += n
	}
	return examined
}

// probeSets are a set and its probes split by what they look at: the pod template, and the
// others in parts naming the same kinds, all or none of whose probes have seen an object.
type probeSets struct {
	of, template *probe.Set
	byKinds      []*probe.Set
}

func splitProbes(set *probe.Set) (probeSets, error) {
	var template []probe.Declared
	byKinds := map[string][]probe.Declared{}
	for _, d := range set.Declared() {
		if d.Spec.PodTemplate {
			template = append(template, d)
			continue
		}
		keys := make([]string, 0, len(d.Spec.Kinds))
		for _, k := range d.Spec.Kinds {
			group, kind, _ := probe.SplitKind(k)
			keys = append(keys, probe.KindKey(group, kind))
		}
		slices.Sort(keys)
		named := strings.Join(slices.Compact(keys), " ")
		byKinds[named] = append(byKinds[named], d)
	}
	sets := probeSets{of: set}
	for _, named := range slices.Sorted(maps.Keys(byKinds)) {
		part, err := probe.NewSet(byKinds[named])
		if err != nil {
			return probeSets{}, err
		}
		sets.byKinds = append(sets.byKinds, part)
	}
	var err error
	sets.template, err = probe.NewSet(template)
	return sets, err
}

func (s probeSets) newObservers() observers {
	o := observers{sets: s, template: s.template.NewObserver()}
	for _, part := range s.byKinds {
		o.byKinds = append(o.byKinds, part.NewObserver())
	}
	return o
}

// observers split a set by what its probes look at, so that an object made from another's
// pod template is seen by the probes naming its kind but not by the pod template's, and an
// object listed again under another group only by the probes that did not name the first.
type observers struct {
	sets     probeSets
	byKinds  []*probe.Observer // one per sets.byKinds
	template *probe.Observer
}

// observe looks at obj, of group and kind, with the probes that have not seen it already as
// one of before.
func (o observers) observe(obj *unstructured.Unstructured, group, kind string, before []schema.GroupKind) {
	ref := inventory.ObjectRef{Namespace: obj.GetNamespace(), Name: obj.GetName(), Ignore: ignoreOf(obj.GetAnnotations())}
	for i, part := range o.sets.byKinds {
		if !wantsAny(part, before) {
			o.byKinds[i].Observe(obj.Object, group, kind, ref)
		}
	}
	if !wantsAny(o.sets.template, before) && !madeFromTemplate(obj) {
		o.template.Observe(obj.Object, group, kind, ref)
	}
}

func wantsAny(set *probe.Set, kinds []schema.GroupKind) bool {
	for _, gk := range kinds {
		if set.Wants(gk.Group, gk.Kind) {
			return true
		}
	}
	return false
}

// merge adds what other saw, observers of the same sets, as if observed after o's own.
func (o observers) merge(other observers) {
	for i := range o.byKinds {
		o.byKinds[i].Merge(other.byKinds[i])
	}
	o.template.Merge(other.template)
}

func (o observers) unavailable(group, kind, reason string) {
	for _, part := range o.byKinds {
		part.Unavailable(group, kind, reason)
	}
	o.template.Unavailable(group, kind, reason)
}

func (o observers) unavailableAll(set *probe.Set, reason string) {
	for _, key := range set.Kinds() {
		group, kind, _ := probe.SplitKind(key)
		o.unavailable(group, kind, reason)
	}
}

// probes are the observations of every part, in id order.
func (o observers) probes() []inventory.Probe {
	out := o.template.Probes()
	for _, part := range o.byKinds {
		out = append(out, part.Probes()...)
	}
	inventory.SortProbes(out)
	return out
}

// listingOrder puts the kinds of extensions last: the group others were carved out of
// (Ingress and NetworkPolicy into networking.k8s.io, the workloads into apps), so that an
// object both serve is recorded at the group it moved to.
func listingOrder(kinds []string) []string {
	var first, last []string
	for _, k := range kinds {
		if strings.HasPrefix(k, "extensions/") {
			last = append(last, k)
		} else {
			first = append(first, k)
		}
	}
	return append(first, last...)
}

// servedUnderGroups answers the kinds served under more than one of the groups listed: an
// object may be served under each (Kubernetes moves a kind between groups keeping its name),
// which only its UID tells.
func servedUnderGroups(kinds []string, at map[schema.GroupKind]served) map[string]bool {
	groups := map[string]int{}
	for _, key := range kinds {
		group, kind, _ := probe.SplitKind(key)
		if _, ok := at[schema.GroupKind{Group: group, Kind: kind}]; ok {
			groups[kind]++
		}
	}
	out := map[string]bool{}
	for kind, n := range groups {
		out[kind] = n > 1
	}
	return out
}

// madeFromTemplate says whether obj's controller is a workload, which made obj from its own
// pod template, where the template's probes look: a ReplicaSet's or a Job's Pods, a
// Deployment's ReplicaSets, a CronJob's Jobs. A static pod's mirror (a Node controls it) or a
// Pod a custom resource controls is no copy of a template the probes see.
func madeFromTemplate(obj *unstructured.Unstructured) bool {
	ref := metav1.GetControllerOfNoCopy(obj)
	if ref == nil {
		return false
	}
	owner := schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind)
	_, workload := probe.TemplatePath(owner.Group, owner.Kind)
	return workload
}

// preferredServed picks where to list each served group and kind: the group's preferred
// version when it serves the kind, else the most stable served one (v2, v1, v1beta2, …).
func preferredServed(servedBy map[schema.GroupVersionKind]served) map[schema.GroupKind]served {
	out := map[schema.GroupKind]served{}
	for gvk, s := range servedBy {
		best, ok := out[gvk.GroupKind()]
		if !ok || s.preferred && !best.preferred ||
			s.preferred == best.preferred && version.CompareKubeAwareVersionStrings(s.gvr.Version, best.gvr.Version) > 0 {
			out[gvk.GroupKind()] = s
		}
	}
	return out
}

// undiscovered says whether discovery failed for group, so that a kind it does not list may
// be served all the same.
func undiscovered(err error, group string) bool {
	if err == nil {
		return false
	}
	var failed *discovery.ErrGroupDiscoveryFailed
	if !errors.As(err, &failed) {
		return true
	}
	for gv := range failed.Groups {
		if gv.Group == group {
			return true
		}
	}
	return false
}
