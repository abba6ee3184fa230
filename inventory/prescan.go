package inventory

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// limits is the part of a schema node a streaming pass can check: the bounds, and how to
// reach the nodes below it.
type limits struct {
	maxItems, maxProperties, maxLength, maxKeyLength int // 0: none
	properties                                       map[string]*limits
	closed                                           bool // additionalProperties: false
	additional, items                                *limits
}

// schemaLimits reads the bounds out of schema.json, so the streaming pass and the full
// validation enforce the same numbers.
var schemaLimits = sync.OnceValues(func() (*limits, error) {
	var root map[string]any
	if err := json.Unmarshal(schemaJSON, &root); err != nil {
		return nil, err
	}
	defs, _ := root["$defs"].(map[string]any)
	b := limitsBuilder{defs: defs, refs: map[string]*limits{}}
	return b.node(root), nil
})

type limitsBuilder struct {
	defs map[string]any
	refs map[string]*limits
}

func (b *limitsBuilder) node(s any) *limits {
	m, ok := s.(map[string]any)
	if !ok {
		return nil
	}
	if ref, ok := m["$ref"].(string); ok {
		name := strings.TrimPrefix(ref, "#/$defs/")
		if l, ok := b.refs[name]; ok {
			return l
		}
		l := &limits{}
		b.refs[name] = l
		*l = *b.node(b.defs[name])
		return l
	}
	l := &limits{
		maxItems: intOf(m["maxItems"]), maxProperties: intOf(m["maxProperties"]),
		maxLength: intOf(m["maxLength"]), items: b.node(m["items"]),
	}
	if names, ok := m["propertyNames"].(map[string]any); ok {
		l.maxKeyLength = intOf(names["maxLength"])
	}
	switch a := m["additionalProperties"].(type) {
	case bool:
		l.closed = !a
	case map[string]any:
		l.additional = b.node(a)
	}
	if props, ok := m["properties"].(map[string]any); ok {
		l.properties = map[string]*limits{}
		for k, v := range props {
			l.properties[k] = b.node(v)
		}
	}
	return l
}

func intOf(v any) int {
	f, _ := v.(float64)
	return int(f)
}

// child is the node a property's value is checked against; nil means unconstrained.
func (l *limits) child(key string) *limits {
	if l == nil {
		return nil
	}
	if c, ok := l.properties[key]; ok {
		return c
	}
	return l.additional
}

// prescan checks data against the schema's size bounds (maxItems, maxProperties, maxLength,
// closed objects), MaxValues and duplicate names in one streaming pass that stops at the
// first violation, before anything is decoded: a 63 MB document of 650,000 rows is refused
// after reading 5,001 of them, and an unknown property before its value is read.
//
// A name given twice in one object is refused at any depth: encoding/json keeps the last
// value and other readers the first, so a document naming apiUsage twice would be judged
// on rows a reviewer reading the first never saw. Names are compared as encoding/json
// decodes them, escapes resolved.
func prescan(data []byte) error {
	root, err := schemaLimits()
	if err != nil {
		return fmt.Errorf("read inventory schema bounds: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	s := &prescanner{dec: dec}
	if err := s.value(root); err != nil {
		return err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return fmt.Errorf("line %d: invalid data after the top-level value", lineAt(data, dec.InputOffset()))
	}
	return nil
}

type prescanner struct {
	dec    *json.Decoder
	path   []string
	values int
}

// problem is a SchemaError at the current JSON pointer.
func (s *prescanner) problem(format string, args ...any) error {
	ptr := "/"
	if len(s.path) > 0 {
		escaped := make([]string, len(s.path))
		for i, p := range s.path {
			escaped[i] = strings.NewReplacer("~", "~0", "/", "~1").Replace(p)
		}
		ptr = "/" + strings.Join(escaped, "/")
	}
	return &SchemaError{Problems: []string{ptr + ": " + printer.Sprintf(format, args...)}}
}

func (s *prescanner) value(l *limits) error {
	tok, err := s.dec.Token()
	if err != nil {
		return err
	}
	if s.values++; s.values > MaxValues {
		return s.problem("more than %d JSON values in the document, want at most %d", MaxValues, MaxValues)
	}
	switch t := tok.(type) {
	case json.Delim:
		if t == '{' {
			return s.object(l)
		}
		return s.array(l)
	case string:
		return s.str(t, l)
	}
	return nil
}

func (s *prescanner) str(v string, l *limits) error {
	want := MaxStringLength
	if l != nil && l.maxLength > 0 {
		want = l.maxLength
	}
	if n := utf8.RuneCountInString(v); n > want {
		return s.problem("maxLength: got %d, want %d", n, want)
	}
	return nil
}

func (s *prescanner) object(l *limits) error {
	n := 0
	seen := map[string]bool{}
	for s.dec.More() {
		tok, err := s.dec.Token()
		if err != nil {
			return err
		}
		key := tok.(string)
		if err := s.key(key, l); err != nil {
			return err
		}
		if seen[key] {
			s.path = append(s.path, key)
			return s.problem("name given twice in one object; readers differ on which value counts")
		}
		seen[key] = true
		if n++; l != nil && l.maxProperties > 0 && n > l.maxProperties {
			return s.problem("maxProperties: got more than %d, want %d", l.maxProperties, l.maxProperties)
		}
		s.path = append(s.path, key)
		if err := s.value(l.child(key)); err != nil {
			return err
		}
		s.path = s.path[:len(s.path)-1]
	}
	_, err := s.dec.Token()
	return err
}

// key refuses a key too long or one a closed object does not declare, before its value is
// read.
func (s *prescanner) key(key string, l *limits) error {
	want := MaxStringLength
	if l != nil && l.maxKeyLength > 0 {
		want = l.maxKeyLength
	}
	if n := utf8.RuneCountInString(key); n > want {
		return s.problem("property name: maxLength: got %d, want %d", n, want)
	}
	if l != nil && l.closed {
		if _, ok := l.properties[key]; !ok {
			s.path = append(s.path, key)
			return s.problem("additional property not allowed")
		}
	}
	return nil
}

func (s *prescanner) array(l *limits) error {
	var items *limits
	if l != nil {
		items = l.items
	}
	n := 0
	for s.dec.More() {
		if n++; l != nil && l.maxItems > 0 && n > l.maxItems {
			return s.problem("maxItems: got more than %d, want %d", l.maxItems, l.maxItems)
		}
		s.path = append(s.path, strconv.Itoa(n-1))
		if err := s.value(items); err != nil {
			return err
		}
		s.path = s.path[:len(s.path)-1]
	}
	_, err := s.dec.Token()
	return err
}

// CountValues counts the JSON values of data as the MaxValues bound counts them: every
// object, array, string, number, boolean and null, keys not included. Invalid JSON counts
// what precedes the fault.
func CountValues(data []byte) int {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	n := 0
	var value func() bool
	value = func() bool {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		n++
		switch tok {
		case json.Delim('{'):
			for dec.More() {
				if _, err := dec.Token(); err != nil || !value() {
					return false
				}
			}
		case json.Delim('['):
			for dec.More() {
				if !value() {
					return false
				}
			}
		default:
			return true
		}
		_, err = dec.Token()
		return err == nil
	}
	value()
	return n
}
