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
	"slices"
	"strconv"
	"strings"
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
	p.walk(obj, 0, nil, &out)
	return out
}

func (p Path) walk(v any, i int, at []string, out *[]Match) {
	if v == nil {
		return // null is how JSON and YAML spell an unset field
	}
	if i == len(p.steps) {
		*out = append(*out, Match{Path: strings.Join(at, ""), Value: v})
		return
	}
	s := p.steps[i]
	switch {
	case s.all || s.prefix:
		eachChild(v, at, s, func(child any, at []string) { p.walk(child, i+1, at, out) })
	default:
		if m, ok := v.(map[string]any); ok {
			if child, ok := m[s.field]; ok {
				p.walk(child, i+1, append(at, s.segment(len(at) == 0)), out)
			}
		}
	}
}

// segment is how a field or key step shows in a concrete path: .field (field at the start of
// the path), or ["key"].
func (s step) segment(first bool) string {
	switch {
	case s.key:
		return "[" + strconv.Quote(s.field) + "]"
	case first:
		return s.field
	}
	return "." + s.field
}

// eachChild calls f with what a wildcard step s reaches in v, and the concrete path to it:
// for [*] every element of a list or every value of a map, for [^"prefix"] every value of a
// map whose key starts with the prefix, map values in key order. It answers false when v is
// not a collection the step steps into.
func eachChild(v any, at []string, s step, f func(child any, at []string)) bool {
	switch c := v.(type) {
	case []any:
		if s.prefix {
			return false
		}
		for n, child := range c {
			f(child, append(at, "["+strconv.Itoa(n)+"]"))
		}
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(c)) {
			if !s.prefix || strings.HasPrefix(k, s.field) {
				f(c[k], append(at, "["+strconv.Quote(k)+"]"))
			}
		}
	default:
		return false
	}
	return true
}

// Missing answers where the path falls short in obj: for every branch the wildcards open, the
// concrete path of the deepest value reached when the next step finds nothing there ("" for
// obj itself), in document order. A wildcard over an empty list or map opens no branch, so
// "every container has resources.limits" holds for a pod with no containers listed but not
// for one without a containers field. It is the complement of Find per branch: a path can be
// both found (in one container) and missing (in another).
func (p Path) Missing(obj any) []string {
	var out []string
	p.missing(obj, 0, nil, &out)
	return out
}

func (p Path) missing(v any, i int, at []string, out *[]string) {
	if i == len(p.steps) {
		if v == nil {
			*out = append(*out, strings.Join(at[:len(at)-1], ""))
		}
		return
	}
	s := p.steps[i]
	if s.all || s.prefix {
		if !eachChild(v, at, s, func(child any, at []string) { p.missing(child, i+1, at, out) }) {
			*out = append(*out, strings.Join(at, ""))
		}
		return
	}
	m, _ := v.(map[string]any)
	child, ok := m[s.field]
	if !ok || child == nil {
		*out = append(*out, strings.Join(at, ""))
		return
	}
	p.missing(child, i+1, append(at, s.segment(len(at) == 0)), out)
}
