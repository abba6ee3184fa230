package preflight

import (
	yaml "go.yaml.in/yaml/v3"
)

// source is an object's text as written, for the lines of the flags and fields a component
// is configured with. Only components read it: parsing it again costs nothing beside the
// few objects that are control-plane manifests or configuration files.
type source struct {
	text []byte
	// first is the line of text's first line in the file; objLine the line of the object's
	// apiVersion or kind, by which the object is found in text (a List holds many).
	first, objLine int
}

// maxLocateNodes bounds the nodes object visits to find the object in its text.
const maxLocateNodes = 1 << 20

// maxAliases bounds the aliases followed on one path.
const maxAliases = 16

// located is an object's node in its text; line turns a node's line into the file's.
type located struct {
	node   *yaml.Node
	offset int
}

// object finds the object's mapping in the text: the mapping whose apiVersion or kind key
// (or value) is on the object's line. It answers nil when there is no text or no such
// mapping; the object's fields then have no line of their own.
func (s source) object() *located {
	if len(s.text) == 0 || s.objLine < 1 {
		return nil
	}
	var root yaml.Node
	if yaml.Unmarshal(s.text, &root) != nil {
		return nil
	}
	offset := s.first - 1
	budget := maxLocateNodes
	var find func(n *yaml.Node) *yaml.Node
	find = func(n *yaml.Node) *yaml.Node {
		if budget--; budget < 0 || n == nil {
			return nil
		}
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				if (k.Value == "apiVersion" || k.Value == "kind") && (k.Line+offset == s.objLine || v.Line+offset == s.objLine) {
					return n
				}
			}
		}
		if n.Kind == yaml.AliasNode {
			return nil // an alias repeats a node found where it is defined
		}
		for _, c := range n.Content {
			if found := find(c); found != nil {
				return found
			}
		}
		return nil
	}
	if n := find(&root); n != nil {
		return &located{node: n, offset: offset}
	}
	return nil
}

// at walks the located object along path: map keys as strings, sequence indices as ints.
// It answers nil where the path leaves what the text writes plainly (a merge key, a bound
// on aliases).
func (l *located) at(path ...any) *yaml.Node {
	if l == nil {
		return nil
	}
	n := l.node
	for _, p := range path {
		n = resolve(n)
		if n == nil {
			return nil
		}
		switch p := p.(type) {
		case string:
			n = child(n, p)
		case int:
			if n.Kind != yaml.SequenceNode || p < 0 || p >= len(n.Content) {
				return nil
			}
			n = n.Content[p]
		}
	}
	return n
}

// line is the file line of the node at path, 0 when it cannot be told.
func (l *located) line(path ...any) int {
	n := l.at(path...)
	if n == nil || n.Line < 1 {
		return 0
	}
	return n.Line + l.offset
}

// keyLine is the file line of the key at the end of path, 0 when it cannot be told.
func (l *located) keyLine(path ...any) int {
	if len(path) == 0 {
		return 0
	}
	key, ok := path[len(path)-1].(string)
	parent := resolve(l.at(path[:len(path)-1]...))
	if !ok || parent == nil || parent.Kind != yaml.MappingNode {
		return 0
	}
	line := 0
	for i := 0; i+1 < len(parent.Content); i += 2 {
		if k := parent.Content[i]; k.Kind == yaml.ScalarNode && k.Value == key {
			line = k.Line + l.offset
		}
	}
	return line
}

// child is a mapping's value for key, the last occurrence winning as Kubernetes decodes
// duplicates.
func child(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	var found *yaml.Node
	for i := 0; i+1 < len(m.Content); i += 2 {
		if k := m.Content[i]; k.Kind == yaml.ScalarNode && k.Value == key {
			found = m.Content[i+1]
		}
	}
	return found
}

// resolve follows aliases, up to maxAliases of them.
func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode; i++ {
		if i == maxAliases {
			return nil
		}
		n = n.Alias
	}
	if n != nil && n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		return n.Content[0]
	}
	return n
}
