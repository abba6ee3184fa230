package fix

import (
	"bytes"
	"fmt"
	"strings"

	yaml "go.yaml.in/yaml/v3"

	"github.com/upgradescope/upgradescope/convert"
)

// scanner holds what converting one document needs from the others: the CRDs and GitOps
// sources among the files. It is read-only once index has run.
type scanner struct {
	o    Options
	crds map[string]*yaml.Node // "group/Kind" → CustomResourceDefinition
	// sources names GitOps objects among the files by "Tool ns/name" (argocd, helm, kustomize).
	sources map[string]string
	// removedKinds are the kinds the knowledge base lists at a version target does not serve:
	// a template whose apiVersion is itself templated may be one of them.
	removedKinds map[string]bool
}

func newScanner(o Options) *scanner {
	s := &scanner{o: o, crds: map[string]*yaml.Node{}, sources: map[string]string{}, removedKinds: map[string]bool{}}
	for _, e := range o.KB.APIs() {
		if !convert.Served(e, o.Target) {
			s.removedKinds[e.Kind] = true
		}
	}
	return s
}

// head is what a document's top-level lines say it is, read without parsing it.
type head struct {
	apiVersion, kind string
	// ok is false when the lines do not say (a flow mapping, JSON, a key written twice).
	ok bool
}

// readHead reads the top-level apiVersion and kind lines of a YAML document, or the fields
// of a JSON one.
func readHead(src source) head {
	// JSON is always parsed: encoding/json matches keys without case, which kubectl does not.
	if src.json {
		return head{}
	}
	var h head
	seen := 0
	// The separator that starts a stream is the reader's, kept in the first document's text:
	// the mapping after it reads as it would without it.
	text := src.text
	if rest, ok := bytes.CutPrefix(text, []byte("---\n")); ok {
		text = rest
	}
	// A mapping indented as a whole reads its column-0 lines otherwise, and YAML breaks lines
	// at a lone "\r" too, where this scan does not.
	if !startsAtColumnZero(text) || bytes.IndexByte(text, '\r') >= 0 {
		return h
	}
	continued := false // the last key line read may go on, as a multi-line plain scalar
	for line := range bytes.Lines(text) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if continued && line[0] <= ' ' || mayContinue(line) {
			return head{}
		}
		continued = false
		if v, ok := bytes.CutPrefix(line, []byte("apiVersion:")); ok {
			h.apiVersion, seen, continued = plainValue(v), seen+1, true
		} else if v, ok := bytes.CutPrefix(line, []byte("kind:")); ok {
			h.kind, seen, continued = plainValue(v), seen+2, true
		}
	}
	h.ok = seen == 3 && h.apiVersion != "" && h.kind != ""
	return h
}

// mayContinue says whether a line may open what goes on past its end (a quoted scalar or a
// flow collection left open) or, at column 0, is no plain key (a complex key, an anchor, a
// sequence): then the lines after it may not be what they look like to a line scan. A quote
// opens a scalar only where one starts (after the indentation, "key: ", "- "), so the
// apostrophe of a plain "description: don't" opens nothing; a comment opens nothing.
func mayContinue(line []byte) bool {
	// "- " at column 0 is an item of the key above it (compact style) and is read on; "..."
	// ends the document for the YAML reader but not for this scan.
	if strings.IndexByte("?[{&*!|>%@`", line[0]) >= 0 || bytes.HasPrefix(line, []byte("...")) ||
		line[0] == '-' && !bytes.HasPrefix(line, []byte("- ")) {
		return true
	}
	rest := bytes.TrimLeft(line, " ")
	for len(rest) > 0 {
		for bytes.HasPrefix(rest, []byte("- ")) {
			rest = bytes.TrimLeft(rest[2:], " ")
		}
		if len(rest) == 0 {
			return false
		}
		switch rest[0] {
		case '#':
			return false
		case '"', '\'':
			end := closingQuote(rest)
			if end < 0 {
				return true
			}
			rest = rest[end+1:]
			continue
		case '[', '{':
			return !closesOnTheLine(rest) // a flow collection left open goes on below
		}
		// a plain scalar or key: the next scalar starts after ": " or "- ", if anywhere
		i := bytes.Index(rest, []byte(": "))
		j := bytes.Index(rest, []byte(" #"))
		if i < 0 || j >= 0 && j < i {
			return false
		}
		rest = bytes.TrimLeft(rest[i+2:], " ")
	}
	return false
}

// closesOnTheLine says whether the flow collection s opens closes on this line, with its
// quoted scalars closed too.
func closesOnTheLine(s []byte) bool {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"', '\'':
			end := closingQuote(s[i:])
			if end < 0 {
				return false
			}
			i += end
		case '[', '{':
			depth++
		case ']', '}':
			depth--
		}
	}
	return depth <= 0
}

// closingQuote is the index of the quote that closes the scalar s opens with, or -1 when it
// does not close on this line: a double-quoted scalar escapes with a backslash, a single-quoted
// one doubles its quote.
func closingQuote(s []byte) int {
	q := s[0]
	for i := 1; i < len(s); i++ {
		switch {
		case q == '"' && s[i] == '\\':
			i++
		case s[i] == q && q == '\'' && i+1 < len(s) && s[i+1] == '\'':
			i++
		case s[i] == q:
			return i
		}
	}
	return -1
}

// startsAtColumnZero says whether the document's first line of content (not blank, not a
// comment) starts at column 0, as a block mapping whose keys the line scan reads does.
func startsAtColumnZero(text []byte) bool {
	for line := range bytes.Lines(text) {
		t := bytes.TrimSpace(line)
		if len(t) == 0 || t[0] == '#' {
			continue
		}
		return line[0] > ' '
	}
	return false
}

// plainValue is a one-line scalar without its comment and quotes, or "" when the line holds
// more than an apiVersion or kind can be (a tag, an anchor, an escape): then the document is
// parsed, since only the YAML reader knows what such a value reads as.
func plainValue(v []byte) string {
	s := string(bytes.TrimSpace(v))
	if i := strings.Index(s, " #"); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	quoted := len(s) >= 2 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0]
	if quoted {
		s = s[1 : len(s)-1]
	} else if !plainString(s) {
		return "" // YAML reads it as a number, a bool or null
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '/' || r == '-') {
			return ""
		}
	}
	return s
}

// plainString says whether an unquoted scalar of plainValue's characters reads as a string:
// one with a slash, or one starting with a letter that is not true, false or null.
func plainString(s string) bool {
	if strings.Contains(s, "/") {
		return true
	}
	if s == "" || !(s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z') {
		return false
	}
	switch strings.ToLower(s) {
	case "true", "false", "null":
		return false
	}
	return true
}

// served says whether the knowledge base knows the API and target serves it.
func (s *scanner) served(apiVersion, kind string) (known, served bool) {
	return convert.Lookup(s.o.KB, apiVersion, kind, s.o.Target)
}

// parse parses a document once, its node lines moved to the file's.
func parse(d *Doc) (*yaml.Node, error) {
	var n yaml.Node
	if err := yaml.Unmarshal(d.src.text, &n); err != nil {
		return nil, err
	}
	shiftLines(&n, d.Line-1)
	if n.Kind != yaml.DocumentNode || len(n.Content) == 0 {
		return nil, nil
	}
	return &n, nil
}

func shiftLines(n *yaml.Node, by int) {
	if n.Line > 0 {
		n.Line += by
	}
	for _, c := range n.Content {
		shiftLines(c, by)
	}
}

// docRoot is the object mapping of a parsed document, or nil.
func docRoot(doc *yaml.Node) *yaml.Node {
	if doc == nil || doc.Content[0].Kind != yaml.MappingNode {
		return nil
	}
	return doc.Content[0]
}

func get(m *yaml.Node, keys ...string) *yaml.Node {
	for _, k := range keys {
		if m == nil || m.Kind != yaml.MappingNode {
			return nil
		}
		var next *yaml.Node
		for i := 0; i+1 < len(m.Content); i += 2 {
			if m.Content[i].Value == k {
				next = m.Content[i+1]
				break
			}
		}
		m = next
	}
	return m
}

func scalar(m *yaml.Node, keys ...string) string {
	if v := get(m, keys...); v != nil && v.Kind == yaml.ScalarNode {
		return v.Value
	}
	return ""
}

func refOf(obj *yaml.Node) Ref {
	return Ref{
		APIVersion: scalar(obj, "apiVersion"), Kind: scalar(obj, "kind"),
		Namespace: scalar(obj, "metadata", "namespace"), Name: scalar(obj, "metadata", "name"),
	}
}

// file converts and patches one file's documents, one at a time: without KeepObjects, a
// document's nodes are dropped once its text is rewritten, and with them the documents the
// plan's outputs do not name and the bytes of a file that does not change.
func (s *scanner) file(f *File) {
	p := patcher{before: f.Before}
	var docs []Doc
	for i := range f.pieces {
		group := s.document(f, f.pieces[i].toDoc())
		p.add(group)
		for _, g := range group {
			if s.o.KeepObjects || g.release() {
				docs = append(docs, g)
			}
		}
	}
	f.Docs, f.pieces = docs, nil
	f.After = p.result()
	f.changed = f.After != nil
	if !f.changed && !s.o.KeepObjects {
		f.Before = nil
	}
	f.retain(s.o.Retain)
}

// inert says whether no document of a file can need work, by their top-level lines alone:
// each is empty, or an object at an API the knowledge base knows and the target serves,
// which no other document's conversion reads (no CRD, no GitOps source) and no List. Such a
// file is dropped as soon as it is read, when the plan keeps only what its outputs need.
func (s *scanner) inert(f *File) bool {
	for i := range f.pieces {
		src := f.pieces[i].src
		if src.json {
			return false
		}
		h := src.head
		if !h.ok {
			if !onlyComments(src.text) {
				return false
			}
			continue
		}
		if known, served := s.served(h.apiVersion, h.kind); !known || !served || h.kind == "List" || indexed(h.apiVersion, h.kind) {
			return false
		}
	}
	return true
}

// onlyComments says whether a document's lines are all blank or comments.
func onlyComments(text []byte) bool {
	for line := range bytes.Lines(text) {
		if t := bytes.TrimSpace(line); len(t) > 0 && t[0] != '#' {
			return false
		}
	}
	return true
}

// document converts one document: one Doc, or one per item of a v1 List.
func (s *scanner) document(f *File, d Doc) []Doc {
	if !d.src.json && bytes.Contains(d.src.text, []byte("{{")) {
		s.template(&d)
		return []Doc{d}
	}
	h := d.src.head
	if s.o.SkipServed && h.ok && h.kind != "List" && d.Object == nil {
		known, served := s.served(h.apiVersion, h.kind)
		if known && served || !known && s.crds[groupOf(h.apiVersion)+"/"+h.kind] == nil {
			d.Ref = Ref{APIVersion: h.apiVersion, Kind: h.kind}
			return []Doc{d}
		}
	}
	if d.Object == nil {
		doc, err := parse(&d)
		if err != nil {
			d.Skip = "invalid YAML: " + err.Error()
			d.Ref = Ref{APIVersion: h.apiVersion, Kind: h.kind}
			return []Doc{d}
		}
		d.Object = docRoot(doc)
		d.docNode = doc
	}
	if d.Object == nil {
		return []Doc{d}
	}
	if items := get(d.Object, "items"); scalar(d.Object, "kind") == "List" && items != nil && items.Kind == yaml.SequenceNode {
		return s.list(f, d, items)
	}
	s.object(f, &d)
	return []Doc{d}
}

// list makes a Doc of each item of a v1 List, sharing the List's bytes.
func (s *scanner) list(f *File, d Doc, items *yaml.Node) []Doc {
	out := []Doc{}
	for i, it := range items.Content {
		if it.Kind != yaml.MappingNode {
			continue
		}
		item := d
		item.Object, item.Item, item.Line = it, i+1, it.Line
		s.object(f, &item)
		out = append(out, item)
	}
	if len(out) == 0 {
		d.Object = nil
		return []Doc{d}
	}
	return out
}

// object converts one object and decides whether it may be rewritten.
func (s *scanner) object(f *File, d *Doc) {
	d.Ref = refOf(d.Object)
	if hasAnchors(d.Object) {
		s.withAliases(d)
		return
	}
	d.Outcome = convert.Object(s.o.KB, d.Object, s.o.Target)
	if d.Outcome.To == d.Outcome.From && len(d.Outcome.Manual) == 0 {
		s.customResource(d)
	}
	if d.Outcome.To == d.Outcome.From && len(d.Outcome.Manual) == 0 {
		return
	}
	if src, why := s.gitopsSource(d.Object); src != "" {
		d.Source, d.Skip = src, why
		return
	}
	if chart, at := renderedFrom(d.src.text); chart != "" && !d.src.json {
		d.Notes = append(d.Notes, convert.Remark{Line: d.src.line + at, Message: fmt.Sprintf(
			"rendered from %s: change the chart's template too, or the next render brings it back", chart)})
	}
}

// withAliases lists an object written with YAML anchors and aliases whose API the target
// does not serve: a conversion copies what aliases name, which a hostile document makes
// exponential, and an edit of a shared node would change every place that names it.
func (s *scanner) withAliases(d *Doc) {
	from := convert.ParseGVK(d.Ref.APIVersion, d.Ref.Kind)
	if chain, err := convert.Route(s.o.KB, from, s.o.Target); err == nil && len(chain) == 0 || err != nil && s.crds[from.Group+"/"+from.Kind] == nil && !strings.Contains(err.Error(), "replacement") {
		return
	}
	d.Outcome = convert.Outcome{From: from, To: from}
	d.Skip = "written with YAML anchors and aliases: convert it by hand (or expand them first)"
}

// template lists a Helm template whose API the target may not serve: its text is no YAML
// to convert, and the chart is what to change.
func (s *scanner) template(d *Doc) {
	h := d.src.head
	d.Ref = Ref{APIVersion: h.apiVersion, Kind: h.kind}
	templated := strings.Contains(h.apiVersion, "{{") || h.apiVersion == ""
	if known, served := s.served(h.apiVersion, h.kind); !templated && (served || !known) {
		return
	}
	if templated && !s.removedKinds[h.kind] {
		return
	}
	d.Skip = "Helm template: no YAML to convert; change the chart (render it with helm template and run fix on the output to see the change)"
}

// renderedFrom is the chart template a `helm template` comment before the object names, and
// the comment's line in text (0-based).
func renderedFrom(text []byte) (string, int) {
	at := 0
	for line := range bytes.Lines(text) {
		if v, ok := bytes.CutPrefix(line, []byte("# Source: ")); ok {
			chart, _, _ := strings.Cut(string(bytes.TrimSpace(v)), " ")
			return chart, at
		}
		if t := bytes.TrimSpace(line); len(t) > 0 && t[0] != '#' && !bytes.HasPrefix(t, []byte("---")) {
			return "", 0
		}
		at++
	}
	return "", 0
}

func groupOf(apiVersion string) string {
	g, _, ok := strings.Cut(apiVersion, "/")
	if !ok {
		return ""
	}
	return g
}
