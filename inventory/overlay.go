package inventory

import (
	"slices"
	"strings"
)

// Overlay answers the cluster's inventory with a manifest inventory applied, as a gate
// judged against a stored cluster sees it. The manifests' API usage and probe observations
// replace the cluster's: they are what the objects will be once applied, and a rule must not
// judge the live copy of an object the manifests rewrite. Their images, ingress classes,
// CRDs, GitOps charts and namespaces are merged into the cluster's, the manifests' copy
// winning where both have one. Everything the manifests cannot hold (nodes, control plane,
// Helm releases, deprecated calls) stays the cluster's. Neither argument is changed.
func Overlay(cluster, manifests *Document) *Document {
	out := *cluster
	out.FilesBase = ""
	out.APIUsage = manifests.APIUsage
	out.APIAuthorshipUnknown = manifests.APIAuthorshipUnknown
	out.Probes = manifests.Probes
	out.WorkloadImages = mergeImages(cluster.WorkloadImages, manifests.WorkloadImages)
	out.WorkloadImagesOmitted = cluster.WorkloadImagesOmitted + manifests.WorkloadImagesOmitted
	out.IngressClasses = mergeBy(cluster.IngressClasses, manifests.IngressClasses,
		func(c IngressClass) string { return c.Name })
	out.CRDs = mergeBy(cluster.CRDs, manifests.CRDs, func(c CRD) string { return c.Group + "/" + c.Kind })
	out.GitopsCharts = mergeBy(cluster.GitopsCharts, manifests.GitopsCharts,
		func(c GitopsChart) string { return c.Tool + "/" + c.Namespace + "/" + c.Name })
	out.Namespaces = mergeNamespaces(cluster.Namespaces, manifests.Namespaces)
	out.Capabilities = overlayCapabilities(cluster.Capabilities, manifests.Capabilities)
	return &out
}

// overlayCapabilities takes api-usage from the manifests, whose usage replaced the
// cluster's, and for what was merged keeps the worse of the two: a merged section is only as
// complete as its less complete half. A capability the cluster's collector does not report is
// the manifests' alone.
func overlayCapabilities(cluster, manifests map[string]Capability) map[string]Capability {
	out := make(map[string]Capability, len(cluster))
	for name, c := range cluster {
		out[name] = c
	}
	if c, ok := manifests[CapAPIUsage]; ok {
		out[CapAPIUsage] = c
	}
	for _, name := range []string{CapAddons, CapCRDs} {
		m, ok := manifests[name]
		if !ok {
			continue
		}
		if c, ok := out[name]; ok {
			m = worse(c, m)
		}
		out[name] = m
	}
	return out
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
// new ones: a namespace's team is the cluster's label until the manifests are applied.
func mergeNamespaces(base, over []Namespace) []Namespace {
	out := slices.Clone(base)
	for _, ns := range over {
		if !slices.ContainsFunc(out, func(n Namespace) bool { return n.Name == ns.Name }) {
			out = append(out, ns)
		}
	}
	return out
}
