package cluster

import (
	"context"
	"errors"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"

	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/probe"
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
// naming its kind look at it. A nil or empty set records nothing, not even an empty section.
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
		obs := observers{byKind: set.NewObserver(), template: (*probe.Set)(nil).NewObserver()}
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
	examined := 0
	for _, key := range set.Kinds() {
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
		err := listPages(ctx, dyn.Resource(s.gvr).List, func(page *unstructured.UnstructuredList) {
			for i := range page.Items {
				into.observe(&page.Items[i], group, kind)
			}
			n += len(page.Items)
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

// probeSets are a set and its probes split by what they look at.
type probeSets struct {
	of, byKind, template *probe.Set
}

func splitProbes(set *probe.Set) (probeSets, error) {
	var byKind, template []probe.Declared
	for _, d := range set.Declared() {
		if d.Spec.PodTemplate {
			template = append(template, d)
		} else {
			byKind = append(byKind, d)
		}
	}
	kindSet, err := probe.NewSet(byKind)
	if err != nil {
		return probeSets{}, err
	}
	templateSet, err := probe.NewSet(template)
	if err != nil {
		return probeSets{}, err
	}
	return probeSets{of: set, byKind: kindSet, template: templateSet}, nil
}

func (s probeSets) newObservers() observers {
	return observers{byKind: s.byKind.NewObserver(), template: s.template.NewObserver()}
}

// observers split a set by what its probes look at, so that an object made from another's
// pod template is seen by the probes naming its kind but not by the pod template's.
type observers struct {
	byKind, template *probe.Observer
}

func (o observers) observe(obj *unstructured.Unstructured, group, kind string) {
	ref := inventory.ObjectRef{Namespace: obj.GetNamespace(), Name: obj.GetName()}
	o.byKind.Observe(obj.Object, group, kind, ref)
	if !madeFromTemplate(obj) {
		o.template.Observe(obj.Object, group, kind, ref)
	}
}

// merge adds what other saw, observers of the same sets, as if observed after o's own.
func (o observers) merge(other observers) {
	o.byKind.Merge(other.byKind)
	o.template.Merge(other.template)
}

func (o observers) unavailable(group, kind, reason string) {
	o.byKind.Unavailable(group, kind, reason)
	o.template.Unavailable(group, kind, reason)
}

func (o observers) unavailableAll(set *probe.Set, reason string) {
	for _, key := range set.Kinds() {
		group, kind, _ := probe.SplitKind(key)
		o.unavailable(group, kind, reason)
	}
}

// probes are the observations of both halves, in id order.
func (o observers) probes() []inventory.Probe {
	out := append(o.byKind.Probes(), o.template.Probes()...)
	inventory.SortProbes(out)
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
