package preflight

import (
	"math"
	"strings"

	"github.com/upgradescope/upgradescope/inventory"
)

// templateStore keeps the pod templates of a files walk for the budgets' join (Section):
// tens of thousands of them in a large repository, every one kept until the last file is
// read, for the few budgets it holds. They are kept without pointers, their strings back to
// back in one byte arena and their fields in fixed records, so the garbage collector neither
// scans them nor counts a header per string: in a walk paced by a soft memory limit, a live
// heap grown by a pointer per field made every collection slower and more frequent.
type templateStore struct {
	text    []byte
	records []templateRecord
	// files names the files records point into by index.
	files  []string
	fileAt map[string]int32
}

// templateRecord is one template: at is where its namespace, kind, name and packed labels
// start in the arena, each of the lengths given; file indexes the store's files.
type templateRecord struct {
	at                            uint32
	namespace, kind, name, labels uint32
	file, line, replicas          int32
}

// add keeps a template: the object, its labels (a map as decoded) and replicas. Past what
// the arena can address (4 GiB, far past the walk's byte budget) templates are no longer
// kept.
func (s *templateStore) add(ref inventory.ObjectRef, labels any, replicas int) {
	at := len(s.text)
	s.text = append(append(append(s.text, ref.Namespace...), ref.Kind...), ref.Name...)
	s.text = appendLabels(s.text, labels)
	if len(s.text) > math.MaxUint32 {
		s.text = s.text[:at]
		return
	}
	s.records = append(s.records, templateRecord{
		at: uint32(at), namespace: uint32(len(ref.Namespace)), kind: uint32(len(ref.Kind)), name: uint32(len(ref.Name)),
		labels: uint32(len(s.text) - at - len(ref.Namespace) - len(ref.Kind) - len(ref.Name)),
		file:   s.file(ref.File), line: int32(min(ref.Line, math.MaxInt32)), replicas: int32(min(replicas, math.MaxInt32)),
	})
}

func (s *templateStore) file(name string) int32 {
	i, ok := s.fileAt[name]
	if !ok {
		if s.fileAt == nil {
			s.fileAt = map[string]int32{}
		}
		i = int32(len(s.files))
		s.files = append(s.files, name)
		s.fileAt[name] = i
	}
	return i
}

// merge takes other's templates after s's.
func (s *templateStore) merge(other *templateStore) {
	if len(s.text)+len(other.text) > math.MaxUint32 {
		return
	}
	shift := uint32(len(s.text))
	s.text = append(s.text, other.text...)
	for _, r := range other.records {
		r.at += shift
		r.file = s.file(other.files[r.file])
		s.records = append(s.records, r)
	}
}

// template is one stored template read back.
type template struct {
	ref      inventory.ObjectRef
	labels   packedLabels
	replicas int
}

// inNamespaces reads back the templates of the namespaces in want, by namespace.
func (s *templateStore) inNamespaces(want map[string]bool) map[string][]template {
	out := map[string][]template{}
	for _, r := range s.records {
		at := r.at
		ns := string(s.text[at : at+r.namespace])
		if !want[ns] {
			continue
		}
		at += r.namespace
		kind := string(s.text[at : at+r.kind])
		at += r.kind
		name := string(s.text[at : at+r.name])
		at += r.name
		out[ns] = append(out[ns], template{
			ref:    inventory.ObjectRef{Kind: kind, Namespace: ns, Name: name, File: s.files[r.file], Line: int(r.line)},
			labels: packedLabels(s.text[at : at+r.labels]), replicas: int(r.replicas),
		})
	}
	return out
}

// appendLabels packs a label map as key NUL value NUL … after b. A label holding a NUL, or
// whose value is no string, is left out: the API server refuses it.
func appendLabels(b []byte, v any) []byte {
	m, _ := v.(map[string]any)
	for k, val := range m {
		if s, ok := val.(string); ok && strings.IndexByte(k, 0) < 0 && strings.IndexByte(s, 0) < 0 {
			b = append(append(append(append(b, k...), 0), s...), 0)
		}
	}
	return b
}

// packedLabels are appendLabels's bytes read as labels.Labels, for a selector to match
// without a map.
type packedLabels string

func (p packedLabels) Lookup(label string) (string, bool) {
	for s := string(p); s != ""; {
		k, rest, _ := strings.Cut(s, "\x00")
		v, next, _ := strings.Cut(rest, "\x00")
		if k == label {
			return v, true
		}
		s = next
	}
	return "", false
}

func (p packedLabels) Has(label string) bool {
	_, ok := p.Lookup(label)
	return ok
}

func (p packedLabels) Get(label string) string {
	v, _ := p.Lookup(label)
	return v
}
