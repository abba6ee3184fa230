package inventory

import (
	"fmt"
	"slices"
	"strings"
)

// OrphanReason ends the reason of a files inventory's crds capability when custom resources
// came without their CustomResourceDefinition (Document.OrphanUsage).
const OrphanReason = "without their CustomResourceDefinition in the files"

// Overlay answers the cluster's inventory with a manifest inventory applied, as a gate
// judged against a stored cluster sees it: the whole cluster once the manifests are applied.
// An object the manifests hold (by kind, namespace and name) is judged as they write it: its
// live copy leaves the cluster's API usage, probe observations and custom resource usage,
// and the manifests' copy joins them. Objects a cluster list left out past its bound cannot
// be matched and stay; the manifests' copy is counted beside them. Images, ingress classes,
// CRDs, GitOps charts and namespaces are merged, the manifests' copy winning where both have
// one; a manifest custom resource whose CRD only the cluster has is judged against it. The
// pre-flight section is merged the same way (overlayPreflight). What manifests cannot hold
// (nodes, control plane, Helm releases, deprecated calls, node state) stays the cluster's.
// Neither argument is changed.
func Overlay(cluster, manifests *Document) *Document {
	rewritten := objectsOf(manifests)
	out := *cluster
	out.FilesBase = manifests.FilesBase // where the manifests' file:line evidence is relative to
	out.FilesExcluded, out.FilesExcludedOmitted = manifests.FilesExcluded, manifests.FilesExcludedOmitted
	out.APIUsage = mergeUsage(manifests.APIUsage, without(cluster.APIUsage, rewritten))
	out.APIAuthorshipUnknown = mergeUsage(manifests.APIAuthorshipUnknown, without(cluster.APIAuthorshipUnknown, rewritten))
	out.Probes = mergeProbes(cluster.Probes, manifests.Probes, rewritten)
	out.WorkloadImages = mergeImages(cluster.WorkloadImages, manifests.WorkloadImages)
	out.WorkloadImagesOmitted = cluster.WorkloadImagesOmitted + manifests.WorkloadImagesOmitted
	out.IngressClasses = mergeBy(cluster.IngressClasses, manifests.IngressClasses,
		func(c IngressClass) string { return c.Name })
	var orphans []string
	out.CRDs, orphans = mergeCRDs(cluster.CRDs, manifests.CRDs, manifests.OrphanUsage, rewritten)
	out.OrphanUsage = nil
	out.GitopsCharts = mergeBy(cluster.GitopsCharts, manifests.GitopsCharts,
		func(c GitopsChart) string { return c.Tool + "/" + c.Namespace + "/" + c.Name })
	out.Namespaces = mergeNamespaces(cluster.Namespaces, manifests.Namespaces)
	var cuts []preflightCut
	out.Preflight, cuts = overlayPreflight(cluster.Preflight, manifests.Preflight)
	out.Capabilities = overlayCapabilities(cluster.Capabilities, manifests, orphans)
	markCuts(out.Capabilities, cuts)
	return &out
}

// objectID names an object across API versions and sources: a live object and the manifest
// that writes it agree on kind, namespace and name, not on group, version, file or line.
type objectID struct{ kind, namespace, name string }

// objectsOf answers every object the manifests list by name.
func objectsOf(doc *Document) map[objectID]bool {
	ids := map[objectID]bool{}
	addRows := func(rows []APIUsage) {
		for _, u := range rows {
			for _, o := range u.Objects {
				ids[objectID{u.Kind, o.Namespace, o.Name}] = true
			}
		}
	}
	addRows(doc.APIUsage)
	addRows(doc.APIAuthorshipUnknown)
	addRows(doc.OrphanUsage)
	for _, c := range doc.CRDs {
		addRows(c.Usage)
	}
	for _, p := range doc.Probes {
		for _, o := range p.Objects {
			ids[objectID{o.Kind, o.Namespace, o.Name}] = true
		}
	}
	return ids
}

// without answers rows with the rewritten objects taken out of their lists and counts; a
// row left with no object goes.
func without(rows []APIUsage, rewritten map[objectID]bool) []APIUsage {
	var out []APIUsage
	for _, u := range rows {
		c := u.clone()
		c.Objects = nil
		for _, o := range u.Objects {
			if !rewritten[objectID{u.Kind, o.Namespace, o.Name}] {
				c.Objects = append(c.Objects, o)
				continue
			}
			c.Count--
			if n, ok := c.Namespaces[o.Namespace]; ok {
				if n <= 1 {
					delete(c.Namespaces, o.Namespace)
				} else {
					c.Namespaces[o.Namespace] = n - 1
				}
			} else if c.NamespacesOmitted > 0 {
				c.NamespacesOmitted--
			}
		}
		if c.Count > 0 {
			out = append(out, c)
		}
	}
	return out
}

func (u APIUsage) clone() APIUsage {
	c := u
	c.Namespaces = make(map[string]int, len(u.Namespaces))
	for ns, n := range u.Namespaces {
		c.Namespaces[ns] = n
	}
	c.Objects = slices.Clone(u.Objects)
	return c
}

// mergeUsage answers first's rows with rest's of the same group, version and kind merged
// after them (so first's objects are the ones listed), and rest's others added, sorted.
func mergeUsage(first, rest []APIUsage) []APIUsage {
	if len(first) == 0 && len(rest) == 0 {
		return first
	}
	out := make([]APIUsage, 0, len(first)+len(rest))
	at := map[[3]string]int{}
	for _, u := range first {
		at[[3]string{u.Group, u.Version, u.Kind}] = len(out)
		out = append(out, u.clone())
	}
	for _, u := range rest {
		key := [3]string{u.Group, u.Version, u.Kind}
		if i, ok := at[key]; ok {
			out[i].Merge(u)
			continue
		}
		at[key] = len(out)
		out = append(out, u.clone())
	}
	SortAPIUsage(out)
	return out
}

// mergeProbes merges each probe's observations: the manifests' objects first, the cluster's
// not rewritten after them. A probe the two observed under different declarations keeps the
// cluster's observation alone, whose declaration the engine then checks (a stale one is a
// gap, so the verdict is unknown rather than judged on half the objects).
func mergeProbes(cluster, manifests []Probe, rewritten map[objectID]bool) []Probe {
	byID := map[string]Probe{}
	for _, p := range manifests {
		byID[p.ID] = p
	}
	var out []Probe
	for _, c := range cluster {
		m, ok := byID[c.ID]
		delete(byID, c.ID)
		switch {
		case !ok:
			out = append(out, withoutProbeObjects(c, rewritten))
		case !probeSpecEqual(c.Probe, m.Probe):
			out = append(out, c)
		default:
			out = append(out, mergeProbe(m, withoutProbeObjects(c, rewritten)))
		}
	}
	for _, p := range manifests {
		if _, ok := byID[p.ID]; ok {
			out = append(out, p)
		}
	}
	SortProbes(out)
	return out
}

func probeSpecEqual(a, b ProbeSpec) bool {
	return fmt.Sprintf("%+v", a) == fmt.Sprintf("%+v", b)
}

func withoutProbeObjects(p Probe, rewritten map[objectID]bool) Probe {
	c := p
	c.Objects = nil
	for _, o := range p.Objects {
		if rewritten[objectID{o.Kind, o.Namespace, o.Name}] {
			c.Count--
			c.Examined--
			continue
		}
		c.Objects = append(c.Objects, o)
	}
	return c
}

// mergeProbe adds the cluster's observation after the manifests'. Values are summed: a
// rewritten object's values cannot be told from the others', so they may be counted twice,
// which can only make the cluster look worse, never better.
func mergeProbe(m, c Probe) Probe {
	out := m
	out.Available = m.Available && c.Available
	out.Reason = strings.Trim(m.Reason+"; "+c.Reason, "; ")
	out.Examined += c.Examined
	out.Count += c.Count
	kept := min(len(c.Objects), MaxObjectRefs-len(m.Objects))
	out.Objects = append(slices.Clone(m.Objects), c.Objects[:max(kept, 0)]...)
	out.ObjectsOmitted += c.ObjectsOmitted + len(c.Objects) - max(kept, 0)
	counts := map[string]int{}
	for _, v := range slices.Concat(m.Values, c.Values) {
		counts[v.Value] += v.Count
	}
	out.Values = nil
	for _, v := range slices.Sorted(func(yield func(string) bool) {
		for k := range counts {
			if !yield(k) {
				return
			}
		}
	}) {
		if len(out.Values) == MaxProbeValues {
			out.ValuesOmitted += counts[v]
			continue
		}
		out.Values = append(out.Values, ProbeValue{Value: v, Count: counts[v]})
	}
	out.ValuesOmitted += c.ValuesOmitted
	return out
}

// mergeCRDs merges the definitions (the manifests' versions, the stored versions of both)
// and their custom resources as API usage is merged, then gives each manifest custom
// resource whose CRD the manifests lack to the cluster's CRD of its group and kind. It
// answers the orphans no CRD takes, by "group/version Kind".
func mergeCRDs(cluster, manifests []CRD, orphanUsage []APIUsage, rewritten map[objectID]bool) ([]CRD, []string) {
	out := make([]CRD, 0, len(cluster)+len(manifests))
	at := map[[2]string]int{}
	for _, c := range cluster {
		c.Usage = without(c.Usage, rewritten)
		at[[2]string{c.Group, c.Kind}] = len(out)
		out = append(out, c)
	}
	for _, m := range manifests {
		i, ok := at[[2]string{m.Group, m.Kind}]
		if !ok {
			at[[2]string{m.Group, m.Kind}] = len(out)
			out = append(out, m)
			continue
		}
		c := out[i]
		m.StoredVersions = slices.Compact(slices.Sorted(slices.Values(slices.Concat(c.StoredVersions, m.StoredVersions))))
		m.Usage = mergeUsage(m.Usage, c.Usage)
		out[i] = m
	}
	var orphans []string
	for _, u := range orphanUsage {
		i, ok := at[[2]string{u.Group, u.Kind}]
		if !ok {
			orphans = append(orphans, u.Group+"/"+u.Version+" "+u.Kind)
			continue
		}
		out[i].Usage = mergeUsage([]APIUsage{u}, out[i].Usage)
	}
	return out, orphans
}

// overlayCapabilities keeps, for each section the two inventories share, the worse of the
// two: a merged section is only as complete as its less complete half. The manifests' crds
// gap for custom resources without their CRD is replaced by the orphans no cluster CRD took.
// A capability the cluster's collector does not report is the manifests' alone, except a
// pre-flight one: the cluster's part of it was never read, and stays a gap. The live-only
// pre-flight parts (endpoints, APIServices, node state) stay the cluster's.
func overlayCapabilities(cluster map[string]Capability, manifests *Document, orphans []string) map[string]Capability {
	out := make(map[string]Capability, len(cluster))
	for name, c := range cluster {
		out[name] = c
	}
	for _, name := range slices.Concat([]string{CapAPIUsage, CapAddons, CapCRDs}, preflightCapabilities) {
		m, ok := manifests.Capabilities[name]
		if !ok {
			continue
		}
		if _, collected := out[name]; !collected && slices.Contains(preflightCapabilities, name) {
			continue
		}
		if name == CapCRDs {
			m = withOrphans(m, manifests.OrphanUsage, orphans)
		}
		if c, ok := out[name]; ok {
			m = worse(c, m)
		}
		out[name] = m
	}
	return out
}

// withOrphans rewrites a files crds capability for the orphans left after the merge.
func withOrphans(c Capability, all []APIUsage, left []string) Capability {
	if len(all) == 0 {
		return c
	}
	var reasons []string
	for _, r := range strings.Split(c.Reason, "; ") {
		if r != "" && !strings.HasSuffix(r, OrphanReason) {
			reasons = append(reasons, r)
		}
	}
	var skipped []string
	for _, s := range c.Skipped {
		if !slices.ContainsFunc(all, func(u APIUsage) bool { return u.Group+"/"+u.Version+" "+u.Kind == s }) || slices.Contains(left, s) {
			skipped = append(skipped, s)
		}
	}
	if len(left) > 0 {
		reasons = append(reasons, fmt.Sprintf("%d custom resource kind(s) %s", len(left), OrphanReason))
	}
	c.Reason, c.Skipped = strings.Join(reasons, "; "), skipped
	c.Partial = len(reasons) > 0
	return c
}

func worse(a, b Capability) Capability {
	c := Capability{Available: a.Available && b.Available, Partial: a.Partial || b.Partial}
	var reasons []string
	for _, r := range []string{a.Reason, b.Reason} {
		if r != "" && !slices.Contains(reasons, r) {
			reasons = append(reasons, r)
		}
	}
	c.Reason = strings.Join(reasons, "; ")
	for _, s := range slices.Concat(a.Skipped, b.Skipped) {
		if !slices.Contains(c.Skipped, s) {
			c.Skipped = append(c.Skipped, s)
		}
	}
	return c
}

// mergeBy answers base with each of over's entries replacing base's entry of the same key,
// or appended after them.
func mergeBy[T any](base, over []T, key func(T) string) []T {
	if len(over) == 0 {
		return base
	}
	at := make(map[string]int, len(base))
	out := slices.Clone(base)
	for i, v := range out {
		at[key(v)] = i
	}
	for _, v := range over {
		if i, ok := at[key(v)]; ok {
			out[i] = v
			continue
		}
		at[key(v)] = len(out)
		out = append(out, v)
	}
	return out
}

// mergeImages adds the manifests' image versions to the cluster's repositories. A version
// running in the cluster and written by the manifests is listed once, as the manifests write
// it (their objects, so its evidence names the file), in the namespaces of both.
func mergeImages(base, over []WorkloadImage) []WorkloadImage {
	out := slices.Clone(base)
	for _, img := range over {
		i := slices.IndexFunc(out, func(w WorkloadImage) bool { return w.Repository == img.Repository })
		if i < 0 {
			out = append(out, img)
			continue
		}
		versions := slices.Clone(out[i].Versions)
		for _, v := range img.Versions {
			j := slices.IndexFunc(versions, func(c ImageVersion) bool { return c.Tag == v.Tag && c.Digest == v.Digest })
			if j < 0 {
				versions = append(versions, v)
				continue
			}
			v.Namespaces = slices.Compact(slices.Sorted(slices.Values(slices.Concat(versions[j].Namespaces, v.Namespaces))))
			v.NamespacesOmitted += versions[j].NamespacesOmitted
			versions[j] = v
		}
		out[i] = WorkloadImage{Repository: img.Repository, Versions: versions}
	}
	return out
}

// mergeNamespaces keeps the cluster's namespaces and their teams, adding the manifests'
// new ones without a team: who owns a namespace is the stored cluster's to say, never the
// body's (a team-scoped gate would otherwise let a body hand its breakage to another team).
func mergeNamespaces(base, over []Namespace) []Namespace {
	out := slices.Clone(base)
	for _, ns := range over {
		if !slices.ContainsFunc(out, func(n Namespace) bool { return n.Name == ns.Name }) {
			out = append(out, Namespace{Name: ns.Name})
		}
	}
	return out
}
