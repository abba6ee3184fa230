package inventory

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// node is one subschema of schema.json as the fast acceptor checks it. Zero values and -1
// mean "no such keyword"; a nil child never occurs (anyNode stands for an absent one).
type node struct {
	// unknown marks a subschema with a keyword the acceptor does not implement: no value
	// that reaches it is accepted, so the slow path judges it.
	unknown bool
	types   typeSet // 0: any type

	hasEnum                       bool // enum or const
	enumStrings                   []string
	enumInts                      []int64
	enumTrue, enumFalse, enumNull bool

	props         map[string]*prop
	closed        bool  // additionalProperties: false
	additional    *node // additionalProperties as a schema, or anyNode
	propertyNames *node
	requiredMask  uint64
	maxProperties int

	items              *node
	maxItems, minItems int

	maxLength, minLength int
	pattern              *regexp.Regexp
	format               func(string) bool

	hasMinimum bool
	minimum    int64
}

// prop is a property name an object node knows: declared under properties, required, or
// both.
type prop struct {
	node     *node
	declared bool
	bit      uint64 // its bit in requiredMask, or 0
}

type typeSet uint8

const (
	typeObject typeSet = 1 << iota
	typeArray
	typeString
	typeInteger
	typeNumber
	typeBoolean
	typeNull
)

var typeNames = map[string]typeSet{
	"object": typeObject, "array": typeArray, "string": typeString, "integer": typeInteger,
	"number": typeNumber, "boolean": typeBoolean, "null": typeNull,
}

func (n *node) allows(t typeSet) bool {
	if t == typeInteger {
		t |= typeNumber // an integer is a number
	}
	return n.types == 0 || n.types&t != 0
}

// child is the node a property's value is checked against, and the property's required
// bit; false when the object is closed to it.
func (n *node) child(key []byte) (*node, uint64, bool) {
	p, ok := n.props[string(key)]
	var bit uint64
	if ok {
		if p.declared {
			return p.node, p.bit, true
		}
		bit = p.bit
	}
	if n.closed {
		return nil, 0, false
	}
	return n.additional, bit, true
}

func newNode() *node {
	return &node{maxProperties: -1, maxItems: -1, maxLength: -1}
}

// anyNode is the subschema true: every value, bounded only by prescan's limits.
var anyNode = func() *node {
	n := newNode()
	n.additional, n.propertyNames, n.items = n, n, n
	return n
}()

// compiledAcceptor compiles schema.json for the fast acceptor at first use.
var compiledAcceptor = sync.OnceValues(func() (*node, error) { return compileAcceptor(schemaJSON) })

// compileAcceptor compiles a JSON Schema (2020-12) into the acceptor's nodes.
func compileAcceptor(schema []byte) (*node, error) {
	dec := json.NewDecoder(bytes.NewReader(schema))
	dec.UseNumber() // minimum and enum numbers keep their spelling
	var root map[string]any
	if err := dec.Decode(&root); err != nil {
		return nil, fmt.Errorf("read schema for the fast acceptor: %w", err)
	}
	defs, _ := root["$defs"].(map[string]any)
	c := &acceptorCompiler{defs: defs, refs: map[string]*node{}}
	return c.root(root), nil
}

type acceptorCompiler struct {
	defs map[string]any
	refs map[string]*node
}

const draft202012 = "https://json-schema.org/draft/2020-12/schema"

// root compiles the top-level schema: the one place $schema and $id may stand.
func (c *acceptorCompiler) root(m map[string]any) *node {
	rest := map[string]any{}
	for k, v := range m {
		rest[k] = v
	}
	if s, ok := rest["$schema"]; ok && s != draft202012 {
		return &node{unknown: true}
	}
	delete(rest, "$schema")
	delete(rest, "$id") // the base URI: $ref below is resolved within this document only
	return c.node(rest)
}

// annotations change no verdict.
var annotations = map[string]bool{
	"title": true, "description": true, "$comment": true, "default": true, "examples": true,
	"deprecated": true, "readOnly": true, "writeOnly": true,
	"$defs": true, // reached only through $ref, resolved at the root
}

func (c *acceptorCompiler) node(s any) *node {
	switch s := s.(type) {
	case bool:
		if s {
			return anyNode
		}
		return &node{unknown: true} // false: refused by the slow path, with its wording
	case map[string]any:
		if ref, ok := s["$ref"]; ok {
			return c.ref(ref, s)
		}
		n := newNode()
		for k, v := range s {
			if !annotations[k] && !c.keyword(n, k, v) {
				return &node{unknown: true}
			}
		}
		n.fillAbsent()
		return n
	}
	return &node{unknown: true}
}

func (n *node) fillAbsent() {
	if n.additional == nil {
		n.additional = anyNode
	}
	if n.propertyNames == nil {
		n.propertyNames = anyNode
	}
	if n.items == nil {
		n.items = anyNode
	}
	for _, p := range n.props {
		if p.node == nil {
			p.node = anyNode
		}
	}
}

// ref resolves "#/$defs/name", alone in its subschema: a $ref beside other keywords would
// need two nodes checked against one streamed value.
func (c *acceptorCompiler) ref(ref any, s map[string]any) *node {
	name, ok := strings.CutPrefix(fmt.Sprint(ref), "#/$defs/")
	if !ok || strings.ContainsAny(name, "/~%") || c.defs[name] == nil {
		return &node{unknown: true}
	}
	for k := range s {
		if k != "$ref" && !annotations[k] {
			return &node{unknown: true}
		}
	}
	if n, ok := c.refs[name]; ok {
		return n
	}
	// Registered before it is compiled, so a recursive $ref finds it; unknown until then,
	// so a $ref that reaches only itself stays unknown rather than a node without checks.
	n := newNode()
	n.unknown = true
	c.refs[name] = n
	*n = *c.node(c.defs[name])
	return n
}

// keyword applies one keyword to n; false for one the acceptor does not implement, or
// implements only for other values than these.
func (c *acceptorCompiler) keyword(n *node, k string, v any) bool {
	switch k {
	case "type":
		return n.setTypes(v)
	case "enum":
		list, ok := v.([]any)
		return ok && n.setEnum(list)
	case "const":
		return n.setEnum([]any{v})
	case "properties":
		return c.properties(n, v)
	case "required":
		return n.setRequired(v)
	case "additionalProperties":
		if b, ok := v.(bool); ok {
			n.closed = !b
			return true
		}
		n.additional = c.node(v)
		return true
	case "propertyNames":
		n.propertyNames = c.node(v)
		return true
	case "items":
		if _, ok := v.([]any); ok {
			return false // the tuple form of older drafts
		}
		n.items = c.node(v)
		return true
	case "maxProperties":
		return setCount(&n.maxProperties, v)
	case "maxItems":
		return setCount(&n.maxItems, v)
	case "minItems":
		return setCount(&n.minItems, v)
	case "maxLength":
		return setCount(&n.maxLength, v)
	case "minLength":
		return setCount(&n.minLength, v)
	case "minimum":
		num, ok := v.(json.Number)
		if !ok {
			return false
		}
		n.minimum, n.hasMinimum = plainInt([]byte(num))
		return n.hasMinimum
	case "pattern":
		return n.setPattern(v)
	case "format":
		return n.setFormat(v)
	}
	return false
}

func (n *node) setTypes(v any) bool {
	names := []any{v}
	if list, ok := v.([]any); ok {
		names = list
	}
	for _, name := range names {
		s, _ := name.(string)
		t, ok := typeNames[s]
		if !ok {
			return false
		}
		n.types |= t
	}
	return true
}

// setEnum keeps the members a document value can be compared with here: strings, plainly
// written integers, booleans and null. A member of another kind (1.0, an object) is left
// out, so a value equal to it is not accepted here and the slow path judges it.
func (n *node) setEnum(list []any) bool {
	n.hasEnum = true
	for _, e := range list {
		switch e := e.(type) {
		case string:
			n.enumStrings = append(n.enumStrings, e)
		case json.Number:
			if v, ok := plainInt([]byte(e)); ok {
				n.enumInts = append(n.enumInts, v)
			}
		case bool:
			n.enumTrue, n.enumFalse = n.enumTrue || e, n.enumFalse || !e
		case nil:
			n.enumNull = true
		}
	}
	return true
}

func (c *acceptorCompiler) properties(n *node, v any) bool {
	props, ok := v.(map[string]any)
	if !ok {
		return false
	}
	for name, s := range props {
		p := n.prop(name)
		p.node, p.declared = c.node(s), true
	}
	return true
}

// setRequired gives each required name a bit of requiredMask; an object node of more than
// 64 is left to the slow path.
func (n *node) setRequired(v any) bool {
	list, ok := v.([]any)
	if !ok || len(list) > 64 {
		return false
	}
	for i, name := range list {
		s, ok := name.(string)
		if !ok {
			return false
		}
		p := n.prop(s)
		p.bit = 1 << i
		n.requiredMask |= p.bit
	}
	return true
}

func (n *node) prop(name string) *prop {
	if n.props == nil {
		n.props = map[string]*prop{}
	}
	p, ok := n.props[name]
	if !ok {
		p = &prop{}
		n.props[name] = p
	}
	return p
}

func setCount(dst *int, v any) bool {
	num, ok := v.(json.Number)
	if !ok {
		return false
	}
	i, ok := plainInt([]byte(num))
	if !ok || i < 0 {
		return false
	}
	*dst = int(i)
	return true
}

// setPattern compiles with regexp, as jsonschema does unless told to use another engine
// (schema.go does not tell it).
func (n *node) setPattern(v any) bool {
	s, ok := v.(string)
	if !ok {
		return false
	}
	re, err := regexp.Compile(s)
	if err != nil {
		return false
	}
	n.pattern = re
	return true
}

// setFormat checks a format with jsonschema itself, on a schema of that format alone: its
// format checks are not exported, and a string is cheap to validate.
func (n *node) setFormat(v any) bool {
	name, ok := v.(string)
	if !ok {
		return false
	}
	sch, err := formatSchema(name)
	if err != nil {
		return false
	}
	n.format = func(s string) bool { return sch.Validate(s) == nil }
	return true
}

func formatSchema(name string) (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.AssertFormat() // as compiled does
	const url = "format.schema.json"
	if err := c.AddResource(url, map[string]any{"$schema": draft202012, "format": name}); err != nil {
		return nil, fmt.Errorf("format %q: %w", name, err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("format %q: %w", name, err)
	}
	return sch, nil
}
