// Package convert rewrites an object written at an API version the target does not serve into
// the version that replaces it, field by field as the API server's own conversion does. It
// works on YAML nodes, so that what a step does not touch keeps its comments, order and
// quoting. The knowledge base says which version replaces which; this package does no I/O.
package convert

import (
	"fmt"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/kb"
)

// GVK is an object's group, version and kind; Group is "" for the core group.
type GVK struct{ Group, Version, Kind string }

// ParseGVK splits an apiVersion ("networking.k8s.io/v1", "v1") and pairs it with kind.
func ParseGVK(apiVersion, kind string) GVK {
	group, version, ok := strings.Cut(apiVersion, "/")
	if !ok {
		return GVK{Version: apiVersion, Kind: kind}
	}
	return GVK{Group: group, Version: version, Kind: kind}
}

// APIVersion is the apiVersion a manifest writes.
func (g GVK) APIVersion() string {
	if g.Group == "" {
		return g.Version
	}
	return g.Group + "/" + g.Version
}

// Key is the knowledge base's key ("core/v1/Pod", "extensions/v1beta1/Ingress").
func (g GVK) Key() string {
	group := g.Group
	if group == "" {
		group = "core"
	}
	return group + "/" + g.Version + "/" + g.Kind
}

func (g GVK) String() string { return g.APIVersion() + " " + g.Kind }

// Remark is something a reader of the conversion must know, at a field of the object.
type Remark struct {
	// Path is the field as a JSON pointer into the object ("/spec/selector"); "" for the object.
	Path string `json:"path,omitempty"`
	// Line is the line of the field in the document the object was read from (the node's
	// line), 0 when the field is not in it.
	Line    int    `json:"line,omitempty"`
	Message string `json:"message"`
}

// Outcome is what Object did with one object.
type Outcome struct {
	From GVK `json:"from"`
	// To is the version the target serves in place of From; Via the versions passed on the way.
	To  GVK   `json:"to"`
	Via []GVK `json:"via,omitempty"`
	// Object is the converted object: a new mapping node, the input untouched. Nil when Manual
	// is set.
	Object *yaml.Node `json:"-"`
	// Notes say what changed beyond renamed fields (a default of the old version written out
	// because the new one defaults otherwise, a field moved): the conversion is still exact.
	Notes []Remark `json:"notes,omitempty"`
	// Manual says what needs a choice by a person (a field the new version dropped, a field whose
	// meaning changed, no replacement): the object is left as it was.
	Manual []Remark `json:"manual,omitempty"`
}

// State is one step's view of the object being converted.
type State struct {
	// Obj is the object's mapping node, a copy the step edits in place.
	Obj    *yaml.Node
	From   GVK
	To     GVK
	notes  []Remark
	manual []Remark
}

// Note records a remark about an exact conversion. at is the node whose line it names; a node
// a step made has none, and the object's line is named instead.
func (s *State) Note(path string, at *yaml.Node, format string, args ...any) {
	s.notes = append(s.notes, remark(path, firstWritten(at, s.Obj), format, args...))
}

// Manual records what needs a person; the object will be left untouched. at is as for Note.
func (s *State) Manual(path string, at *yaml.Node, format string, args ...any) {
	s.manual = append(s.manual, remark(path, firstWritten(at, s.Obj), format, args...))
}

func remark(path string, at *yaml.Node, format string, args ...any) Remark {
	r := Remark{Path: path, Message: fmt.Sprintf(format, args...)}
	if at != nil {
		r.Line = at.Line
	}
	return r
}

// Step converts an object from one version to the next in place. It never sets apiVersion or
// kind: Object does, after the step.
type Step func(s *State)

// steps holds the registered conversions by (from, to) knowledge-base keys.
var steps = map[[2]string]Step{}

// register adds the step for one pair of knowledge-base keys ("extensions/v1beta1/Ingress",
// "networking.k8s.io/v1/Ingress"). Registering a pair twice is a programming error.
func register(from, to string, step Step) {
	k := [2]string{from, to}
	if _, dup := steps[k]; dup {
		panic("convert: two steps for " + from + " → " + to)
	}
	steps[k] = step
}

// Served says whether target (a minor, "1.37") serves the API entry.
func Served(e kb.APIEntry, target string) bool {
	t, err := inventory.ParseVersion(target)
	if err != nil {
		return false
	}
	if e.Introduced != "" {
		if v, err := inventory.ParseVersion(e.Introduced); err == nil && v.LaterMinor(t) {
			return false
		}
	}
	if e.Removed != "" {
		if v, err := inventory.ParseVersion(e.Removed); err == nil && !v.LaterMinor(t) {
			return false
		}
	}
	return true
}

// Lookup says whether the knowledge base describes apiVersion/kind, and whether target serves
// it when it does: what fix and the rehearsal's live collection ask of every object.
func Lookup(k *kb.KB, apiVersion, kind, target string) (known, served bool) {
	e, ok := k.API(ParseGVK(apiVersion, kind).Key())
	if !ok {
		return false, false
	}
	return true, Served(e, target)
}

// Route is the chain of replacements the knowledge base lists from an API the target does not
// serve to the first one it does: FlowSchema v1beta1 → v1beta3 → v1 for 1.37. It is empty when
// target serves from (nothing to do), and an error when the chain ends without a served API
// (no replacement) or the knowledge base does not know from.
func Route(k *kb.KB, from GVK, target string) ([]GVK, error) {
	e, ok := k.API(from.Key())
	if !ok {
		return nil, errUnknown
	}
	var chain []GVK
	for !Served(e, target) {
		if e.Replacement == "" || len(chain) > 8 {
			return nil, fmt.Errorf("%s has no replacement served by %s", GVK{e.Group, e.Version, e.Kind}, target)
		}
		g, v, kind := e.ReplacementGVK()
		next := GVK{g, v, kind}
		chain = append(chain, next)
		if e, ok = k.API(next.Key()); !ok {
			return nil, fmt.Errorf("the knowledge base lists %s as a replacement but does not describe it", next)
		}
	}
	return chain, nil
}

// errUnknown is Route's answer for an API the knowledge base does not describe (custom
// resources, or a built-in API served by every target).
var errUnknown = fmt.Errorf("not in the knowledge base")

// Object converts obj (a document's top mapping node) to the version target serves, along
// Route. The input is not changed. An object whose API target serves, or which the knowledge
// base does not know, comes back with a zero Outcome (To == From, Object nil).
func Object(k *kb.KB, obj *yaml.Node, target string) Outcome {
	from := ParseGVK(scalarAt(obj, "apiVersion"), scalarAt(obj, "kind"))
	out := Outcome{From: from, To: from}
	chain, err := Route(k, from, target)
	switch {
	case err == errUnknown || err == nil && len(chain) == 0:
		return out
	case err != nil:
		out.Manual = []Remark{{Line: lineOf(obj, "apiVersion"), Message: err.Error()}}
		return out
	}
	copied, err := copyObject(obj, false)
	if err != nil {
		out.Manual = []Remark{{Line: obj.Line, Message: err.Error()}}
		return out
	}
	s := &State{Obj: copied, From: from}
	s.follow(chain)
	out.To, out.Notes, out.Manual = chain[len(chain)-1], s.notes, s.manual
	if len(chain) > 1 {
		out.Via = chain[:len(chain)-1]
	}
	if len(out.Manual) == 0 {
		out.Object = s.Obj
	}
	return out
}

// follow runs the step of every pair along chain, then refuses a result that writes a key
// twice in one mapping: a step renames a field or adds one the object already wrote (both
// serviceName and service), and the API server would refuse the document.
func (s *State) follow(chain []GVK) {
	for _, next := range chain {
		step, ok := steps[[2]string{s.From.Key(), next.Key()}]
		if !ok {
			s.Manual("", s.Obj, "no conversion from %s to %s is known", s.From, next)
			return
		}
		s.To = next
		step(s)
		setScalar(s.Obj, "apiVersion", next.APIVersion())
		if next.Kind != s.From.Kind {
			setScalar(s.Obj, "kind", next.Kind)
		}
		s.From = next
	}
	if k := duplicateKey(s.Obj); k != nil {
		s.Manual("", k, "the converted object would write %q twice in one mapping: the object sets both a field and the one it becomes in %s (or sets one twice); keep one of them", k.Value, s.To.APIVersion())
	}
}

// duplicateKey is the first scalar key written twice in a mapping of the tree n, preferring
// the one the document wrote (a line), or nil.
func duplicateKey(n *yaml.Node) *yaml.Node {
	if n.Kind == yaml.MappingNode {
		seen := map[string]*yaml.Node{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode {
				continue
			}
			if first, ok := seen[k.Value]; ok {
				if w := firstWritten(first, k); w != nil {
					return w
				}
				return k
			}
			seen[k.Value] = k
		}
	}
	for _, c := range n.Content {
		if d := duplicateKey(c); d != nil {
			return d
		}
	}
	return nil
}
