// Package probe holds the field paths probes observe in Kubernetes objects: a small path
// language over an object as JSON decodes it (maps, lists, scalars), with wildcards over lists
// and maps and map keys by name, so that a label or annotation key with dots and slashes can
// be named.
//
//	spec.template.spec.volumes[*].hostPath.path
//	metadata.annotations["kubernetes.io/ingress.class"]
//	spec.template.spec.containers[*].env[*].name
//	metadata.labels[*]
//	metadata.annotations[^"container.apparmor.security.beta.kubernetes.io/"]
//
// A path is field names joined by dots; after a name, [*] steps into every element of a list
// or every value of a map (in key order), ["key"] into one key of a map, and [^"prefix"] into
// every value of a map whose key starts with prefix (in key order: per-container annotations). Field names are
// what Kubernetes uses: letters, digits, '_' and '-'. A path that meets something else than
// it expects (a list where it names a field, a scalar before its end) matches nothing there.
package probe

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/upgradescope/upgradescope/inventory"
)

// Path is a parsed field path.
type Path struct {
	text  string
	steps []step
}

type step struct {
	field  string // a field name, or a map key with key set
	key    bool
	all    bool // [*]
	prefix bool // [^"prefix"], the prefix in field
}

// maxPathSteps bounds a path: a probe is data from a bundle, and no Kubernetes field is nested
// this deep.
const maxPathSteps = 64

// ParsePath parses a path; errors name the offset where it stops making sense.
func ParsePath(text string) (Path, error) {
	p := Path{text: text}
	rest := text
	for first := true; ; first = false {
		if !first {
			if rest == "" {
				break
			}
			if rest[0] != '.' {
				return Path{}, pathError(text, rest, "want '.' between fields")
			}
			rest = rest[1:]
		}
		name := fieldName(rest)
		if name == "" {
			return Path{}, pathError(text, rest, "want a field name")
		}
		p.steps = append(p.steps, step{field: name})
		rest = rest[len(name):]
		for strings.HasPrefix(rest, "[") {
			s, n, err := bracket(rest)
			if err != nil {
				return Path{}, pathError(text, rest, err.Error())
			}
			p.steps = append(p.steps, s)
			rest = rest[n:]
		}
		if len(p.steps) > maxPathSteps {
			return Path{}, fmt.Errorf("path %q: more than %d steps", text, maxPathSteps)
		}
	}
	return p, nil
}

// MustParsePath is ParsePath for paths written in code.
func MustParsePath(text string) Path {
	p, err := ParsePath(text)
	if err != nil {
		panic(err)
	}
	return p
}

func (p Path) String() string { return p.text }

func fieldName(s string) string {
	end := strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-')
	})
	if end < 0 {
		return s
	}
	return s[:end]
}

// bracket reads [*], ["key"] or [^"prefix"] (Go string syntax, so a key may hold any
// character) at the start of s, and answers its step and length.
func bracket(s string) (step, int, error) {
	if strings.HasPrefix(s, "[*]") {
		return step{all: true}, 3, nil
	}
	open := 1
	if strings.HasPrefix(s, "[^") {
		open = 2
	}
	if len(s) <= open || s[open] != '"' {
		return step{}, 0, fmt.Errorf(`want [*], ["key"] or [^"prefix"]`)
	}
	quoted, err := strconv.QuotedPrefix(s[open:])
	if err != nil || !strings.HasPrefix(s[open+len(quoted):], "]") {
		return step{}, 0, fmt.Errorf(`want ["key"] or [^"prefix"] with the key in double quotes`)
	}
	key, _ := strconv.Unquote(quoted)
	if open == 2 {
		if key == "" {
			return step{}, 0, fmt.Errorf(`an empty prefix: write [*] for every value`)
		}
		return step{field: key, prefix: true}, len(quoted) + 3, nil
	}
	return step{field: key, key: true}, len(quoted) + 2, nil
}

func pathError(text, rest, msg string) error {
	return fmt.Errorf("path %q at offset %d: %s", text, len(text)-len(rest), msg)
}

// Match is a value a path found, with the concrete path to it
// (spec.volumes[2].hostPath.path, metadata.annotations["a/b"]), for display: a list index
// is not path syntax, so it does not parse back.
type Match struct {
	Path  string
	Value any
}

// Find answers every value the path reaches in obj, in document order (map values in key
// order). A null is not a value: a field set to null is unset.
func (p Path) Find(obj any) []Match {
	var out []Match
	p.walk(obj, 0, []seg{}, nil, func(v any, at []seg) {
		out = append(out, Match{Path: pathText(at, nil, false), Value: v})
	})
	return out
}

// seg is one step of a concrete path, spelt only when the path is shown (pathText): a walk
// that only needs the values spells none.
type seg struct {
	name  string // a field, or a map key with key set
	index int    // a list index, with isIndex
	key   bool
	isIdx bool
}

// walk calls found with every value the path reaches in v from step i on, in document order,
// with the concrete path to it (at, valid during the call; nil when at was nil, for a walk
// that only needs the values); it stops when m says so.
func (p Path) walk(v any, i int, at []seg, m *meter, found func(v any, at []seg)) {
	if v == nil || !m.charge(1) {
		return // null is how JSON and YAML spell an unset field
	}
	if i == len(p.steps) {
		found(v, at)
		return
	}
	s := p.steps[i]
	switch {
	case s.all || s.prefix:
		eachChild(v, at, s, m, func(child any, at []seg) { p.walk(child, i+1, at, m, found) })
	default:
		if mp, ok := v.(map[string]any); ok {
			if child, ok := mp[s.field]; ok {
				p.walk(child, i+1, extend(at, seg{name: s.field, key: s.key}), m, found)
			}
		}
	}
}

// eachChild calls f with what a wildcard step s reaches in v, and the concrete path to it:
// for [*] every element of a list or every value of a map, for [^"prefix"] every value of a
// map whose key starts with the prefix, map values in key order. It answers false when v is
// not a collection the step steps into.
func eachChild(v any, at []seg, s step, m *meter, f func(child any, at []seg)) bool {
	switch c := v.(type) {
	case []any:
		if s.prefix {
			return false
		}
		for n, child := range c {
			if m.done() {
				break
			}
			f(child, extend(at, seg{index: n, isIdx: true}))
		}
	case map[string]any:
		for _, k := range sortedKeys(c, m) {
			if m.done() {
				break
			}
			if !s.prefix || strings.HasPrefix(k, s.field) {
				f(c[k], extend(at, seg{name: k, key: true}))
			}
		}
	default:
		return false
	}
	return true
}

// keyOrder holds the sorted keys of the large maps of the object being observed, which every
// probe stepping into them would otherwise sort again (50 probes over one ConfigMap's data
// sorted its 20,000 keys 50 times, half their matching).
type keyOrder map[unsafe.Pointer][]string

// extend is at followed by sg, or nil when at is: the walk spells no path.
func extend(at []seg, sg seg) []seg {
	if at == nil {
		return nil
	}
	return append(at, sg)
}

// sortedKeys answers the keys of c in order, the sort charged to m; none once m says stop.
func sortedKeys(c map[string]any, m *meter) []string {
	const cached = 64 // keys: smaller maps sort faster than they are looked up
	if m != nil && m.keys != nil && len(c) >= cached {
		if keys, ok := m.keys[reflect.ValueOf(c).UnsafePointer()]; ok {
			return keys
		}
	}
	n := 0
	for k := range c {
		n += len(k)
	}
	if !m.chargeSort(len(c), n) {
		return nil
	}
	keys := slices.Sorted(maps.Keys(c))
	if m != nil && m.keys != nil && len(c) >= cached {
		m.keys[reflect.ValueOf(c).UnsafePointer()] = keys
	}
	return keys
}

// Missing answers where the path falls short in obj: for every branch the wildcards open, the
// concrete path of the deepest value reached when the next step finds nothing there ("" for
// obj itself), in document order. A wildcard over an empty list or map opens no branch, so
// "every container has resources.limits" holds for a pod with no containers listed but not
// for one without a containers field. It is the complement of Find per branch: a path can be
// both found (in one container) and missing (in another).
func (p Path) Missing(obj any) []string {
	var out []string
	p.missing(obj, 0, []seg{}, nil, func(at []seg) { out = append(out, pathText(at, nil, false)) })
	return out
}

// missing calls short with the concrete path of every branch where the path falls short in v
// from step i on, in document order; it stops when m says so.
func (p Path) missing(v any, i int, at []seg, m *meter, short func(at []seg)) {
	if !m.charge(1) {
		return
	}
	if i == len(p.steps) {
		if v == nil {
			short(at[:max(len(at)-1, 0)])
		}
		return
	}
	s := p.steps[i]
	if s.all || s.prefix {
		if !eachChild(v, at, s, m, func(child any, at []seg) { p.missing(child, i+1, at, m, short) }) {
			short(at)
		}
		return
	}
	mp, _ := v.(map[string]any)
	child, ok := mp[s.field]
	if !ok || child == nil {
		short(at)
		return
	}
	p.missing(child, i+1, extend(at, seg{name: s.field, key: s.key}), m, short)
}

// pathText spells a concrete path: .field (field at the start of the path), ["key"], [n].
// Bounded, it is cut to inventory.MaxStringLength characters and written only that far, each
// key cut before it is quoted, so a path down long keys costs no more than its first
// characters; the writing is charged to m.
func pathText(at []seg, m *meter, bounded bool) string {
	var b strings.Builder
	for i, sg := range at {
		if bounded && b.Len() >= utf8.UTFMax*inventory.MaxStringLength {
			break
		}
		switch {
		case sg.isIdx:
			b.WriteString("[" + strconv.Itoa(sg.index) + "]")
		case sg.key:
			name := sg.name
			if bounded {
				name = inventory.BoundString(name)
			}
			b.WriteString("[" + strconv.Quote(name) + "]")
		case i == 0:
			b.WriteString(sg.name)
		default:
			b.WriteString("." + sg.name)
		}
	}
	m.chargeBytes(b.Len())
	if !bounded {
		return b.String()
	}
	return inventory.BoundString(b.String())
}
