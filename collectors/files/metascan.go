package files

import (
	"bytes"
	"strings"

	"github.com/upgradescope/upgradescope/inventory"
)

// metaScan reads a document's metadata.name and metadata.namespace from its lines, as the
// line scan reads apiVersion and kind: a judged object whose metadata is plain is recorded
// without a parse. A file of a million removed Ingresses took 12 s of parsing on one core;
// recorded from the scan it takes a fraction of that.
type metaScan struct {
	open      bool // inside the top-level metadata mapping
	seen      int  // top-level metadata keys
	indent    int  // column of metadata's keys; 0 until the first
	name      string
	namespace string
	unsure    bool // a layout the scan does not read with certainty
	// afterValue is true after a key given a value on its line: a deeper line next would
	// continue that value (a multi-line plain scalar), which the scan does not read.
	afterValue bool
	valueAt    int // the column of that key
}

// topLevel takes a line at column 0 other than a sequence entry.
func (m *metaScan) topLevel(s []byte) {
	m.open = false
	key, value, isKey := bytes.Cut(s, []byte(":"))
	m.afterValue, m.valueAt = isKey && len(bytes.TrimSpace(uncomment(value))) > 0, 0
	if !isKey || len(key) == 0 || bytes.ContainsAny(key, " \t#") || len(value) > 0 && value[0] != ' ' && value[0] != '\t' {
		m.unsure = true // not a plain "key: value" line: the parse may read it differently
		return
	}
	rest, ok := cutKey(s, "metadata")
	if !ok {
		if bytes.HasPrefix(s, []byte("metadata:")) {
			m.unsure = true
		}
		return
	}
	m.seen++
	if v := bytes.TrimSpace(rest); len(v) > 0 && v[0] != '#' {
		m.unsure = true // metadata: {name: x}, an alias, a tag
	}
	m.open = true
}

// indented takes a line that starts with a space or a dash.
func (m *metaScan) indented(s []byte) {
	if indent := len(s) - len(bytes.TrimLeft(s, " ")); m.afterValue && (indent > m.valueAt || s[0] == '-') {
		m.unsure = true
	}
	if m.open {
		m.line(s)
	}
}

// line takes an indented or sequence line while metadata is open.
func (m *metaScan) line(s []byte) {
	if s[0] == '-' {
		m.unsure = true // metadata: followed by a sequence
		return
	}
	rest := bytes.TrimLeft(s, " ")
	indent := len(s) - len(rest)
	if m.indent == 0 {
		m.indent = indent
	}
	m.afterValue = false
	switch {
	case indent > m.indent:
		return // labels, annotations and other nested values
	case indent < m.indent:
		m.unsure = true
	case bytes.HasPrefix(rest, []byte("name:")):
		m.name = m.value(rest, "name")
	case bytes.HasPrefix(rest, []byte("namespace:")):
		m.namespace = m.value(rest, "namespace")
	case strings.IndexByte(`"'?{[&*!<|>%@-`, rest[0]) >= 0:
		m.unsure = true // a quoted, complex or flow key, or a sequence
	}
}

func (m *metaScan) value(line []byte, key string) string {
	v, ok := cutKey(line, key)
	if !ok {
		m.unsure = true
		return ""
	}
	m.afterValue, m.valueAt = true, m.indent
	return m.scalar(v)
}

// scalar reads a plain or simply quoted value as the document scan does; anything else leaves
// the document to the parser.
func (m *metaScan) scalar(v []byte) string {
	var doc yamlDoc
	out := doc.scalar(string(v))
	if doc.complex || strings.Contains(string(v), "{{") || notAString(out) {
		m.unsure = true
	}
	return out
}

// notAString is true for a plain value the parser might resolve to another type (a number,
// a boolean, null): the parse would read no name at all there.
func notAString(v string) bool {
	if v == "" || strings.IndexByte("0123456789+-.~", v[0]) >= 0 {
		return true
	}
	switch strings.ToLower(v) {
	case "true", "false", "null":
		return true
	}
	return false
}

// recordScanned records a judged object from the line scan alone, when the scan read all
// the parse would: plain metadata, no suppression annotation, no template, and a kind that
// holds no evidence beyond its name. It returns false, having recorded nothing, otherwise.
func (d *fileDecoder) recordScanned(doc *yamlDoc) bool {
	group, _ := splitAPIVersion(doc.apiVersion)
	text := doc.text.Bytes()
	if !d.opts.Watched[doc.apiVersion+"/"+doc.kind] || holdsEvidence(group, doc.kind) || d.probesLive(doc.apiVersion, doc.kind) ||
		d.opts.preflight(doc.apiVersion, doc.kind) ||
		doc.meta.unsure || doc.meta.seen != 1 ||
		bytes.Contains(text, []byte("{{")) || bytes.Contains(text, []byte(inventory.AnnotationIgnore)) {
		return false
	}
	d.counted(doc.apiVersion, doc.kind)
	d.record(doc.apiVersion, doc.kind, inventory.ObjectRef{
		Namespace: doc.meta.namespace, Name: doc.meta.name, File: d.rel, Line: doc.avLine, RenderedFrom: doc.renderedFrom,
	})
	return true
}
