package fix

import (
	"bytes"
	"fmt"
	"sort"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"
)

// The splice: a converted object is a copy of the parsed one with some nodes changed, renamed,
// removed or added, and every node it kept still carries the line and column it was read at.
// Comparing the two trees names the text to change: a changed scalar in place, a renamed key's
// token, a removed entry's lines, a new entry encoded at its mapping's indentation. What the
// splice is not sure of (flow collections, several entries on a line, anchors) is an
// errUnsure, and the caller re-encodes the whole document instead. Either way the result is
// verified by reading it back.

// errUnsure says the splice cannot edit this text safely.
type errUnsure struct{ why string }

func (e errUnsure) Error() string { return e.why }

func unsure(format string, args ...any) error { return errUnsure{fmt.Sprintf(format, args...)} }

// edit replaces text[from:to] with repl.
type edit struct {
	from, to int
	repl     []byte
}

// splicer edits one document's text.
type splicer struct {
	text  []byte
	lines []int // byte offset of each line's start, and len(text) last
	base  int   // the file line of text's first line
	style style
	edits []edit
}

// style is how a document writes block collections: the indentation of a nested mapping and
// whether a sequence's dashes sit at its key's column (compact) or are indented.
type style struct {
	width   int
	compact bool
}

// splice rewrites text (a document whose first line is file line base) from the tree orig to
// the tree conv.
func splice(text []byte, base int, orig, conv *yaml.Node, st style) ([]byte, error) {
	if hasAnchors(orig) {
		return nil, unsure("anchors or aliases")
	}
	s := &splicer{text: text, base: base, style: st, lines: lineStarts(text)}
	if err := s.mapping(orig, conv); err != nil {
		return nil, err
	}
	return s.apply()
}

func lineStarts(text []byte) []int {
	starts := []int{0}
	for i, c := range text {
		if c == '\n' {
			starts = append(starts, i+1)
		}
	}
	if starts[len(starts)-1] != len(text) {
		starts = append(starts, len(text))
	}
	return starts
}

// apply makes the edits, insertions at a place before a removal starting there; edits that
// overlap (a key renamed inside an entry written anew) are not made.
func (s *splicer) apply() ([]byte, error) {
	sort.SliceStable(s.edits, func(i, j int) bool {
		a, b := s.edits[i], s.edits[j]
		if a.from != b.from {
			return a.from < b.from
		}
		return a.from == a.to && b.from != b.to
	})
	var out bytes.Buffer
	at := 0
	for _, e := range s.edits {
		if e.from < at {
			return nil, unsure("overlapping edits")
		}
		out.Write(s.text[at:e.from])
		out.Write(e.repl)
		at = e.to
	}
	out.Write(s.text[at:])
	return out.Bytes(), nil
}

// line is the 0-based index into s.lines of a node's line.
func (s *splicer) line(n *yaml.Node) int { return n.Line - s.base }

func (s *splicer) lineText(i int) []byte {
	if i < 0 || i+1 >= len(s.lines) {
		return nil
	}
	return s.text[s.lines[i]:s.lines[i+1]]
}

// offset is the byte offset of a node's first character: yaml counts columns in characters.
func (s *splicer) offset(n *yaml.Node) (int, bool) {
	l := s.line(n)
	text := s.lineText(l)
	if text == nil {
		return 0, false
	}
	off := 0
	for range n.Column - 1 {
		if off >= len(text) {
			return 0, false
		}
		_, size := utf8.DecodeRune(text[off:])
		off += size
	}
	return s.lines[l] + off, true
}

// firstOnLine says whether a node is the first thing on its line (no "- " or key before it).
func (s *splicer) firstOnLine(n *yaml.Node) bool {
	return indentOf(s.lineText(s.line(n))) == n.Column-1
}

func indentOf(line []byte) int {
	return len(line) - len(bytes.TrimLeft(line, " "))
}

// blankOrComment says whether a line holds nothing a parser reads.
func blankOrComment(line []byte) bool {
	t := bytes.TrimSpace(line)
	return len(t) == 0 || t[0] == '#'
}

// mapping edits the block mapping o into c. Entries are matched by their key node's
// position: a kept (maybe renamed) key still has it, a new one has none.
func (s *splicer) mapping(o, c *yaml.Node) error {
	if o.Style&yaml.FlowStyle != 0 || c.Style&yaml.FlowStyle != 0 || o.Kind != yaml.MappingNode || c.Kind != yaml.MappingNode {
		if equalValues(o, c) {
			return nil
		}
		return unsure("flow or changed collection at line %d", o.Line)
	}
	at := map[[2]int]int{}
	for i := 0; i+1 < len(o.Content); i += 2 {
		at[[2]int{o.Content[i].Line, o.Content[i].Column}] = i / 2
	}
	matched, kept := make([]int, len(c.Content)/2), map[int]bool{}
	prev := -1
	for j := range matched {
		k := c.Content[2*j]
		i, ok := at[[2]int{k.Line, k.Column}]
		switch {
		case !ok || k.Line == 0 || kept[i]:
			matched[j] = -1
		case i < prev:
			return unsure("entries reordered in the mapping at line %d", o.Line)
		default:
			matched[j], kept[i], prev = i, true, i
		}
	}
	for i := 0; i+1 < len(o.Content); i += 2 {
		if !kept[i/2] {
			if err := s.deleteEntry(o, i/2); err != nil {
				return err
			}
		}
	}
	for j, i := range matched {
		if i >= 0 {
			if err := s.entry(o, i, c.Content[2*j], c.Content[2*j+1]); err != nil {
				return err
			}
		}
	}
	return s.insertNew(o, c, matched)
}

// entry edits a kept entry: its key's name, then its value.
func (s *splicer) entry(o *yaml.Node, i int, ck, cv *yaml.Node) error {
	ok, ov := o.Content[2*i], o.Content[2*i+1]
	replaced := false
	err := s.value(ov, cv, func() error {
		if replaced {
			return nil
		}
		replaced = true
		return s.replaceEntry(o, i, ck, cv)
	})
	if err != nil || replaced || ok.Value == ck.Value {
		return err
	}
	return s.renameKey(ok, ck.Value)
}

// value edits ov into cv; replace rewrites the whole entry holding them.
func (s *splicer) value(ov, cv *yaml.Node, replace func() error) error {
	switch {
	case ov.Kind == yaml.AliasNode || cv.Kind == yaml.AliasNode || ov.Kind != cv.Kind:
		return replace()
	case ov.Kind == yaml.ScalarNode:
		if ov.Value == cv.Value && ov.ShortTag() == cv.ShortTag() {
			return nil
		}
		if err := s.replaceScalar(ov, cv); err != nil {
			return replace()
		}
		return nil
	case ov.Kind == yaml.MappingNode:
		if ov.Style&yaml.FlowStyle != 0 || cv.Style&yaml.FlowStyle != 0 {
			if equalValues(ov, cv) {
				return nil
			}
			return replace()
		}
		return s.mapping(ov, cv)
	}
	if equalValues(ov, cv) {
		return nil
	}
	if len(ov.Content) != len(cv.Content) || ov.Style&yaml.FlowStyle != 0 || cv.Style&yaml.FlowStyle != 0 {
		return replace()
	}
	for k := range ov.Content {
		if err := s.value(ov.Content[k], cv.Content[k], replace); err != nil {
			return err
		}
	}
	return nil
}

// renameKey replaces a plain key's token.
func (s *splicer) renameKey(k *yaml.Node, to string) error {
	if k.Style != 0 || !plainSafe(to) {
		return unsure("key %q at line %d is quoted or its new name %q needs quotes", k.Value, k.Line, to)
	}
	off, ok := s.offset(k)
	if !ok || !bytes.HasPrefix(s.text[off:], []byte(k.Value)) {
		return unsure("key %q not found at line %d", k.Value, k.Line)
	}
	s.edits = append(s.edits, edit{off, off + len(k.Value), []byte(to)})
	return nil
}

// replaceScalar replaces a one-line scalar's token with the new value, written as yaml
// writes it in the old value's style.
func (s *splicer) replaceScalar(ov, cv *yaml.Node) error {
	off, ok := s.offset(ov)
	if !ok {
		return unsure("scalar at line %d not found", ov.Line)
	}
	end, ok := tokenEnd(s.text, off, ov)
	if !ok {
		return unsure("scalar at line %d is not on one line", ov.Line)
	}
	n := *cv
	n.Style = ov.Style
	n.HeadComment, n.LineComment, n.FootComment = "", "", ""
	repl, err := yaml.Marshal(&n)
	if err != nil || bytes.Count(repl, []byte("\n")) != 1 {
		return unsure("new value of line %d is not one line", ov.Line)
	}
	s.edits = append(s.edits, edit{off, end, bytes.TrimSuffix(repl, []byte("\n"))})
	return nil
}

// tokenEnd is where a one-line scalar starting at off ends.
func tokenEnd(text []byte, off int, n *yaml.Node) (int, bool) {
	rest := text[off:]
	if i := bytes.IndexByte(rest, '\n'); i >= 0 {
		rest = rest[:i]
	}
	switch n.Style {
	case 0:
		if !bytes.HasPrefix(rest, []byte(n.Value)) {
			return 0, false
		}
		after := bytes.TrimLeft(rest[len(n.Value):], " \t")
		return off + len(n.Value), len(after) == 0 || after[0] == '#'
	case yaml.DoubleQuotedStyle:
		for i := 1; i < len(rest); i++ {
			switch rest[i] {
			case '\\':
				i++
			case '"':
				return off + i + 1, true
			}
		}
	case yaml.SingleQuotedStyle:
		for i := 1; i < len(rest); i++ {
			if rest[i] == '\'' {
				if i+1 < len(rest) && rest[i+1] == '\'' {
					i++
					continue
				}
				return off + i + 1, true
			}
		}
	}
	return 0, false
}

// entryLines are the lines [start, end) of entry i of mapping o: from its key's line to the
// last line indented under it, without the blank and comment lines that end it (those lead
// the next entry).
func (s *splicer) entryLines(o *yaml.Node, i int) (int, int) {
	k, v := o.Content[2*i], o.Content[2*i+1]
	col := k.Column - 1
	start := s.line(k)
	end := start + 1
	for ; end+1 < len(s.lines); end++ {
		l := s.lineText(end)
		if blankOrComment(l) {
			continue
		}
		in := indentOf(l)
		dash := bytes.HasPrefix(l[in:], []byte("- ")) || bytes.Equal(bytes.TrimSpace(l[in:]), []byte("-"))
		if in < col || in == col && !(v.Kind == yaml.SequenceNode && dash) {
			break
		}
	}
	for end > start+1 && blankOrComment(s.lineText(end-1)) {
		end--
	}
	return start, end
}

func (s *splicer) deleteEntry(o *yaml.Node, i int) error {
	k := o.Content[2*i]
	if !s.firstOnLine(k) {
		return unsure("entry %q at line %d shares its line", k.Value, k.Line)
	}
	start, end := s.entryLines(o, i)
	s.edits = append(s.edits, edit{s.lines[start], s.lines[end], nil})
	return nil
}

// replaceEntry writes a kept entry anew: its value changed shape.
func (s *splicer) replaceEntry(o *yaml.Node, i int, ck, cv *yaml.Node) error {
	if err := s.deleteEntry(o, i); err != nil {
		return err
	}
	start, _ := s.entryLines(o, i)
	text, err := s.encodeEntries(o.Content[2*i].Column-1, []*yaml.Node{ck, cv})
	if err != nil {
		return err
	}
	s.edits = append(s.edits, edit{s.lines[start], s.lines[start], text})
	return nil
}

// insertNew writes the entries of c that o does not have, each after the kept entry before
// it, or before the mapping's first entry.
func (s *splicer) insertNew(o, c *yaml.Node, matched []int) error {
	for j := 0; j < len(matched); {
		if matched[j] >= 0 {
			j++
			continue
		}
		run := j
		for j < len(matched) && matched[j] < 0 {
			j++
		}
		var at int
		switch {
		case run > 0:
			_, at = s.entryLines(o, matched[run-1])
		case len(o.Content) > 0 && s.firstOnLine(o.Content[0]):
			at, _ = s.entryLines(o, 0)
		default:
			return unsure("no place for new entries in the mapping at line %d", o.Line)
		}
		col := 0
		if len(o.Content) > 0 {
			col = o.Content[0].Column - 1
		} else {
			return unsure("empty mapping at line %d", o.Line)
		}
		text, err := s.encodeEntries(col, c.Content[2*run:2*j])
		if err != nil {
			return err
		}
		s.edits = append(s.edits, edit{s.lines[at], s.lines[at], text})
	}
	return nil
}

// encodeEntries writes key, value pairs as a block mapping indented by col.
func (s *splicer) encodeEntries(col int, kv []*yaml.Node) ([]byte, error) {
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: kv}
	out, err := encodeStyled(m, s.style)
	if err != nil {
		return nil, err
	}
	return indentLines(out, col), nil
}

func encodeStyled(n *yaml.Node, st style) ([]byte, error) {
	var b bytes.Buffer
	e := yaml.NewEncoder(&b)
	e.SetIndent(st.width)
	if st.compact {
		e.CompactSeqIndent()
	}
	if err := e.Encode(n); err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	if err := e.Close(); err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	return b.Bytes(), nil
}

func indentLines(text []byte, col int) []byte {
	if col == 0 {
		return text
	}
	pad := bytes.Repeat([]byte(" "), col)
	var out bytes.Buffer
	for line := range bytes.Lines(text) {
		if len(bytes.TrimSpace(line)) > 0 {
			out.Write(pad)
		}
		out.Write(line)
	}
	return out.Bytes()
}

func plainSafe(v string) bool {
	out, err := yaml.Marshal(&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v})
	return err == nil && string(out) == v+"\n"
}

func hasAnchors(n *yaml.Node) bool {
	if n.Anchor != "" || n.Kind == yaml.AliasNode {
		return true
	}
	for _, c := range n.Content {
		if hasAnchors(c) {
			return true
		}
	}
	return false
}

// detectStyle reads a document's indentation width and sequence style from its nodes.
func detectStyle(root *yaml.Node) style {
	st := style{width: 2}
	widths, compact, indented := map[int]int{}, 0, 0
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.MappingNode && n.Style&yaml.FlowStyle == 0 {
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				switch {
				case v.Kind == yaml.MappingNode && v.Style&yaml.FlowStyle == 0 && len(v.Content) > 0 && v.Content[0].Line > k.Line:
					widths[v.Content[0].Column-k.Column]++
				case v.Kind == yaml.SequenceNode && v.Style&yaml.FlowStyle == 0 && len(v.Content) > 0 && v.Line > k.Line:
					if v.Column == k.Column {
						compact++
					} else {
						indented++
					}
				}
			}
		}
		for _, c := range n.Content {
			walk(c)
		}
	}
	walk(root)
	best := 0
	for w, count := range widths {
		if w > 0 && (count > best || count == best && w < st.width) {
			st.width, best = w, count
		}
	}
	st.compact = compact > indented
	return st
}
