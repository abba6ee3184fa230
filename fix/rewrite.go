package fix

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	yaml "go.yaml.in/yaml/v3"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// patchFile returns what the file becomes, or nil when no document in it changes. A
// document that cannot be rewritten so that it reads back as its conversion is left as it
// was and listed for a person.
func (s *scanner) patchFile(f *File) []byte {
	p := patcher{before: f.Before}
	for i := 0; i < len(f.Docs); {
		j := i + 1
		for j < len(f.Docs) && f.Docs[j].Start == f.Docs[i].Start && f.Docs[j].Item > 0 {
			j++
		}
		p.add(f.Docs[i:j])
		i = j
	}
	return p.result()
}

// patcher writes a file's new bytes one document at a time, in order, so that a document's
// nodes can be dropped as soon as its text is written.
type patcher struct {
	before  []byte
	out     bytes.Buffer
	at      int
	changed bool
}

// add rewrites one document, or the items of one List (they share its bytes), when any of
// them converts.
func (p *patcher) add(group []Doc) {
	if !anyConverts(group) {
		return
	}
	text, err := rewrite(group)
	if err != nil {
		for k := range group {
			if group[k].Converts() {
				group[k].Skip = "could not rewrite the document's text so that it reads as the conversion: " + err.Error()
			}
		}
		return
	}
	if !p.changed {
		p.out.Grow(len(p.before) + len(p.before)/8) // a conversion seldom adds more: no copies
	}
	p.out.Write(p.before[p.at:group[0].Start])
	p.out.Write(text)
	p.at, p.changed = group[0].End, true
}

// result is the file's new bytes, or nil when no document changed.
func (p *patcher) result() []byte {
	if !p.changed {
		return nil
	}
	p.out.Write(p.before[p.at:])
	return p.out.Bytes()
}

func anyConverts(docs []Doc) bool {
	for i := range docs {
		if docs[i].Converts() {
			return true
		}
	}
	return false
}

// rewrite is the new text of one document (a List's items share one): spliced, or else
// re-encoded whole, either verified to read back as the conversion.
func rewrite(group []Doc) ([]byte, error) {
	d := group[0]
	orig, conv := d.Object, d.Outcome.Object
	if d.Item > 0 {
		orig = d.docNode.Content[0]
		conv = withItems(orig, group)
	}
	if d.src.json {
		return rewriteJSON(d.src.text, conv)
	}
	if d.src.layout == mixed {
		return nil, errors.New("its lines end in a mix of \\n and \\r\\n")
	}
	want, err := jsonValue(conv)
	if err != nil {
		return nil, err
	}
	text, st := d.src.text, detectStyle(orig)
	patched, err := splice(text, d.src.line, orig, conv, st)
	if err == nil {
		err = readsAs(patched, want)
	}
	if err != nil {
		var u errUnsure
		if !errors.As(err, &u) && !errors.Is(err, errReadsOtherwise) {
			return nil, err
		}
		if patched, err = reencode(d.docNode, conv, text, st); err != nil {
			return nil, err
		}
		if err := readsAs(patched, want); err != nil {
			return nil, err
		}
	}
	return toLayout(patched, d), nil
}

// withItems is a copy of a List whose converted items are replaced by their conversion.
func withItems(list *yaml.Node, group []Doc) *yaml.Node {
	c := *list
	c.Content = append([]*yaml.Node(nil), list.Content...)
	for i := 0; i+1 < len(c.Content); i += 2 {
		if c.Content[i].Value != "items" {
			continue
		}
		items := *c.Content[i+1]
		items.Content = append([]*yaml.Node(nil), items.Content...)
		for _, d := range group {
			if d.Converts() {
				items.Content[d.Item-1] = d.Outcome.Object
			}
		}
		c.Content[i+1] = &items
	}
	return &c
}

// toLayout gives the text the file's line ends back.
func toLayout(text []byte, d Doc) []byte {
	raw := d.src.raw
	if d.src.layout == crlf {
		return bytes.ReplaceAll(text, []byte("\n"), []byte("\r\n"))
	}
	if len(raw) > 0 && raw[len(raw)-1] != '\n' {
		return bytes.TrimSuffix(text, []byte("\n"))
	}
	return text
}

// reencode writes the whole document with yaml in the document's style, keeping the
// comments yaml keeps and the blank lines that ended it.
func reencode(doc, conv *yaml.Node, text []byte, st style) ([]byte, error) {
	n := conv
	if doc != nil {
		d := *doc
		d.Content = []*yaml.Node{conv}
		n = &d
	}
	out, err := encodeStyled(n, st)
	if err != nil {
		return nil, err
	}
	if bytes.HasPrefix(text, []byte("---")) {
		sep, _, _ := bytes.Cut(text, []byte("\n"))
		out = append(append(append([]byte(nil), sep...), '\n'), out...)
	}
	trimmed := bytes.TrimRight(text, "\n")
	return append(out, bytes.Repeat([]byte("\n"), len(text)-len(trimmed)-1)...), nil
}

var errReadsOtherwise = errors.New("the rewritten text does not read as the conversion")

// readsAs checks that text is one document, as kubectl's reader splits it, whose value is
// want (JSON).
func readsAs(text []byte, want []byte) error {
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(text)))
	docs := 0
	for {
		_, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("%w: %v", errReadsOtherwise, err)
		}
		docs++
	}
	if docs != 1 {
		return fmt.Errorf("%w: %d documents", errReadsOtherwise, docs)
	}
	var v any
	if err := yaml.Unmarshal(text, &v); err != nil {
		return fmt.Errorf("%w: %v", errReadsOtherwise, err)
	}
	got, err := json.Marshal(v)
	if err != nil || !bytes.Equal(got, want) {
		return errReadsOtherwise
	}
	return nil
}

// jsonValue is what a node decodes to, as JSON with sorted keys.
func jsonValue(n *yaml.Node) ([]byte, error) {
	var v any
	if err := n.Decode(&v); err != nil {
		return nil, fmt.Errorf("decode the conversion: %w", err)
	}
	out, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("the conversion is no JSON value: %w", err)
	}
	return out, nil
}

// equalValues says whether two nodes decode to the same value.
func equalValues(a, b *yaml.Node) bool {
	x, err1 := jsonValue(a)
	y, err2 := jsonValue(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}

// rewriteJSON writes a JSON document's conversion with its key order, compact when the
// document was on one line and indented as it was otherwise, and checks it decodes as the
// conversion.
func rewriteJSON(orig []byte, conv *yaml.Node) ([]byte, error) {
	var b bytes.Buffer
	if err := writeJSON(&b, conv); err != nil {
		return nil, err
	}
	out := b.Bytes()
	if bytes.Contains(orig, []byte("\n")) {
		var ind bytes.Buffer
		if err := json.Indent(&ind, out, "", jsonIndent(orig)); err != nil {
			return nil, fmt.Errorf("indent: %w", err)
		}
		out = ind.Bytes()
	}
	want, err := jsonValue(conv)
	if err != nil {
		return nil, err
	}
	var v any
	if err := json.Unmarshal(out, &v); err != nil {
		return nil, fmt.Errorf("%w: %v", errReadsOtherwise, err)
	}
	if got, err := json.Marshal(v); err != nil || !bytes.Equal(got, want) {
		return nil, errReadsOtherwise
	}
	return out, nil
}

// jsonIndent is the indentation of an indented JSON value's second line.
func jsonIndent(orig []byte) string {
	_, rest, _ := bytes.Cut(orig, []byte("\n"))
	return string(rest[:len(rest)-len(bytes.TrimLeft(rest, " \t"))])
}

// writeJSON writes a node as compact JSON, mappings in their order.
func writeJSON(b *bytes.Buffer, n *yaml.Node) error {
	switch n.Kind {
	case yaml.AliasNode:
		return writeJSON(b, n.Alias)
	case yaml.MappingNode:
		b.WriteByte('{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			if i > 0 {
				b.WriteByte(',')
			}
			k, _ := json.Marshal(n.Content[i].Value)
			b.Write(k)
			b.WriteByte(':')
			if err := writeJSON(b, n.Content[i+1]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case yaml.SequenceNode:
		b.WriteByte('[')
		for i, c := range n.Content {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeJSON(b, c); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	default:
		var v any
		if err := n.Decode(&v); err != nil {
			return fmt.Errorf("decode line %d: %w", n.Line, err)
		}
		out, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("line %d: %w", n.Line, err)
		}
		b.Write(out)
	}
	return nil
}
