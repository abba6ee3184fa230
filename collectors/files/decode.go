package files

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"sync"
	"syscall"
	"unicode"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upgradescope/upgradescope/collectors/preflight"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/kb/probe"
)

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// readers are the workers' read buffers, kept from one file to the next.
var readers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, readBufferBytes) }}

// fileResult is what one file contributed.
type fileResult struct {
	observed       *aggregator
	custom         *aggregator
	images         []imageSeen
	ingressClasses []inventory.IngressClass
	namespaces     []inventory.Namespace
	crds           []inventory.CRD
	gitops         []*unstructured.Unstructured
	probes         *probe.Observer
	// preflight holds the file's pre-flight observations, merged into the walk's in file
	// order.
	preflight *preflight.Recorder
	warnings  []Warning
	documents int
	objects   int
	late      bool // not read: the walk's deadline had passed
}

// imageSeen is one container image of one pod template, with the workload's recommended
// labels and reference.
type imageSeen struct {
	image  string
	labels map[string]string
	ref    inventory.ObjectRef
}

// fileDecoder carries one file's state while its documents are decoded.
type fileDecoder struct {
	rel  string
	opts Options
	res  fileResult
	// narrowed is the buffer narrow writes documents into, reused from one to the next.
	narrowed []byte
	// parseAll turns off recording from the line scan, so tests can compare the two;
	// parseEvery parses every document the scan read, needed or not, and narrows none.
	parseAll, parseEvery bool
	// text is the document being decoded, which probes are screened against; screened is
	// the last answer, for the document's kind.
	text     []byte
	screened screening
	// objText is the text the object being read was written in (a document, a JSON value, a
	// List's item), and objLine the line it starts on: the pre-flight Recorder finds the
	// lines of flags and feature gates in it.
	objText []byte
	objLine int
	// skeleton holds the maps the pre-flight Recorder's objects are built of.
	skeleton skeleton
}

// screening is which probes could match an object of one kind in the current document.
type screening struct {
	group, kind string
	screen      probe.Screen
	live, ok    bool
}

// startDocument makes text the document probes are screened against.
func (d *fileDecoder) startDocument(text []byte) {
	d.text, d.screened = text, screening{}
}

// screen answers which probes could match an object of this group and kind in the current
// document (probe.Set.Screen), and whether any could.
func (d *fileDecoder) screen(group, kind string) (probe.Screen, bool) {
	s := &d.screened
	if !s.ok || s.group != group || s.kind != kind {
		sc, live := d.opts.Probes.Screen(group, kind, d.text)
		*s = screening{group: group, kind: kind, screen: sc, live: live, ok: true}
	}
	return s.screen, s.live
}

// probesLive says whether some probe could match an object of this API in the current
// document, which must then be parsed.
func (d *fileDecoder) probesLive(apiVersion, kind string) bool {
	group, _ := splitAPIVersion(apiVersion)
	_, live := d.screen(group, kind)
	return live
}

// counted counts an object that is not parsed; the probes looking at its kind examined it
// and, as its text says, found nothing.
func (d *fileDecoder) counted(apiVersion, kind string) {
	d.res.objects++
	if group, _ := splitAPIVersion(apiVersion); d.opts.Probes.Wants(group, kind) {
		d.res.probes.Skip(group, kind)
	}
}

// newFileDecoder starts a file. Its objects are aggregated as they are decoded, so a file of
// a million objects holds per-kind rows, not a million references.
func newFileDecoder(rel string, opts Options) *fileDecoder {
	if opts.drops == nil {
		opts.drops = narrowing(opts.Probes)
		opts.dropsArgs = keepingArgs(opts.drops)
	}
	d := &fileDecoder{rel: rel, opts: opts}
	d.res.observed, d.res.custom = newAggregator(), newAggregator()
	d.res.probes = opts.Probes.NewObserver()
	if !opts.noPreflight {
		d.res.preflight = preflight.NewRecorder(preflight.FromManifests())
	}
	if opts.observer != nil {
		d.res.probes = opts.observer.Fork()
	}
	return d
}

// decodeFile reads the file of the OS walk at path, named rel.
func decodeFile(path, rel string, opts Options) fileResult {
	// Non-blocking, so a file replaced by a named pipe since the walk cannot hang the open.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return decodeOpened(nil, err, rel, opts)
	}
	return decodeOpened(f, nil, rel, opts)
}

// decodeOpened decodes a file the walk opened (or the error opening it), named rel in what
// it records: the one decoder of the OS walk and the fs.FS walk. Only a regular file is
// read, and only up to the size it had when opened: a file still being written ends.
func decodeOpened(f fs.File, err error, rel string, opts Options) fileResult {
	d := newFileDecoder(rel, opts)
	if err != nil {
		d.warn(0, fmt.Sprintf("open: %v", err), true)
		return d.res
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() {
		d.warn(0, "not a regular file: not read", true)
		return d.res
	}
	r := readers.Get().(*bufio.Reader)
	defer readers.Put(r)
	r.Reset(io.LimitReader(f, info.Size()))
	if head, _ := r.Peek(3); bytes.Equal(head, utf8BOM) {
		_, _ = r.Discard(3)
	}
	if c, odd := unusualLeadingSpace(r); odd {
		d.warn(1, fmt.Sprintf("starts with white space (%U) that kubectl skips to tell JSON from YAML and YAML does not: not read", c), true)
		return d.res
	}
	if isJSONStream(r) {
		d.decodeJSONStream(r)
	} else {
		d.decodeYAMLStream(r)
	}
	return d.res
}

// unusualLeadingSpace answers the first character of a file that is not a space, tab or line
// break when it is white space of another kind (\v, \f, U+00A0, U+2028, …). kubectl's
// reader skips all of them to decide between JSON and YAML and then reads JSON or YAML from
// there; the YAML parser takes them for text. Such a file is not read.
func unusualLeadingSpace(r *bufio.Reader) (rune, bool) {
	for n := 1; n <= readBufferBytes; n++ {
		b, _ := r.Peek(n)
		if len(b) < n {
			return 0, false
		}
		switch b[n-1] {
		case ' ', '\t', '\r', '\n':
			continue
		}
		more, _ := r.Peek(n - 1 + utf8.UTFMax)
		c, _ := utf8.DecodeRune(more[n-1:])
		return c, unicode.IsSpace(c)
	}
	return 0, false
}

// isJSONStream is true when the first byte that is not white space opens a JSON value: such
// a file is one or more JSON objects (pretty, adjacent or NDJSON), whatever its extension.
// "{{" opens a Go template (an unrendered Helm chart, `{{- if … }}`), never JSON: it goes
// to the YAML decoder, which skips templates as unrendered.
func isJSONStream(r *bufio.Reader) bool {
	for n := 1; n <= readBufferBytes; n++ {
		b, err := r.Peek(n)
		if len(b) < n {
			return false
		}
		switch c := b[n-1]; c {
		case ' ', '\t', '\r', '\n':
			continue
		case '[':
			return true
		case '{':
			next, _ := r.Peek(n + 1)
			return len(next) <= n || next[n] != '{'
		default:
			_ = err
			return false
		}
	}
	return false
}

func (d *fileDecoder) warn(line int, msg string, partial bool) {
	d.res.warnings = append(d.res.warnings, Warning{File: d.rel, Line: line, Message: msg, Partial: partial})
}

// refuse warns of a document refused for its size, a bound rather than a defect.
func (d *fileDecoder) refuse(line int, msg string) {
	d.res.warnings = append(d.res.warnings, Warning{File: d.rel, Line: line, Message: msg, Partial: true, Bound: true})
}

// lists says whether record lists objects of this API: judged, custom, or of a built-in
// group at a version the knowledge base does not know.
func (d *fileDecoder) lists(apiVersion, kind string) bool {
	return d.opts.listAll || d.opts.Lists(apiVersion, kind)
}

// record lists an object where the rules need it: at an API the knowledge base judges or
// does not know, or as a custom resource for the CRD rules.
func (d *fileDecoder) record(apiVersion, kind string, ref inventory.ObjectRef) {
	group, version := splitAPIVersion(apiVersion)
	o := observed{group: group, version: version, kind: kind, ref: ref}
	switch {
	case d.opts.listAll || d.opts.Watched[apiVersion+"/"+kind]:
		d.res.observed.add(o)
	case !d.opts.BuiltinGroups[group]:
		d.res.custom.add(o)
	case !d.opts.Known[apiVersion+"/"+kind]:
		d.res.observed.add(o) // unknown version of a built-in group
	}
}

// yamlDoc is one document's text and what a line scan found in it.
type yamlDoc struct {
	text         bytes.Buffer
	startLine    int // line of the document's first line
	oversize     bool
	inline       bool // the separator line carried content ("--- |", "--- {…}")
	apiVersion   string
	kind         string
	avLine       int
	renderedFrom string
	complex      bool // the scan cannot trust itself; parse the document
	hasContent   bool
	meta         metaScan
	kindSeen     bool
	topKeys      bool // a top-level key was read: the document is a mapping at column 0
	hasItems     bool // a top-level items key was read: a List to kubectl, whatever its kind
	// flow follows a quoted scalar or flow collection that runs on past its line.
	flow flowState
	// inScalar is true while the lines below may be text of a block scalar opened by a key
	// at column scalarAt.
	inScalar bool
	scalarAt int
	// topValue is true after a top-level key given a value on its line: an indented line next
	// would continue it as a multi-line plain scalar.
	topValue bool
}

// reset starts the next document on startLine, keeping the text buffer's memory.
func (doc *yamlDoc) reset(startLine int, inline bool) {
	text := doc.text
	text.Reset()
	*doc = yamlDoc{text: text, startLine: startLine, inline: inline}
}

func (d *fileDecoder) decodeYAMLStream(r *bufio.Reader) {
	line := 0
	doc := &yamlDoc{startLine: 1}
	// One document buffer serves the whole file: most documents are a few kilobytes, and a new
	// buffer grown for each was a fifth of the bytes a scan allocated.
	var long []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A line longer than the buffer: keep it only while the document stays in bounds.
			if !doc.oversize {
				long = append(long, chunk...)
				if doc.text.Len()+len(long) > MaxDocumentBytes {
					doc.oversize, long = true, nil
				}
			}
			continue
		}
		if len(chunk) == 0 && err != nil {
			break
		}
		line++
		if line%deadlineEvery == 0 && d.opts.pastDeadline() {
			d.refuse(line, "the rest of the file not read: the walk ran past its time limit (--timeout)")
			return
		}
		text := chunk
		if long != nil {
			text = append(long, chunk...)
			long = nil
		}
		if isSeparator(text) {
			d.finishYAML(doc)
			doc.reset(line+1, separatorContent(text))
		} else if isDocumentEnd(text) {
			d.finishYAML(doc)
			doc.reset(line+1, false)
		} else if !doc.oversize {
			doc.scanLine(text, line)
			doc.text.Write(text)
			if doc.text.Len() > MaxDocumentBytes {
				doc.oversize = true
				doc.text = bytes.Buffer{}
			}
		}
		if err != nil {
			break
		}
	}
	if err := readErr(r); err != nil {
		d.warn(line, fmt.Sprintf("read: %v", err), true)
	}
	d.finishYAML(doc)
}

// deadlineEvery is how many lines are read between looks at the clock.
const deadlineEvery = 1 << 14

func readErr(r *bufio.Reader) error {
	_, err := r.Peek(1)
	if err == nil || errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// isSeparator is true for a line kubectl's reader splits documents at: "---" followed by
// white space, a comment ("---#" too) or nothing.
func isSeparator(line []byte) bool {
	return bytes.HasPrefix(line, []byte("---")) &&
		(len(line) == 3 || line[3] == ' ' || line[3] == '\t' || line[3] == '\r' || line[3] == '\n' || line[3] == '#')
}

func isDocumentEnd(line []byte) bool {
	return bytes.Equal(bytes.TrimRight(line, " \t\r\n"), []byte("..."))
}

// separatorContent is true when a separator line carries the document's first node.
func separatorContent(line []byte) bool {
	rest := bytes.TrimSpace(line[3:])
	return len(rest) > 0 && rest[0] != '#'
}

// scanLine reads top-level apiVersion and kind keys without parsing the document, so objects
// of kinds nobody watches cost a line scan, not a YAML parse. It trusts itself only where it
// reads a line as kubectl's reader would: any line it cannot read with certainty marks the
// document complex, and the parser reads it instead.
func (doc *yamlDoc) scanLine(text []byte, line int) {
	s := trimTrailing(text)
	// One pass finds the lines that need a closer look: most hold no quote, no bracket and no
	// byte a hidden line break starts with.
	unusual := indexIn(s, &unusualBytes) >= 0
	if unusual && hasHiddenBreak(s) {
		doc.complex = true // kubectl's YAML reader starts a new line there; this scan does not
	}
	trimmed := bytes.TrimSpace(s)
	indent := len(s) - len(bytes.TrimLeft(s, " "))
	if doc.inBlockScalar(indent, len(trimmed) == 0) {
		return // block scalar text: never keys, quotes or brackets
	}
	if doc.flow.isOpen() {
		doc.flow.scan(trimmed) // runs on from a line that left a quote or bracket open
		return
	}
	if len(trimmed) == 0 || trimmed[0] == '#' {
		if rest, ok := bytes.CutPrefix(trimmed, []byte("# Source: ")); ok {
			doc.renderedFrom = string(bytes.TrimSpace(rest))
		}
		return
	}
	doc.hasContent = true
	// Only a quote or an opening bracket can leave the line open; most lines hold neither.
	if unusual && indexIn(trimmed, &openers) >= 0 {
		if doc.flow.scan(trimmed); doc.flow.isOpen() {
			doc.complex = true // the next lines continue a quoted scalar or flow collection
		}
	}
	if s[0] != ' ' && s[0] != '-' {
		doc.meta.topLevel(s)
	} else {
		doc.meta.indented(s)
	}
	if s[0] == ' ' || isItem(s) {
		if doc.topValue && s[0] == ' ' {
			doc.complex = true // continues a top-level plain scalar ("kind: Ingress\n  Route")
		}
		doc.topValue = false
		return // not a top-level key: most lines
	}
	doc.topLevelKey(s, line)
}

// hiddenBreakLeads are the first bytes of the line breaks YAML 1.1 knows beside "\n": a lone
// carriage return, NEL (C2 85), LS (E2 80 A8) and PS (E2 80 A9).
var hiddenBreakLeads = *newByteSet("\r\xC2\xE2")

// unusualBytes are hiddenBreakLeads and the openers a line may leave open.
var unusualBytes = *newByteSet("\r\xC2\xE2\"'[{")

// hasHiddenBreak says whether a line, its line ending trimmed, holds a line break the line
// split does not see: kubectl's reader (goyaml v2) and the parser break lines there, so a
// comment, an indented line or a value can hide a top-level key behind one.
func hasHiddenBreak(s []byte) bool {
	for i := indexIn(s, &hiddenBreakLeads); i >= 0; {
		rest := s[i:]
		if rest[0] == '\r' || bytes.HasPrefix(rest, []byte("\xC2\x85")) ||
			bytes.HasPrefix(rest, []byte("\xE2\x80\xA8")) || bytes.HasPrefix(rest, []byte("\xE2\x80\xA9")) {
			return true
		}
		next := indexIn(rest[1:], &hiddenBreakLeads)
		if next < 0 {
			return false
		}
		i += 1 + next
	}
	return false
}

// inBlockScalar says whether a line at this indentation is text of the block scalar a
// previous line opened, and ends the scalar when it is not.
func (doc *yamlDoc) inBlockScalar(indent int, blank bool) bool {
	if !doc.inScalar {
		return false
	}
	if blank || indent > doc.scalarAt {
		return true
	}
	doc.inScalar = false
	return false
}

// topLevelKey reads a line at column 0. Only a plain Kubernetes field name followed by ": " or
// the line's end is read as a key; anything else (a quoted, tagged or anchored key, a space
// before the colon, a flow mapping, a directive, a merge key, a line continuing a scalar) may
// be read differently by the parser, which then decides.
func (doc *yamlDoc) topLevelKey(s []byte, line int) {
	column, key, value := splitLine(s)
	doc.topValue = len(bytes.TrimSpace(uncomment(value))) > 0 && !isBlockScalar(value)
	if isBlockScalar(value) {
		doc.inScalar, doc.scalarAt = true, column
	}
	if column != 0 || len(key) == 0 {
		doc.complex = true
		return
	}
	doc.topKeys = true
	switch string(key) {
	case "apiVersion":
		if doc.avLine != 0 {
			doc.complex = true // given twice: which one wins is the parser's to say
		}
		doc.apiVersion = doc.scalar(string(value))
		doc.avLine = line
	case "kind":
		if doc.kindSeen {
			doc.complex = true
		}
		doc.kind, doc.kindSeen = doc.scalar(string(value)), true
	case "items":
		if doc.hasItems {
			doc.complex = true
		}
		doc.hasItems = true // any object holding items is a List to kubectl: parsed
	}
}

// cutKey returns the value of a "key: value" line. "key:value" is no key but one plain
// scalar to YAML, so it is not taken for one.
func cutKey(s []byte, key string) ([]byte, bool) {
	v, ok := bytes.CutPrefix(s, []byte(key+":"))
	if !ok || len(v) > 0 && v[0] != ' ' && v[0] != '\t' {
		return nil, false
	}
	return v, true
}

// scalar reads a plain or simply quoted value; anything else marks the document complex.
func (doc *yamlDoc) scalar(v string) string {
	if i := strings.Index(v, " #"); i >= 0 {
		v = v[:i]
	}
	v = strings.TrimSpace(v)
	if len(v) >= 2 && (v[0] == '"' && v[len(v)-1] == '"' || v[0] == '\'' && v[len(v)-1] == '\'') {
		v = v[1 : len(v)-1]
	}
	if v == "" || strings.ContainsAny(v, "&*!|>{}[]\"'\\#:") {
		doc.complex = true
	}
	return v
}

func (d *fileDecoder) finishYAML(doc *yamlDoc) {
	d.startDocument(doc.text.Bytes())
	d.objText, d.objLine = doc.text.Bytes(), doc.startLine
	switch {
	case doc.oversize:
		d.res.documents++
		d.refuse(doc.startLine, fmt.Sprintf("document larger than %d MiB refused", MaxDocumentBytes>>20))
	case !doc.hasContent && !doc.inline:
		return
	case doc.namesNoObject():
		d.res.documents++ // a values file, a compose file: nothing kubectl would apply
	case doc.fastPath():
		d.res.documents++
		if d.parseEvery || d.opts.needsParse(doc.apiVersion, doc.kind) || d.probesLive(doc.apiVersion, doc.kind) ||
			!d.opts.noPreflight && kubeProxyConfigMap(doc) {
			if d.parseAll || !d.recordScanned(doc) {
				d.parseYAML(doc)
			}
			return
		}
		d.counted(doc.apiVersion, doc.kind)
	default:
		d.res.documents++
		d.parseYAML(doc)
	}
}

// namesNoObject is true when the line scan read every top-level key with certainty and none
// of them gave both a kind and an apiVersion: kubectl reads no object from such a document,
// so it needs no parse. A document of a million tiny ones ("---\na: 1\n") took minutes of
// parsing that read nothing.
func (doc *yamlDoc) namesNoObject() bool {
	return !doc.complex && !doc.inline && !doc.hasItems && doc.topKeys && (doc.apiVersion == "" || doc.kind == "")
}

// fastPath is true when the line scan found the object's kind with certainty, so the
// document needs no parse unless its kind holds evidence.
func (doc *yamlDoc) fastPath() bool {
	return !doc.complex && !doc.inline && !doc.hasItems && doc.apiVersion != "" && doc.kind != "" &&
		!strings.HasSuffix(doc.kind, "List")
}

// kubeProxyConfigMap says whether a document the line scan read is a ConfigMap the
// pre-flight Recorder reads (kube-proxy's configuration) or may be: the only ConfigMaps
// parsed. A name the scan read with certainty decides; otherwise the text does, since a
// document naming kube-proxy holds the words, or a backslash escape that spells them.
func kubeProxyConfigMap(doc *yamlDoc) bool {
	if doc.kind != "ConfigMap" || doc.apiVersion != "v1" {
		return false
	}
	if !doc.meta.unsure && doc.meta.seen == 1 {
		return doc.meta.name == preflight.KubeProxyConfigMap
	}
	text := doc.text.Bytes()
	return bytes.Contains(text, []byte(preflight.KubeProxyConfigMap)) || bytes.IndexByte(text, '\\') >= 0
}
