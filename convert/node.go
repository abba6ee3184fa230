package convert

import (
	"fmt"
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

// isInt says whether a scalar holds an integer (servicePort: 80, 0x50) rather than a name
// ("http", "80"): what the YAML reader resolves to an int32, whatever base it is written in.
func isInt(n *yaml.Node) bool {
	if n == nil || n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" {
		return false
	}
	var i int32
	return n.Decode(&i) == nil
}

// deepCopy copies a tree that holds no aliases (a subtree of an object copyObject made).
func deepCopy(n *yaml.Node) *yaml.Node {
	c := &copier{left: -1, busy: map[*yaml.Node]bool{}}
	return c.node(n, false)
}

// maxCopyNodes bounds an object's copy once its aliases are expanded, as the file collector
// bounds a parse: a few aliases of aliases name millions of nodes in a few lines.
const maxCopyNodes = 300_000

// copyObject copies obj for a step to edit, every alias replaced by a copy of the node it
// names, since the steps read fields as written. It refuses what would not end (an alias
// inside the node it names, more than maxCopyNodes nodes) and, unless allowMerge, a merge key
// (<<): the steps would not see its fields where the API server's reader puts them.
func copyObject(obj *yaml.Node, allowMerge bool) (*yaml.Node, error) {
	c := &copier{left: maxCopyNodes, busy: map[*yaml.Node]bool{}}
	out := c.node(obj, false)
	switch {
	case c.merge != nil && !allowMerge:
		return nil, fmt.Errorf("line %d: a merge key (<<) brings in fields the conversion would not see: write them out in place first", c.merge.Line)
	case c.cycle != nil:
		return nil, fmt.Errorf("line %d: the alias *%s names a node that contains it, which no object can hold", c.cycle.Line, c.cycle.Value)
	case c.left == 0:
		return nil, fmt.Errorf("the object is over %d nodes once its aliases are expanded", maxCopyNodes)
	}
	return out, nil
}

// copier copies a node tree. left counts the nodes it may still copy (-1: no bound); merge and
// cycle are the first merge key and the first alias inside its own anchor it met.
type copier struct {
	left         int
	busy         map[*yaml.Node]bool // anchored nodes being copied
	merge, cycle *yaml.Node
}

// node copies n. A copy made through an alias loses its anchors, which the original still
// defines: the encoder would define each of them twice.
func (c *copier) node(n *yaml.Node, viaAlias bool) *yaml.Node {
	if n == nil || c.left == 0 || c.busy[n] {
		return nil
	}
	if n.Kind == yaml.AliasNode {
		if n.Alias == nil || c.busy[n.Alias] {
			c.cycle, c.left = n, 0
			return nil
		}
		return c.node(n.Alias, true)
	}
	if c.left > 0 {
		c.left--
	}
	if n.Kind == yaml.MappingNode && c.merge == nil {
		for i := 0; i < len(n.Content); i += 2 {
			if k := n.Content[i]; k.Kind == yaml.ScalarNode && k.Tag == "!!merge" && c.merge == nil {
				c.merge = k
			}
		}
	}
	cp := *n
	if viaAlias {
		cp.Anchor = ""
	}
	c.busy[n] = true
	cp.Content = make([]*yaml.Node, len(n.Content))
	for i, ch := range n.Content {
		cp.Content[i] = c.node(ch, viaAlias)
	}
	delete(c.busy, n)
	return &cp
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
