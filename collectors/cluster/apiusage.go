package cluster

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/metadata"

	"github.com/upgradescope/upgradescope/inventory"
)

// PageSize is how many objects one list request returns.
const PageSize = 500

// listPages lists PageSize objects at a time, following continue tokens, and hands each page
// to each. A page is garbage once each returns, before the next is requested: memory holds
// one page, whatever the number of objects. An error ends the listing; the pages before it
// were handed over.
func listPages[L metav1.ListInterface](ctx context.Context, list func(context.Context, metav1.ListOptions) (L, error), each func(L)) error {
	return listPagesWith(ctx, metav1.ListOptions{}, list, each)
}

// listPagesWith is listPages with opts' selectors.
func listPagesWith[L metav1.ListInterface](ctx context.Context, opts metav1.ListOptions, list func(context.Context, metav1.ListOptions) (L, error), each func(L)) error {
	opts.Limit = PageSize
	for {
		page, err := list(ctx, opts)
		if err != nil {
			return err
		}
		each(page)
		if opts.Continue = page.GetContinue(); opts.Continue == "" {
			return nil
		}
	}
}

// FlaggedKind is a group/version/kind the knowledge base deprecates or removes, with the
// kind that replaces it.
type FlaggedKind struct {
	Group, Version, Kind string
	// Removed is the minor that removes it ("1.38"), empty when only deprecated.
	Removed     string
	Replacement schema.GroupVersionKind
}

// ignoredManagers rewrite objects on their own (storage migration, defaults); their writes
// say nothing about who still uses an old API.
var ignoredManagers = map[string]bool{
	"kube-apiserver": true, "kube-controller-manager": true,
	"api-priority-and-fairness-config-producer-v1": true,
}

// served is one resource discovery reports for a group/version.
type served struct {
	gvr        schema.GroupVersionResource
	namespaced bool
	// preferred is true at the group's preferred version.
	preferred bool
}

// APIUsage finds the objects a writer still writes through a flagged API version. Each
// served flagged kind is listed once, metadata only and paged, at a version that is not
// flagged when one is served, so the scan itself never calls a deprecated endpoint it can
// avoid. An object counts when its managedFields show a writer at the flagged version (an
// Apply entry, or an Update newer than the same manager's entries at other versions), else
// when its last-applied-configuration names the version; objects nobody can be attributed to
// go to apiAuthorshipUnknown.
func (c *Collector) APIUsage(ctx context.Context, doc *inventory.Document, flagged []FlaggedKind) inventory.Capability {
	servedBy, discoveryErr := c.discover(ctx)
	if servedBy == nil {
		return unavailable("discovery", discoveryErr)
	}
	meta, err := metadata.NewForConfig(c.config)
	if err != nil {
		return unavailable("metadata client", err)
	}
	byKind := map[[2]string][]FlaggedKind{}
	for _, f := range flagged {
		if _, ok := servedBy[schema.GroupVersionKind{Group: f.Group, Version: f.Version, Kind: f.Kind}]; ok {
			k := [2]string{f.Group, f.Kind}
			byKind[k] = append(byKind[k], f)
		}
	}
	var skipped []string
	if discoveryErr != nil {
		skipped = append(skipped, "discovery: "+discoveryErr.Error())
	}
	keys := make([][2]string, 0, len(byKind))
	for k := range byKind {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i][0]+"/"+keys[i][1] < keys[j][0]+"/"+keys[j][1] })
	for _, k := range keys {
		fs := byKind[k]
		at := listingVersion(fs, servedBy)
		usage, unknown, err := c.attribute(ctx, meta, at, fs)
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("%s/%s %s: %v", fs[0].Group, fs[0].Version, fs[0].Kind, err))
			continue
		}
		doc.APIUsage = append(doc.APIUsage, usage...)
		doc.APIAuthorshipUnknown = append(doc.APIAuthorshipUnknown, unknown...)
	}
	inventory.SortAPIUsage(doc.APIUsage)
	inventory.SortAPIUsage(doc.APIAuthorshipUnknown)
	if doc.APIUsage == nil {
		doc.APIUsage = []inventory.APIUsage{}
	}
	if len(skipped) > 0 {
		return inventory.Capability{Available: true, Partial: true, Reason: fmt.Sprintf("%d API(s) not read", len(skipped)), Skipped: skipped}
	}
	return inventory.Capability{Available: true}
}

// discover maps every served, listable group/version/kind to its resource. Partial
// discovery returns what it found and the error.
func (c *Collector) discover(ctx context.Context) (map[schema.GroupVersionKind]served, error) {
	groups, lists, err := discovery.ToDiscoveryInterfaceWithContext(c.client.Discovery()).ServerGroupsAndResourcesWithContext(ctx)
	if lists == nil {
		return nil, err
	}
	preferred := map[string]bool{}
	for _, g := range groups {
		preferred[g.PreferredVersion.GroupVersion] = true
	}
	out := map[schema.GroupVersionKind]served{}
	for _, l := range lists {
		gv, perr := schema.ParseGroupVersion(l.GroupVersion)
		if perr != nil {
			continue
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || !hasVerb(r.Verbs, "list") {
				continue
			}
			out[gv.WithKind(r.Kind)] = served{gvr: gv.WithResource(r.Name), namespaced: r.Namespaced, preferred: preferred[l.GroupVersion]}
		}
	}
	return out, err
}

func hasVerb(verbs metav1.Verbs, verb string) bool {
	for _, v := range verbs {
		if v == verb {
			return true
		}
	}
	return false
}

// listingVersion picks where to list a kind: the replacement if served and the same kind in
// another version, else another served version of the group that is not flagged, else the
// flagged version itself. A replacement of another kind (Endpoints → EndpointSlice) holds
// other objects, so listing it would never find the flagged ones.
func listingVersion(fs []FlaggedKind, servedBy map[schema.GroupVersionKind]served) served {
	flaggedVersion := map[string]bool{}
	for _, f := range fs {
		flaggedVersion[f.Version] = true
	}
	for _, f := range fs {
		r := f.Replacement
		if s, ok := servedBy[r]; ok && r.Kind == f.Kind && r.Group == f.Group && !flaggedVersion[r.Version] {
			return s
		}
	}
	var candidates []schema.GroupVersionKind
	for gvk := range servedBy {
		if gvk.Group == fs[0].Group && gvk.Kind == fs[0].Kind && !flaggedVersion[gvk.Version] {
			candidates = append(candidates, gvk)
		}
	}
	if len(candidates) > 0 {
		sort.Slice(candidates, func(i, j int) bool { return candidates[i].Version < candidates[j].Version })
		return servedBy[candidates[0]]
	}
	// Every served version is flagged: list at the one removed last, the least likely to be
	// gone or alpha.
	last := fs[0]
	for _, f := range fs[1:] {
		if f.Removed == "" || last.Removed != "" && laterMinor(f.Removed, last.Removed) {
			last = f
		}
	}
	return servedBy[schema.GroupVersionKind{Group: last.Group, Version: last.Version, Kind: last.Kind}]
}

// laterMinor compares "1.38" and "1.40" as versions, not strings.
func laterMinor(a, b string) bool {
	va, errA := inventory.ParseVersion(a)
	vb, errB := inventory.ParseVersion(b)
	return errA == nil && errB == nil && (va.Major > vb.Major || va.Major == vb.Major && va.Minor > vb.Minor)
}

// attribute lists the kind at `at` and counts, per flagged version, the objects written
// through it and those no writer can be attributed to.
func (c *Collector) attribute(ctx context.Context, meta metadata.Interface, at served, fs []FlaggedKind) (usage, unknown []inventory.APIUsage, err error) {
	aggs := map[string]*usageAgg{}
	unknownAggs := map[string]*usageAgg{}
	for _, f := range fs {
		aggs[f.Version] = newUsageAgg(f.Group, f.Version, f.Kind)
		unknownAggs[f.Version] = newUsageAgg(f.Group, f.Version, f.Kind)
	}
	for _, f := range fs {
		if at.gvr.Group == f.Group && at.gvr.Version == f.Version {
			c.selfListed[at.gvr] = true
		}
	}
	err = listPages(ctx, meta.Resource(at.gvr).List, func(page *metav1.PartialObjectMetadataList) {
		for i := range page.Items {
			o := &page.Items[i]
			for _, f := range fs {
				apiVersion := schema.GroupVersion{Group: f.Group, Version: f.Version}.String()
				switch writtenThrough(o, apiVersion) {
				case writtenYes:
					aggs[f.Version].add(o)
				case writtenUnknown:
					unknownAggs[f.Version].add(o)
				}
			}
		}
	})
	if err != nil {
		return nil, nil, err
	}
	for _, f := range fs {
		if a := aggs[f.Version]; a.u.Count > 0 {
			usage = append(usage, a.u)
		}
		if a := unknownAggs[f.Version]; a.u.Count > 0 {
			unknown = append(unknown, a.u)
		}
	}
	return usage, unknown, nil
}

type written int

const (
	writtenNo written = iota
	writtenYes
	writtenUnknown
)

// writtenThrough decides from an object's metadata whether a writer still uses apiVersion.
// The rule holds when no other version is served too: objects only the control plane writes
// (Endpoints, ComponentStatus) then do not count, those users still write do.
func writtenThrough(o *metav1.PartialObjectMetadata, apiVersion string) written {
	if len(o.ManagedFields) > 0 {
		entries := relevantEntries(o.ManagedFields)
		for _, e := range entries {
			if e.APIVersion != apiVersion {
				continue
			}
			if e.Operation == metav1.ManagedFieldsOperationApply || newestOfManager(e, entries) {
				return writtenYes
			}
		}
		return writtenNo // written, but not through apiVersion, or only by the control plane
	}
	if last, ok := o.Annotations["kubectl.kubernetes.io/last-applied-configuration"]; ok {
		var applied struct {
			APIVersion string `json:"apiVersion"`
		}
		if json.Unmarshal([]byte(last), &applied) == nil && applied.APIVersion != "" {
			if applied.APIVersion == apiVersion {
				return writtenYes
			}
			return writtenNo
		}
	}
	return writtenUnknown
}

// relevantEntries drops status writes and the managers that rewrite objects themselves.
func relevantEntries(entries []metav1.ManagedFieldsEntry) []metav1.ManagedFieldsEntry {
	var out []metav1.ManagedFieldsEntry
	for _, e := range entries {
		if e.Subresource == "status" || ignoredManagers[e.Manager] {
			continue
		}
		out = append(out, e)
	}
	return out
}

// newestOfManager is true when an Update entry is at least as new as every entry of the
// same manager at another version: that manager's last write went through this version.
func newestOfManager(e metav1.ManagedFieldsEntry, entries []metav1.ManagedFieldsEntry) bool {
	for _, other := range entries {
		if other.Manager != e.Manager || other.APIVersion == e.APIVersion {
			continue
		}
		if e.Time == nil || other.Time != nil && other.Time.After(e.Time.Time) {
			return false
		}
	}
	return true
}

type usageAgg struct{ u inventory.APIUsage }

func newUsageAgg(group, version, kind string) *usageAgg {
	return &usageAgg{u: inventory.APIUsage{Group: group, Version: version, Kind: kind, Namespaces: map[string]int{}}}
}

func (a *usageAgg) add(o *metav1.PartialObjectMetadata) {
	a.u.Add(inventory.ObjectRef{Namespace: o.Namespace, Name: o.Name, Ignore: ignoreOf(o.Annotations)})
}

func ignoreOf(annotations map[string]string) *inventory.IgnoreAnnotation {
	rules, reason := annotations[inventory.AnnotationIgnore], strings.TrimSpace(annotations[inventory.AnnotationIgnoreReason])
	if rules == "" || !inventory.HasReason(reason) {
		return nil
	}
	return &inventory.IgnoreAnnotation{Rules: rules, Reason: reason}
}
