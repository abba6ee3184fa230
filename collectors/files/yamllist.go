package files

import (
	"bytes"

	yaml "go.yaml.in/yaml/v3"
)

// parseYAMLListItems reads a YAML List past the node bound item by item, as JSON Lists are
// read: a `kubectl get -o yaml` export of a few thousand objects is one document far past the
// bound, while each of its items is small. It returns false, having read nothing, when the
// text has no top-level items sequence to split; the caller then refuses the List whole. An
// item the split cannot stand alone (an alias to another item's anchor) fails its own parse
// and is a partial warning naming its line, never a silent skip.
func (d *fileDecoder) parseYAMLListItems(doc *yamlDoc) bool {
	text := doc.text.Bytes()
	if bytes.Count(text, []byte("\nitems:")) != 1 && !bytes.HasPrefix(text, []byte("items:")) {
		return false
	}
	var s listSplitter
	items := 0
	s.each(text, func(item []byte, line int) {
		items++
		d.parseListItem(item, doc.startLine+line, doc)
	})
	return items > 0 // "items: [ … ]" or an empty List: nothing was split, nothing read
}

// parseListItem reads one item of list: one that names neither kind nor apiVersion takes the
// List's, as kubectl reads it.
func (d *fileDecoder) parseListItem(text []byte, line int, list *yamlDoc) {
	nodes, ok := d.reserveNodes(text, line, splitHint)
	if !ok {
		return
	}
	defer parsing.release(nodes)
	var root yaml.Node
	if err := yaml.Unmarshal(text, &root); err != nil {
		errLine, msg := yamlError(err, line)
		d.warn(errLine, "invalid YAML: "+msg, true)
		return
	}
	if len(root.Content) == 0 {
		return
	}
	if n, ok := d.expanded(root.Content[0], text, line); ok {
		d.objText, d.objLine = text, line
		d.objectIn(n, line-1, list.renderedFrom, listOf{}.inner(list.apiVersion, list.kind))
	}
}

// listSplitter cuts the top-level items sequence of a List into one document per entry,
// dedented to the entry's content column.
type listSplitter struct {
	inItems bool
	indent  int // column of the entries' "-"; -1 until the first entry
	content int // column of an entry's content; -1 until known
	start   int // line of the current entry, 0-based; -1 when none
	buf     []byte
}

func (s *listSplitter) each(text []byte, fn func(item []byte, line int)) {
	s.indent, s.content, s.start = -1, -1, -1
	for n := 0; len(text) > 0; n++ {
		line := text
		if i := bytes.IndexByte(text, '\n'); i >= 0 {
			line, text = text[:i], text[i+1:]
		} else {
			text = nil
		}
		if !s.line(bytes.TrimRight(line, "\r"), n, fn) {
			break
		}
	}
	s.flush(fn)
}

// line takes one line; it returns false once the items sequence has ended.
func (s *listSplitter) line(line []byte, n int, fn func([]byte, int)) bool {
	trimmed := bytes.TrimLeft(line, " ")
	col := len(line) - len(trimmed)
	switch {
	case !s.inItems:
		s.inItems = col == 0 && bytes.Equal(bytes.TrimSpace(uncomment(line)), []byte("items:"))
	case len(trimmed) == 0 || trimmed[0] == '#':
		s.buf = append(s.buf, '\n')
	case isEntry(trimmed) && (s.indent < 0 || col == s.indent):
		s.flush(fn)
		s.indent, s.start = col, n
		rest := bytes.TrimLeft(trimmed[1:], " ")
		s.content = -1
		if len(rest) > 0 {
			s.content = col + len(trimmed) - len(rest)
		}
		s.buf = append(append(s.buf, rest...), '\n')
	case s.start >= 0 && col > s.indent:
		if s.content < 0 {
			s.content = col
		}
		s.buf = append(append(s.buf, line[min(col, s.content):]...), '\n')
	default:
		return false
	}
	return true
}

func (s *listSplitter) flush(fn func([]byte, int)) {
	if s.start >= 0 {
		fn(s.buf, s.start)
	}
	s.buf, s.start = s.buf[:0], -1
}

func isEntry(trimmed []byte) bool {
	return len(trimmed) > 0 && trimmed[0] == '-' && (len(trimmed) == 1 || trimmed[1] == ' ')
}

func uncomment(line []byte) []byte {
	if i := bytes.Index(line, []byte(" #")); i >= 0 {
		return line[:i]
	}
	return line
}
