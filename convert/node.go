package convert

import (
	"strconv"

	yaml "go.yaml.in/yaml/v3"
)

// The helpers below read and edit block mappings in place. A nil mapping reads as empty and
// ignores edits, so a step can walk optional fields without checks at every level.

// get is the value of key in mapping m, or nil.
func get(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// getPath follows keys from m.
func getPath(m *yaml.Node, keys ...string) *yaml.Node {
	for _, k := range keys {
		m = get(m, k)
	}
	return m
}

// keyNode is the key node of key in m, or nil: its Line is where the field is written.
func keyNode(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i]
		}
	}
	return nil
}

func lineOf(m *yaml.Node, key string) int {
	if k := keyNode(m, key); k != nil {
		return k.Line
	}
	return 0
}

func scalarAt(m *yaml.Node, key string) string {
	if v := get(m, key); v != nil && v.Kind == yaml.ScalarNode {
		return v.Value
	}
	return ""
}

// set replaces key's value in m, or appends key: value at the end of m.
func set(m *yaml.Node, key string, v *yaml.Node) {
	if m == nil || m.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1] = v
			return
		}
	}
	m.Content = append(m.Content, str(key), v)
}

// setAfter sets key like set, but a new key goes right after the key named after (or at the
// end when after is absent), where a reader expects it.
func setAfter(m *yaml.Node, after, key string, v *yaml.Node) {
	if get(m, key) != nil || m == nil || m.Kind != yaml.MappingNode {
		set(m, key, v)
		return
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == after {
			rest := append([]*yaml.Node{str(key), v}, m.Content[i+2:]...)
			m.Content = append(m.Content[:i+2], rest...)
			return
		}
	}
	set(m, key, v)
}

// setScalar changes a scalar's value in place, keeping its style (quoting), or adds it.
func setScalar(m *yaml.Node, key, value string) {
	if v := get(m, key); v != nil && v.Kind == yaml.ScalarNode {
		v.Value, v.Tag = value, "!!str"
		return
	}
	set(m, key, str(value))
}

// rename renames key in place, keeping its position, value and comments. It reports whether
// key was there.
func rename(m *yaml.Node, from, to string) bool {
	k := keyNode(m, from)
	if k == nil {
		return false
	}
	k.Value = to
	return true
}

// del removes key from m and returns its value, or nil.
func del(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			v := m.Content[i+1]
			m.Content = append(m.Content[:i], m.Content[i+2:]...)
			return v
		}
	}
	return nil
}

// mapping builds a block mapping from key, value pairs.
func mapping(kv ...any) *yaml.Node {
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	for i := 0; i+1 < len(kv); i += 2 {
		m.Content = append(m.Content, str(kv[i].(string)), kv[i+1].(*yaml.Node))
	}
	return m
}

func str(s string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s} }

func integer(n int64) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.FormatInt(n, 10)}
}

func boolean(b bool) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(b)}
}

// isInt says whether a scalar holds an integer (servicePort: 80) rather than a name ("http").
func isInt(n *yaml.Node) bool {
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag == "!!str" && n.Style != 0 {
		return false
	}
	_, err := strconv.ParseInt(n.Value, 10, 32)
	return err == nil
}

// deepCopy copies a node tree; aliases are copied as the nodes they point at.
func deepCopy(n *yaml.Node) *yaml.Node {
	if n == nil {
		return nil
	}
	c := *n
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		return deepCopy(n.Alias)
	}
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, ch := range n.Content {
		c.Content[i] = deepCopy(ch)
	}
	return &c
}

// each calls fn for every item of a sequence.
func each(seq *yaml.Node, fn func(i int, item *yaml.Node)) {
	if seq == nil || seq.Kind != yaml.SequenceNode {
		return
	}
	for i, it := range seq.Content {
		fn(i, it)
	}
}

// setBefore sets key like set, but a new key goes right before the key named before (or at
// the end when before is absent): a defaulted selector reads above the template it copies.
func setBefore(m *yaml.Node, before, key string, v *yaml.Node) {
	if get(m, key) != nil || m == nil || m.Kind != yaml.MappingNode {
		set(m, key, v)
		return
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == before {
			rest := append([]*yaml.Node{str(key), v}, m.Content[i:]...)
			m.Content = append(m.Content[:i], rest...)
			return
		}
	}
	set(m, key, v)
}

// ensure is the mapping at key in m, made (after the key named after) when absent.
func ensure(m *yaml.Node, after, key string) *yaml.Node {
	if v := get(m, key); v != nil {
		return v
	}
	v := mapping()
	setAfter(m, after, key, v)
	return v
}

// isEmpty says whether n is absent, null, or an empty mapping or sequence.
func isEmpty(n *yaml.Node) bool {
	return n == nil || n.Tag == "!!null" || (n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode) && len(n.Content) == 0
}

// flow marks a new mapping or sequence to be written inline ({a: 1}, [x]).
func flow(n *yaml.Node) *yaml.Node {
	n.Style = yaml.FlowStyle
	return n
}

// setFirst sets key like set, but a new key goes first in m.
func setFirst(m *yaml.Node, key string, v *yaml.Node) {
	if get(m, key) != nil || m == nil || m.Kind != yaml.MappingNode || len(m.Content) == 0 {
		set(m, key, v)
		return
	}
	setBefore(m, m.Content[0].Value, key, v)
}
