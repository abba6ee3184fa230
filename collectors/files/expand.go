package files

import (
	"bytes"

	yaml "go.yaml.in/yaml/v3"
)

// maxExpandWork bounds the nodes visited and keys copied while aliases and merge keys are
// expanded in one document: the parse's own node bound, as expanding a document that uses
// neither visits each node once. A lattice of merge keys (8 levels of 30 aliases in 1.5 KB)
// costs a few thousand steps here, where following every path through it would cost 30^8.
const maxExpandWork = MaxDocumentNodes

// expander turns a parsed document into the tree kubectl's reader sees (sigs.k8s.io/yaml,
// whose YAML 1.1 decoder turns each document into JSON before anything reads it): every alias
// replaced by the node it names, and every merge key (<<) expanded where it stands. Keys are
// set in document order, the last to set a key winning, so a merge key overrides the keys
// before it; of a sequence of merged mappings, the first takes precedence. Each anchored
// node is expanded once, whatever the number of aliases naming it.
type expander struct {
	work    int
	done    map[*yaml.Node]*yaml.Node
	busy    map[*yaml.Node]bool // anchored nodes being expanded: an alias to one is a cycle
	stopped bool                // past maxExpandWork, or a cycle: the document is not read
}

// expand returns n as kubectl's reader sees it, or ok false when that could not be worked
// out within the bound. Text without an alias or a merge key is returned as it is.
func expand(n *yaml.Node, text []byte) (_ *yaml.Node, ok bool) {
	if n == nil || bytes.IndexByte(text, '*') < 0 && bytes.IndexByte(text, '<') < 0 {
		return n, true
	}
	e := &expander{work: maxExpandWork, done: map[*yaml.Node]*yaml.Node{}, busy: map[*yaml.Node]bool{}}
	out := e.node(n)
	return out, !e.stopped
}

func (e *expander) spend(n int) bool {
	e.work -= n
	if e.work < 0 {
		e.stopped = true
	}
	return !e.stopped
}

func (e *expander) node(n *yaml.Node) *yaml.Node {
	if n == nil || !e.spend(1) {
		return nil
	}
	if n.Kind == yaml.AliasNode {
		return e.node(n.Alias)
	}
	if n.Anchor == "" {
		return e.expandNode(n)
	}
	if out, ok := e.done[n]; ok {
		return out
	}
	if e.busy[n] {
		e.stopped = true // an alias inside the node it names: no JSON has that shape
		return nil
	}
	e.busy[n] = true
	out := e.expandNode(n)
	delete(e.busy, n)
	e.done[n] = out
	return out
}

func (e *expander) expandNode(n *yaml.Node) *yaml.Node {
	switch n.Kind {
	case yaml.MappingNode:
		if hasMergeKey(n) {
			return e.merged(n)
		}
		return e.children(n)
	case yaml.SequenceNode, yaml.DocumentNode:
		return e.children(n)
	default:
		return n
	}
}

// children expands a node's children, copying the node only when one of them changed.
func (e *expander) children(n *yaml.Node) *yaml.Node {
	var out *yaml.Node
	for i, c := range n.Content {
		x := e.node(c)
		if x == c || e.stopped {
			continue
		}
		if out == nil {
			copied := *n
			copied.Content = append([]*yaml.Node(nil), n.Content...)
			out = &copied
		}
		out.Content[i] = x
	}
	if out == nil {
		return n
	}
	return out
}

// merged builds a mapping whose merge keys are expanded.
func (e *expander) merged(n *yaml.Node) *yaml.Node {
	out := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: n.Line, Column: n.Column}
	at := map[string]int{} // a scalar key's index in out.Content
	set := func(k, v *yaml.Node) {
		if !e.spend(1) {
			return
		}
		if k.Kind == yaml.ScalarNode {
			if i, ok := at[k.Value]; ok {
				out.Content[i+1] = v
				return
			}
			at[k.Value] = len(out.Content)
		}
		out.Content = append(out.Content, k, v)
	}
	for i := 0; i+1 < len(n.Content) && !e.stopped; i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if isMergeKey(k) {
			e.merge(e.node(v), set)
			continue
		}
		set(e.node(k), e.node(v))
	}
	return out
}

// merge sets the keys of a merged mapping, or of each mapping of a merged sequence from the
// last to the first, so the first takes precedence. Anything else merged is an error to
// kubectl's reader, which then reads nothing of the document; it sets nothing here.
func (e *expander) merge(v *yaml.Node, set func(k, v *yaml.Node)) {
	if v == nil {
		return
	}
	sources := []*yaml.Node{v}
	if v.Kind == yaml.SequenceNode {
		sources = v.Content
	}
	for i := len(sources) - 1; i >= 0 && !e.stopped; i-- {
		if m := sources[i]; m != nil && m.Kind == yaml.MappingNode {
			for j := 0; j+1 < len(m.Content); j += 2 {
				set(m.Content[j], m.Content[j+1])
			}
		}
	}
}

func hasMergeKey(n *yaml.Node) bool {
	for i := 0; i < len(n.Content); i += 2 {
		if isMergeKey(n.Content[i]) {
			return true
		}
	}
	return false
}

// isMergeKey is true for a plain "<<" key; a quoted one is a string key like any other.
func isMergeKey(k *yaml.Node) bool {
	return k.Kind == yaml.ScalarNode && k.Value == "<<" && k.Tag == "!!merge"
}
