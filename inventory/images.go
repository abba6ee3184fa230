package inventory

import (
	"container/heap"
	"sort"
	"strings"
)

// MaxImageObjectRefs is how many workloads one image version names; the rest are counted in
// ObjectsOmitted.
const MaxImageObjectRefs = 10

// NameLabel is the recommended label add-on detection reads an image's application from.
const NameLabel = "app.kubernetes.io/name"

// RecommendedLabels are the labels an observed image version keeps, in the order label sets
// are compared.
var RecommendedLabels = []string{
	NameLabel, "app.kubernetes.io/version", "app.kubernetes.io/part-of",
	"app.kubernetes.io/instance", "helm.sh/chart",
}

// SplitImage splits an image reference into its repository, tag and digest:
// "registry:5000/a/b:v1@sha256:…" gives "registry:5000/a/b", "v1", "sha256:…". A reference
// they would not spell back exactly is kept whole as the repository.
func SplitImage(ref string) (repository, tag, digest string) {
	repository = ref
	if i := strings.IndexByte(repository, '@'); i >= 0 {
		repository, digest = repository[:i], repository[i+1:]
	}
	if i := strings.LastIndexByte(repository, ':'); i > strings.LastIndexByte(repository, '/') {
		repository, tag = repository[:i], repository[i+1:]
	}
	if repository == "" || joinImage(repository, tag, digest) != ref {
		return ref, "", ""
	}
	return repository, tag, digest
}

func joinImage(repository, tag, digest string) string {
	ref := repository
	if tag != "" {
		ref += ":" + tag
	}
	if digest != "" {
		ref += "@" + digest
	}
	return ref
}

// Reference is the image reference v of w spells: repository[:tag][@digest].
func (w WorkloadImage) Reference(v ImageVersion) string {
	return joinImage(w.Repository, v.Tag, v.Digest)
}

// MaxListedImages is how many image versions no bundle observes an inventory lists: the
// first in reference order; the containers running the others are counted in
// WorkloadImagesOmitted. A repository rendered for hundreds of services stays a few hundred
// kilobytes, and collecting it takes the same memory at 500,000 objects as at 20,000.
const MaxListedImages = 2000

// ImageWatch is what the bundles ask collectors to observe among images. A version of a
// repository with a path segment in Segments (the first segment of every add-on registry
// matcher), starting with one of Repositories (what custom packs declare), or seen with an
// app.kubernetes.io/name in Names is always listed, with its label sets and the workloads
// that run it. Others are listed with their namespaces only, up to MaxListedImages. The
// zero ImageWatch observes every image.
type ImageWatch struct {
	Segments map[string]bool
	Names    map[string]bool
	// Repositories are repository prefixes ("registry.example.com/payments/"); "*" is every
	// repository.
	Repositories []string
}

// Observes says whether a version of repository seen with labels is observed closely. It may
// say yes to images no matcher claims (the rules decide); never no to one a matcher could.
func (w ImageWatch) Observes(repository string, labels map[string]string) bool {
	if w.Segments == nil && w.Names == nil && w.Repositories == nil {
		return true
	}
	if name := labels[NameLabel]; name != "" && w.Names[name] {
		return true
	}
	for _, prefix := range w.Repositories {
		if prefix == "*" || strings.HasPrefix(repository, prefix) {
			return true
		}
	}
	repo := strings.ToLower(repository)
	if !strings.Contains(repo, "/") && w.Segments["library"] {
		return true // an official image: docker.io/library/<name>
	}
	for seg := range strings.SplitSeq(repo, "/") {
		if w.Segments[seg] {
			return true
		}
	}
	return false
}

// ObservesVersion is Observes for a version already in an inventory.
func (w ImageWatch) ObservesVersion(repository string, v ImageVersion) bool {
	if w.Observes(repository, nil) {
		return true
	}
	for _, l := range v.LabelSets {
		if w.Names[l[NameLabel]] {
			return true
		}
	}
	return false
}

// ImageSet groups the images of pod templates into repositories and versions, as collectors
// record them. Versions the watch observes are all kept; of the others, the MaxListedImages
// first in reference order, so its memory does not grow with the corpus.
type ImageSet struct {
	watch    ImageWatch
	versions map[string]*imageEntry // by reference
	interned map[string]string
	// unobserved holds the listed versions nobody observes, largest reference on top.
	unobserved refHeap
	omitted    int
}

type imageEntry struct {
	namespaces []string
	// seen holds namespaces for the lookup once there are many: one image run in every one
	// of 10,000 namespaces made scanning the list quadratic.
	seen              map[string]struct{}
	namespacesOmitted int
	observed          *observedImage
	sightings         int
}

// addNamespace names ns once, while fewer than MaxImageNamespaces are named; a sighting
// in a namespace past them is counted.
func (e *imageEntry) addNamespace(ns string, intern func(string) string) {
	if e.seen != nil {
		if _, ok := e.seen[ns]; ok {
			return
		}
	} else if containsString(e.namespaces, ns) {
		return
	}
	if len(e.namespaces) >= MaxImageNamespaces {
		e.namespacesOmitted++
		return
	}
	ns = intern(ns)
	e.namespaces = append(e.namespaces, ns)
	switch {
	case e.seen != nil:
		e.seen[ns] = struct{}{}
	case len(e.namespaces) > 16:
		e.seen = make(map[string]struct{}, len(e.namespaces))
		for _, n := range e.namespaces {
			e.seen[n] = struct{}{}
		}
	}
}

// observedImage is what an observed version keeps beyond its namespaces.
type observedImage struct {
	labelSets        []map[string]string
	labelKeys        map[string]bool
	labelSetsOmitted int
	objects          []ObjectRef
	objectsOmitted   int
}

// NewImageSet returns an empty set that observes what watch says.
func NewImageSet(watch ImageWatch) *ImageSet {
	return &ImageSet{watch: watch, versions: map[string]*imageEntry{}, interned: map[string]string{}}
}

// Add records image as seen in namespace by a workload whose recommended labels are labels;
// ref names the workload (nil when there is none to name).
func (s *ImageSet) Add(image, namespace string, labels map[string]string, ref *ObjectRef) {
	if len(image) > MaxStringLength {
		s.omitted++ // no registry serves such a reference; it cannot be listed as one
		return
	}
	namespace = BoundString(namespace)
	e := s.versions[image]
	switch {
	case e == nil:
		repo, _, _ := SplitImage(image)
		if e = s.admit(image, s.watch.Observes(repo, labels)); e == nil {
			s.omitted++
			return
		}
	case e.observed == nil && labels[NameLabel] != "" && s.watch.Names[labels[NameLabel]]:
		e.observed = &observedImage{labelKeys: map[string]bool{}} // a rebuilt add-on, known by its label
	}
	e.sightings++
	e.addNamespace(namespace, s.intern)
	if o := e.observed; o != nil {
		o.addLabels(labels)
		if ref != nil {
			if len(o.objects) < MaxImageObjectRefs {
				o.objects = append(o.objects, ref.bounded())
			} else {
				o.objectsOmitted++
			}
		}
	}
}

// admit makes room for a new version: an observed one always, another while fewer than
// MaxListedImages are listed or when it sorts before the last listed one, which gives way.
func (s *ImageSet) admit(image string, observed bool) *imageEntry {
	e := &imageEntry{}
	switch {
	case observed:
		e.observed = &observedImage{labelKeys: map[string]bool{}}
	case len(s.unobserved) < MaxListedImages:
		heap.Push(&s.unobserved, image)
	case image < s.unobserved[0]:
		if last := s.versions[s.unobserved[0]]; last.observed == nil {
			s.omitted += last.sightings
			delete(s.versions, s.unobserved[0])
		}
		s.unobserved[0] = image
		heap.Fix(&s.unobserved, 0)
	default:
		return nil
	}
	s.versions[image] = e
	return e
}

// Omitted is how many sightings (a container of a workload) were of versions not listed.
func (s *ImageSet) Omitted() int { return s.omitted }

// refHeap is a max-heap of references.
type refHeap []string

func (h refHeap) Len() int           { return len(h) }
func (h refHeap) Less(i, j int) bool { return h[i] > h[j] }
func (h refHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *refHeap) Push(x any)        { *h = append(*h, x.(string)) }
func (h *refHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func (o *observedImage) addLabels(labels map[string]string) {
	if len(labels) == 0 {
		return
	}
	var key strings.Builder
	for _, l := range RecommendedLabels {
		key.WriteString(labels[l])
		key.WriteByte(0)
	}
	if o.labelKeys[key.String()] {
		return
	}
	o.labelKeys[key.String()] = true
	if len(o.labelSets) < MaxLabelSets {
		o.labelSets = append(o.labelSets, boundedLabels(labels))
	} else {
		o.labelSetsOmitted++
	}
}

func (s *ImageSet) intern(v string) string {
	if i, ok := s.interned[v]; ok {
		return i
	}
	s.interned[v] = v
	return v
}

func containsString(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

// List returns the repositories sorted, each with its versions sorted by tag and digest and
// their namespaces sorted.
func (s *ImageSet) List() []WorkloadImage {
	refs := make([]string, 0, len(s.versions))
	for ref := range s.versions {
		refs = append(refs, ref)
	}
	type split struct{ ref, repo, tag, digest string }
	parts := make([]split, len(refs))
	for i, ref := range refs {
		repo, tag, digest := SplitImage(ref)
		parts[i] = split{ref, repo, tag, digest}
	}
	sort.Slice(parts, func(i, j int) bool {
		a, b := parts[i], parts[j]
		if a.repo != b.repo {
			return a.repo < b.repo
		}
		if a.tag != b.tag {
			return a.tag < b.tag
		}
		return a.digest < b.digest
	})
	var out []WorkloadImage
	for _, p := range parts {
		if len(out) == 0 || out[len(out)-1].Repository != p.repo {
			out = append(out, WorkloadImage{Repository: p.repo})
		}
		w := &out[len(out)-1]
		w.Versions = append(w.Versions, s.versions[p.ref].version(p.tag, p.digest))
	}
	return out
}

func (e *imageEntry) version(tag, digest string) ImageVersion {
	v := ImageVersion{Tag: tag, Digest: digest, Namespaces: append([]string(nil), e.namespaces...), NamespacesOmitted: e.namespacesOmitted}
	sort.Strings(v.Namespaces)
	if o := e.observed; o != nil {
		v.LabelSets, v.LabelSetsOmitted = o.labelSets, o.labelSetsOmitted
		v.Objects, v.ObjectsOmitted = o.objects, o.objectsOmitted
	}
	return v
}

// boundedLabels keeps a label set within the schema's bounds: at most MaxLabels labels (the
// recommended ones, by the caller), each key and value within MaxStringLength.
func boundedLabels(labels map[string]string) map[string]string {
	out := make(map[string]string, min(len(labels), MaxLabels))
	for k, v := range labels {
		if len(out) == MaxLabels {
			break
		}
		out[BoundString(k)] = BoundString(v)
	}
	return out
}
