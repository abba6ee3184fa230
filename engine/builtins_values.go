package engine

import (
	"errors"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/open-policy-agent/opa/v1/ast"
	yaml "go.yaml.in/yaml/v3"
)

// What builtins spend per element they build, measured on OPA v1.22 (allocations of one call
// over inputs of 10,000 to 300,000 elements, divided by the elements).
const (
	termBytes           = 64   // a term added to an array or set
	entryBytes          = 256  // an entry of an object copied (the hash table's share included)
	arrayElemBytes      = 16   // an array slot: the term's pointer and its hash
	jsonNodeBytes       = 96   // a value ast.JSON converts and encoding/json writes
	yamlNodeBytes       = 2560 // a value yaml.marshal writes (through a YAML node tree)
	decodedNodeBytes    = 160  // a value json.unmarshal decodes into a term
	yamlDecodedBytes    = 800  // a value yaml.unmarshal decodes
	schemaNodeBytes     = 1024 // a value of a JSON schema compiled
	certByteBytes       = 80   // per byte of PEM or JWT text decoded
	moduleByteBytes     = 2400 // per byte of Rego parsed by rego.parse_module
	graphqlByteBytes    = 2048 // per byte of GraphQL parsed
	prettyCopies        = 3    // json.marshal_with_options writes compact text, indents it, prefixes it
	yamlTextCopies      = 4
	marshalTextCopies   = 3
	indentPerNodeExtras = 2 // a newline and a comma or colon beside each node's indent
)

// errStop ends an Iter early.
var errStop = errors.New("stop")

// tree is what a value amounts to written out or copied whole: every part counted each time
// it occurs, as the text holds it, though the value may share it (x := [y, y] holds y once in
// memory and twice in its text; 40 such rules hold it 2⁴⁰ times).
type tree struct {
	nodes    int64 // values, object keys included
	text     int64 // bytes of its JSON text, each string escaped at its longest
	indented int64 // the nodes' depths summed: the indents pretty text writes
}

// measure walks v, stopping once cost of what it has counted passes budget.
func measure(v ast.Value, budget int64, cost func(tree) int64) tree {
	m := measurer{budget: budget, cost: cost}
	m.walk(v, 1)
	return m.t
}

type measurer struct {
	t      tree
	budget int64
	cost   func(tree) int64
	over   bool
}

func (m *measurer) walk(v ast.Value, depth int64) {
	if m.over {
		return
	}
	m.t.nodes++
	m.t.indented += depth
	switch x := v.(type) {
	case ast.String:
		m.t.text += quotedLen(string(x))
	case *ast.Array:
		m.t.text += 2 + int64(x.Len())
		for i := 0; i < x.Len() && !m.over; i++ {
			m.walk(x.Elem(i).Value, depth+1)
		}
	case ast.Set:
		m.t.text += 2 + int64(x.Len())
		_ = x.Iter(func(e *ast.Term) error { m.walk(e.Value, depth+1); return m.stop() })
	case ast.Object:
		m.t.text += 2 + 2*int64(x.Len())
		_ = x.Iter(func(k, e *ast.Term) error {
			m.walk(k.Value, depth+1)
			m.walk(e.Value, depth+1)
			return m.stop()
		})
	default:
		m.t.text += int64(len(v.String()))
	}
	m.over = m.over || m.cost(m.t) > m.budget
}

func (m *measurer) stop() error {
	if m.over {
		return errStop
	}
	return nil
}

// quotedLen bounds the length of s quoted, as JSON or Go quotes it: escapes of up to six
// characters for control and HTML characters and invalid bytes, ten for an unprintable rune.
func quotedLen(s string) int64 {
	n := int64(2 + len(s))
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				n++
			case c < 0x20 || c == 0x7f || c == '<' || c == '>' || c == '&':
				n += 5
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			n += 5
		case r == '\u2028' || r == '\u2029' || !unicode.IsPrint(r):
			n += int64(10 - size)
		}
		i += size
	}
	return n
}

// marshalSize sizes a builtin that converts its operands to Go values and writes them as
// text: json.marshal, urlquery.encode_object, io.jwt.encode_sign.
func marshalSize(perNode int64) sizeFunc {
	cost := func(t tree) int64 { return t.nodes*perNode + marshalTextCopies*t.text }
	return func(operands []*ast.Term, budget int64) int64 {
		var size int64
		for _, op := range operands {
			size += cost(measure(op.Value, budget-size, cost))
			if size > budget {
				break
			}
		}
		return size
	}
}

// json.marshal_with_options(x, options): pretty text writes each node on its own line, after
// the prefix and an indent per level.
func marshalWithOptionsSize(operands []*ast.Term, budget int64) int64 {
	options, ok := operands[1].Value.(ast.Object)
	if !ok {
		return 0
	}
	indent, prefix, pretty := "\t", "", false
	var explicit *bool
	_ = options.Iter(func(k, v *ast.Term) error {
		switch key, _ := k.Value.(ast.String); key {
		case "indent":
			s, _ := v.Value.(ast.String)
			indent, pretty = string(s), true
		case "prefix":
			s, _ := v.Value.(ast.String)
			prefix, pretty = string(s), true
		case "pretty":
			b, _ := v.Value.(ast.Boolean)
			explicit = (*bool)(&b)
		}
		return nil
	})
	if explicit != nil {
		pretty = *explicit
	}
	cost := func(t tree) int64 {
		size := t.nodes*jsonNodeBytes + t.text
		if pretty {
			size += prettyCopies * (t.text + t.nodes*int64(len(prefix)+indentPerNodeExtras) + t.indented*int64(len(indent)))
		}
		return size
	}
	return cost(measure(operands[0].Value, budget, cost))
}

// yaml.marshal(x): YAML writes each node on its own line, indented two spaces a level, through
// a node tree that costs far more than the text.
func yamlMarshalSize(operands []*ast.Term, budget int64) int64 {
	cost := func(t tree) int64 { return t.nodes*yamlNodeBytes + yamlTextCopies*(t.text+2*t.indented) }
	return cost(measure(operands[0].Value, budget, cost))
}

// json.match_schema(document, schema) and json.verify_schema(schema): the document decoded,
// the schema compiled; either is JSON text or a value.
func schemaSize(operands []*ast.Term, budget int64) int64 {
	var size int64
	for i, op := range operands {
		perNode := int64(decodedNodeBytes)
		if i == len(operands)-1 {
			perNode = schemaNodeBytes
		}
		if s, ok := op.Value.(ast.String); ok {
			size += jsonNodes(string(s))*perNode + bufferCopies*int64(len(s))
			continue
		}
		cost := func(t tree) int64 { return t.nodes*perNode + t.text }
		size += cost(measure(op.Value, budget-size, cost))
	}
	return size
}

// json.unmarshal(s): a term per JSON value.
func jsonUnmarshalSize(operands []*ast.Term, _ int64) int64 {
	s, ok := operands[0].Value.(ast.String)
	if !ok {
		return 0
	}
	return jsonNodes(string(s))*decodedNodeBytes + bufferCopies*int64(len(s))
}

// jsonNodes bounds the values of JSON text: every value but the first follows a comma, a
// colon or an opening bracket (counted in strings too, which only raises the bound).
func jsonNodes(s string) int64 {
	n := int64(1)
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ',', ':', '[', '{':
			n++
		}
	}
	return n
}

// yaml.unmarshal(s) and yaml.is_valid(s): a value per YAML node, an alias counted as the
// whole node it names each time it occurs. The library refuses only documents whose aliases
// expand past hundreds of thousands of nodes.
func yamlUnmarshalSize(operands []*ast.Term, budget int64) int64 {
	s, ok := operands[0].Value.(ast.String)
	if !ok {
		return 0
	}
	size := yamlNodes(string(s))*yamlDecodedBytes + bufferCopies*int64(len(s))
	if size > budget || !strings.Contains(string(s), "*") {
		return size
	}
	// Aliases: parsed (the parse costs no more than size) and counted as they expand.
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(s), &doc); err != nil {
		return 0
	}
	c := aliasCounter{seen: map[*yaml.Node]int64{}, limit: budget / yamlDecodedBytes}
	return c.count(&doc)*yamlDecodedBytes + bufferCopies*int64(len(s))
}

// yamlNodes bounds the nodes of YAML text without aliases: every node but the first follows
// an indicator (- ? : , [ {), and a key without a value (in {a, b}) brings a null.
func yamlNodes(s string) int64 {
	n := int64(1)
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '-', '[':
			n++
		case ':', ',', '?', '{':
			n += 2
		}
	}
	return n
}

// aliasCounter counts a YAML node tree's nodes with every alias expanded, each anchored node
// counted once and then reused; it stops past limit.
type aliasCounter struct {
	seen  map[*yaml.Node]int64
	limit int64
}

func (c *aliasCounter) count(n *yaml.Node) int64 {
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if k, ok := c.seen[n]; ok {
		return k
	}
	c.seen[n] = c.limit + 1 // an alias to its own ancestor expands without end
	total := int64(1)
	for _, child := range n.Content {
		total += c.count(child)
		if total > c.limit {
			break
		}
	}
	c.seen[n] = total
	return total
}

// parsedSize sizes a builtin that parses its text operands (PEM, JWT, Rego, GraphQL) into
// values: perByte bytes for each byte of text.
func parsedSize(perByte int64) sizeFunc {
	return func(operands []*ast.Term, budget int64) int64 {
		var size int64
		for _, op := range operands {
			if s, ok := op.Value.(ast.String); ok {
				size += int64(len(s)) * perByte
				continue
			}
			size += measure(op.Value, budget, func(t tree) int64 { return t.text * perByte }).text * perByte
		}
		return size
	}
}

// object.union(a, b): a new object of both's keys, and one more for each key whose values
// are objects in both, merged the same way.
func objectUnionSize(operands []*ast.Term, budget int64) int64 {
	a, ok1 := operands[0].Value.(ast.Object)
	b, ok2 := operands[1].Value.(ast.Object)
	if !ok1 || !ok2 {
		return 0
	}
	return mergeSize(a, b, budget)
}

func mergeSize(a, b ast.Object, budget int64) int64 {
	size := int64(a.Len()+b.Len()) * entryBytes
	_ = b.Iter(func(k, v *ast.Term) error {
		bo, ok := v.Value.(ast.Object)
		if !ok {
			return nil
		}
		if av := a.Get(k); av != nil {
			if ao, ok := av.Value.(ast.Object); ok {
				size += mergeSize(ao, bo, budget-size)
			}
		}
		if size > budget {
			return errStop
		}
		return nil
	})
	return size
}

// object.union_n(objects): every object reached through objects is copied, then merged in
// place.
func objectUnionNSize(operands []*ast.Term, budget int64) int64 {
	var size int64
	each(operands[0].Value, func(t *ast.Term) bool {
		size += copiedObjects(t.Value, budget-size)
		return size <= budget
	})
	return size
}

func copiedObjects(v ast.Value, budget int64) int64 {
	o, ok := v.(ast.Object)
	if !ok {
		return 0
	}
	size := int64(o.Len()) * entryBytes
	_ = o.Iter(func(_, e *ast.Term) error {
		size += copiedObjects(e.Value, budget-size)
		if size > budget {
			return errStop
		}
		return nil
	})
	return size
}

// json.remove(x, paths): every collection on the way to a removed path is copied whole, once
// however many paths pass through it.
func jsonRemoveSize(operands []*ast.Term, budget int64) int64 {
	root, ok := operands[0].Value.(ast.Object)
	if !ok {
		return 0
	}
	size := int64(root.Len()) * entryBytes
	copied := map[string]bool{}
	each(operands[1].Value, func(p *ast.Term) bool {
		node, prefix := operands[0], ""
		segments := pathSegments(p)
		for i := 0; i+1 < len(segments) && node != nil; i++ {
			if node = child(node, segments[i]); node == nil {
				break
			}
			prefix += "\x00" + segments[i].String()
			if !copied[prefix] {
				copied[prefix] = true
				size += int64(width(node.Value)) * entryBytes
			}
		}
		return size <= budget
	})
	return size
}

// pathSegments reads a json.remove path as OPA does: "a/b" (a leading / dropped) or [a, b].
func pathSegments(p *ast.Term) []*ast.Term {
	switch x := p.Value.(type) {
	case ast.String:
		var out []*ast.Term
		for _, part := range strings.Split(strings.TrimLeft(string(x), "/"), "/") {
			out = append(out, ast.StringTerm(strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")))
		}
		return out
	case *ast.Array:
		out := make([]*ast.Term, x.Len())
		for i := range out {
			out[i] = x.Elem(i)
		}
		return out
	}
	return nil
}

// child is what json.remove descends into: an object's value, an array's element by its
// index written as a string, a set's element.
func child(t, key *ast.Term) *ast.Term {
	switch x := t.Value.(type) {
	case ast.Object:
		return x.Get(key)
	case *ast.Array:
		if s, ok := key.Value.(ast.String); ok {
			if i, err := strconv.Atoi(string(s)); err == nil && i >= 0 && i < x.Len() {
				return x.Elem(i)
			}
		}
	case ast.Set:
		if x.Contains(key) {
			return key
		}
	}
	return nil
}

func width(v ast.Value) int {
	switch x := v.(type) {
	case ast.Object:
		return x.Len()
	case *ast.Array:
		return x.Len()
	case ast.Set:
		return x.Len()
	}
	return 0
}
