package cluster

import (
	"context"
	"fmt"
	"hash/fnv"
	"slices"

	"github.com/upgradescope/upgradescope/inventory"
)

// podPass remembers the last pod listing so an agent can list pods on one tick in N: on a
// large cluster the pod list is most of a tick's bytes, and the images it yields change far
// less often than ticks come.
type podPass struct {
	images  []inventory.WorkloadImage
	omitted int
	// since counts the collections that reused images since the last full pass.
	since int
	// charts is a digest of the Helm releases and GitOps charts seen at the last collection;
	// a change forces the next pass, since a new chart can mean a new add-on.
	charts uint64
	force  bool
	valid  bool
	// reused is true when the last addonsPass reused the pass instead of listing pods.
	reused bool
	// drain, placements and budgets are the pre-flight facts of the pass: the pods' drain
	// facts, the workloads that need a node per replica, and the pods each
	// PodDisruptionBudget selected.
	drain             *inventory.DrainPods
	placements        []inventory.Placement
	placementsOmitted int
	budgets           map[string]cachedBudget
}

// addonsPass records add-on evidence, listing pods only when a pass is due, and fills the
// pods capability: the pass's pods are also the pre-flight pass's (pf), which sees each.
func (c *Collector) addonsPass(ctx context.Context, doc *inventory.Document, every int, watch inventory.ImageWatch, pf *preflightPass) inventory.Capability {
	p := &c.pods
	p.reused = every > 1 && p.valid && !p.force && p.since < every-1
	if p.reused {
		p.since++
		doc.WorkloadImages, doc.WorkloadImagesOmitted = cloneImages(p.images), p.omitted
		doc.Capabilities[inventory.CapPods] = withPodPassReason(inventory.Capability{Available: true}, every)
		return withPodPassReason(c.ingressClasses(ctx, doc), every)
	}
	capability, podsErr := c.addons(ctx, doc, watch, pf.pod)
	p.valid = capability.Available
	p.images, p.omitted, p.since, p.force = cloneImages(doc.WorkloadImages), doc.WorkloadImagesOmitted, 0, false
	pods := inventory.Capability{Available: true}
	if podsErr != nil {
		pods = access{verb: "list", resource: "pods"}.unavailable(podsErr)
	} else {
		pods = pf.workloads(ctx)
	}
	pf.podsListed = podsErr == nil
	if every > 1 && capability.Available {
		capability, pods = withPodPassReason(capability, every), withPodPassReason(pods, every)
	}
	doc.Capabilities[inventory.CapPods] = pods
	return capability
}

// withPodPassReason says that pod images (and pods) come from the last pod pass. The pass's own
// collection says the same, so an unchanged cluster's inventory hashes alike on every
// collection (the agent pushes, and the server stores, only a changed one).
func withPodPassReason(capability inventory.Capability, every int) inventory.Capability {
	if capability.Reason == "" {
		capability.Reason = fmt.Sprintf("pod images from the last pod pass (pods are listed every %d collections)", every)
	}
	return capability
}

// noteCharts forces a pod pass at the next collection when the charts changed.
func (p *podPass) noteCharts(doc *inventory.Document) {
	h := fnv.New64a()
	for _, r := range doc.HelmReleases {
		fmt.Fprintf(h, "%s/%s %s %s %d %s\n", r.Namespace, r.Name, r.Chart, r.ChartVersion, r.Revision, r.Status)
	}
	for _, g := range doc.GitopsCharts {
		fmt.Fprintf(h, "%s %s/%s %s %s\n", g.Tool, g.Namespace, g.Name, g.Chart, g.Version)
	}
	if sum := h.Sum64(); sum != p.charts {
		p.force = p.force || p.valid && p.charts != 0
		p.charts = sum
	}
}

func cloneImages(in []inventory.WorkloadImage) []inventory.WorkloadImage {
	out := make([]inventory.WorkloadImage, len(in))
	for i, w := range in {
		w.Versions = slices.Clone(w.Versions)
		for j, v := range w.Versions {
			v.Namespaces = slices.Clone(v.Namespaces)
			v.LabelSets = slices.Clone(v.LabelSets)
			v.Objects = slices.Clone(v.Objects)
			w.Versions[j] = v
		}
		out[i] = w
	}
	return out
}
