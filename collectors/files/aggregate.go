package files

import (
	"sort"

	"github.com/upgradescope/upgradescope/inventory"
)

// observed is one object of a watched kind.
type observed struct {
	group, version, kind string
	ref                  inventory.ObjectRef
}

type aggregator struct {
	byGVK map[[3]string]*inventory.APIUsage
}

func newAggregator() *aggregator {
	return &aggregator{byGVK: map[[3]string]*inventory.APIUsage{}}
}

func (a *aggregator) add(o observed) {
	k := [3]string{o.group, o.version, o.kind}
	u := a.byGVK[k]
	if u == nil {
		u = &inventory.APIUsage{Group: o.group, Version: o.version, Kind: o.kind, Namespaces: map[string]int{}}
		a.byGVK[k] = u
	}
	u.Count++
	u.Namespaces[o.ref.Namespace]++
	if len(u.Objects) < inventory.MaxObjectRefs {
		u.Objects = append(u.Objects, o.ref)
	} else {
		u.ObjectsOmitted++
	}
}

// usage returns the entries sorted by group, version and kind.
func (a *aggregator) usage() []inventory.APIUsage {
	out := make([]inventory.APIUsage, 0, len(a.byGVK))
	for _, u := range a.byGVK {
		out = append(out, *u)
	}
	inventory.SortAPIUsage(out)
	return out
}

// splitAPIVersion splits "apps/v1" into group and version; "v1" is the core group.
func splitAPIVersion(apiVersion string) (group, version string) {
	for i := len(apiVersion) - 1; i >= 0; i-- {
		if apiVersion[i] == '/' {
			return apiVersion[:i], apiVersion[i+1:]
		}
	}
	return "", apiVersion
}

// imageSet merges every sighting of an image into one entry with its namespaces and the
// distinct label sets it was seen with.
type imageSet struct {
	byImage map[string]*imageEntry
}

type imageEntry struct {
	w          inventory.WorkloadImage
	namespaces map[string]bool
	labelSets  map[string]bool
}

func newImageSet() *imageSet { return &imageSet{byImage: map[string]*imageEntry{}} }

func (s *imageSet) add(im imageSeen) {
	e := s.byImage[im.image]
	if e == nil {
		e = &imageEntry{w: inventory.WorkloadImage{Image: im.image}, namespaces: map[string]bool{}, labelSets: map[string]bool{}}
		s.byImage[im.image] = e
	}
	if !e.namespaces[im.namespace] {
		e.namespaces[im.namespace] = true
		e.w.Namespaces = append(e.w.Namespaces, im.namespace)
	}
	if len(im.labels) == 0 {
		return
	}
	key := ""
	for _, l := range recommendedLabels {
		key += im.labels[l] + "\x00"
	}
	if e.labelSets[key] {
		return
	}
	e.labelSets[key] = true
	if len(e.w.LabelSets) < inventory.MaxLabelSets {
		e.w.LabelSets = append(e.w.LabelSets, im.labels)
	} else {
		e.w.LabelSetsOmitted++
	}
}

// list returns the images sorted by reference, each with its namespaces sorted.
func (s *imageSet) list() []inventory.WorkloadImage {
	images := make([]string, 0, len(s.byImage))
	for im := range s.byImage {
		images = append(images, im)
	}
	sort.Strings(images)
	out := make([]inventory.WorkloadImage, 0, len(images))
	for _, im := range images {
		w := s.byImage[im].w
		sort.Strings(w.Namespaces)
		out = append(out, w)
	}
	return out
}

// attachUsage gives each CRD the custom resources of its group and kind, and returns the
// group/version kinds no CRD in the files defines.
func attachUsage(crds []inventory.CRD, usage []inventory.APIUsage) (orphans []string) {
	index := map[[2]string]int{}
	for i, c := range crds {
		index[[2]string{c.Group, c.Kind}] = i
	}
	for _, u := range usage {
		i, ok := index[[2]string{u.Group, u.Kind}]
		if !ok {
			orphans = append(orphans, u.Group+"/"+u.Version+" "+u.Kind)
			continue
		}
		crds[i].Usage = append(crds[i].Usage, u)
	}
	return orphans
}
