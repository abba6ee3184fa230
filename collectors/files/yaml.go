package files

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"strconv"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/upgradescope/upgradescope/collectors/gitops"
	"github.com/upgradescope/upgradescope/collectors/preflight"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/kb/probe"
)

// maxAliasDepth bounds the alias chains resolve follows. Documents are expanded before they
// are read (expand), so only the probes' readers of values meet aliases still.
const maxAliasDepth = 16

func (d *fileDecoder) parseYAML(doc *yamlDoc) {
	if strings.Contains(doc.apiVersion, "{{") || strings.Contains(doc.kind, "{{") {
		d.skipTemplate(doc) // `apiVersion: {{ … }}` can even parse, as a flow mapping
		return
	}
	// Only a List the scan read with certainty is split by its lines: another items key, or a
	// kind the scan misread, would have the split read what kubectl does not.
	if !doc.complex && strings.HasSuffix(doc.kind, "List") && nodeBound(doc.text.Bytes()) > MaxDocumentNodes && d.parseYAMLListItems(doc) {
		return
	}
	nodes, ok := d.reserveNodes(doc.text.Bytes(), doc.startLine, tooManyNodesHint(doc.kind))
	if !ok {
		return
	}
	defer parsing.release(nodes)
	var root yaml.Node
	drops, dropsArgs := d.opts.drops, d.opts.dropsArgs
	if !d.probesLive(doc.apiVersion, doc.kind) {
		drops, dropsArgs = dropped, droppedArgs // no probe can match: drop what no other reader needs
	}
	if !d.opts.noPreflight && mayRunComponent(doc.kind, doc.text.Bytes()) {
		drops = dropsArgs
	}
	if drop, ok := drops[doc.kind]; ok && !doc.complex && !d.parseEvery {
		var narrowed bool
		d.narrowed, narrowed = narrow(doc.text.Bytes(), drop, d.narrowed[:0])
		if narrowed && yaml.Unmarshal(d.narrowed, &root) == nil && len(root.Content) > 0 {
			n, ok := d.expanded(root.Content[0], d.narrowed, doc.startLine)
			if !ok {
				return
			}
			if !d.probesFindSubtree(n, doc) {
				d.object(n, doc.startLine-1, doc.renderedFrom)
				return
			}
		}
		root = yaml.Node{}
	}
	err := yaml.Unmarshal(doc.text.Bytes(), &root)
	if err != nil {
		if bytes.Contains(doc.text.Bytes(), []byte("{{")) {
			d.skipTemplate(doc)
			return
		}
		line, msg := yamlError(err, doc.startLine)
		d.warn(line, "invalid YAML: "+msg, true)
		return
	}
	if len(root.Content) == 0 {
		return
	}
	if n, ok := d.expanded(root.Content[0], doc.text.Bytes(), doc.startLine); ok {
		d.object(n, doc.startLine-1, doc.renderedFrom)
	}
}

// expanded is a document's root with its aliases and merge keys expanded as kubectl's reader
// expands them (expand). Past the bound, the document is reported as not read.
func (d *fileDecoder) expanded(root *yaml.Node, text []byte, line int) (*yaml.Node, bool) {
	n, ok := expand(root, text)
	if !ok {
		d.refuse(line, fmt.Sprintf("YAML aliases and merge keys past the %d steps read in one document, or an alias inside what it names: not read", maxExpandWork))
	}
	return n, ok
}

// observe hands the object to the probes its document could satisfy; the others count it as
// examined without its being converted.
func (d *fileDecoder) observe(value func() any, group, kind string, ref inventory.ObjectRef) {
	sc, live := d.screen(group, kind)
	if !live {
		d.res.probes.Skip(group, kind)
		return
	}
	d.res.probes.ObserveScreened(value(), group, kind, ref, sc)
}

// probesFindSubtree says whether a probe keeping values finds a map or a list in the
// narrowed document n: narrowing may have dropped part of it, so the document is parsed whole.
func (d *fileDecoder) probesFindSubtree(n *yaml.Node, doc *yamlDoc) bool {
	group, _ := splitAPIVersion(doc.apiVersion)
	if _, live := d.screen(group, doc.kind); !live || !d.opts.Probes.KeepsValues(group, doc.kind) || n == nil || n.Kind != yaml.MappingNode {
		return false
	}
	return d.opts.Probes.FindsSubtree(plain(n), group, doc.kind)
}

// parseJSONObject reads one JSON object (JSON is YAML) that starts on line startLine.
func (d *fileDecoder) parseJSONObject(raw []byte, startLine int) {
	nodes, ok := d.reserveNodes(raw, startLine, splitHint)
	if !ok {
		return
	}
	defer parsing.release(nodes)
	var root yaml.Node
	if err := yaml.Unmarshal(raw, &root); err != nil || len(root.Content) == 0 {
		d.warn(startLine, "invalid JSON object", true)
		return
	}
	d.object(root.Content[0], startLine-1, "")
}

// reserveNodes takes the parse budget text needs, to be released once its nodes are dropped,
// or refuses the document with a warning when its node bound is past MaxDocumentNodes. The
// narrowed text of a document is never larger than the text, so the whole text's bound
// covers either parse.
func (d *fileDecoder) reserveNodes(text []byte, line int, hint string) (nodes int, ok bool) {
	nodes = nodeBound(text)
	if nodes > MaxDocumentNodes {
		d.refuse(line, fmt.Sprintf("document of more than %d YAML nodes refused: %s", MaxDocumentNodes, hint))
		return 0, false
	}
	parsing.acquire(nodes)
	return nodes, true
}

const splitHint = "split it into smaller documents"

// tooManyNodesHint says what to do with a document past the node bound. A YAML List whose
// items could not be split by line is refused whole; JSON List items are always read one at a
// time.
func tooManyNodesHint(kind string) string {
	if strings.HasSuffix(kind, "List") {
		return "export it as JSON (kubectl get -o json), whose List items are read one at a time"
	}
	return splitHint
}

var yamlLineRE = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

// yamlError turns the parser's document-relative "line N" into a file line.
func yamlError(err error, startLine int) (int, string) {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if m := yamlLineRE.FindStringSubmatch(err.Error()); m != nil {
		if n, convErr := strconv.Atoi(m[1]); convErr == nil {
			return startLine + n - 1, m[2]
		}
	}
	return startLine, msg
}

// maxListDepth bounds how deep Lists nested in Lists are read; kubectl flattens them all.
const maxListDepth = 8

// object records n when it is a Kubernetes object. Like kubectl's reader, it takes every
// object holding a sequence of items for a List and reads the items instead, Lists within
// Lists too; items of the outermost List that name neither their kind nor their apiVersion
// take the List's (an IngressList's items are Ingresses). lineOffset turns the parser's
// document-relative lines into file lines.
func (d *fileDecoder) object(n *yaml.Node, lineOffset int, renderedFrom string) {
	d.objectIn(n, lineOffset, renderedFrom, listOf{})
}

// objectIn is object for n, an item of the List in (none when in is zero).
func (d *fileDecoder) objectIn(n *yaml.Node, lineOffset int, renderedFrom string, in listOf) {
	if n == nil || n.Kind != yaml.MappingNode {
		return
	}
	if t := readTag(n); t != nil {
		d.warn(t.Line+lineOffset, fmt.Sprintf("explicit YAML tag %s on a key or field kubectl reads, which it resolves as YAML 1.1 does: not read", t.Tag), true)
		return
	}
	avNode, av := stringField(n, "apiVersion")
	kindNode, kind := stringField(n, "kind")
	if av == "" && kind == "" && in.kind != "" {
		av, kind, avNode = in.apiVersion, in.kind, n
	}
	if items := field(n, "items"); items != nil && items.Kind == yaml.SequenceNode {
		if in.depth == maxListDepth {
			d.refuse(n.Line+lineOffset, fmt.Sprintf("Lists nested more than %d deep: not read", maxListDepth))
			return
		}
		for _, it := range items.Content {
			d.objectIn(it, lineOffset, renderedFrom, in.inner(av, kind))
		}
		return
	}
	if av == "" || kind == "" {
		return // not a Kubernetes object: values files, compose files, …
	}
	if avNode == nil {
		avNode = kindNode
	}
	meta := field(n, "metadata")
	_, name := stringField(meta, "name")
	_, namespace := stringField(meta, "namespace")
	line := avNode.Line + lineOffset
	d.res.objects++
	ref := inventory.ObjectRef{
		Namespace: namespace, Name: name, File: d.rel, Line: line, RenderedFrom: renderedFrom,
		Ignore: d.ignoreAnnotation(meta, line),
	}
	d.record(av, kind, ref)
	d.evidence(n, av, kind, ref)
	// n as unstructured JSON, converted once for the probes and the pre-flight Recorder.
	var value any
	converted := false
	plainValue := func() any {
		if !converted {
			value, converted = plain(n), true
		}
		return value
	}
	if group, _ := splitAPIVersion(av); d.opts.Probes.Wants(group, kind) {
		d.observe(plainValue, group, kind, ref)
	}
	if d.res.preflight != nil && preflight.Reads(av, kind) {
		d.preflight(n, av, kind, ref, plainValue, converted)
	}
}

// preflight hands the object to the pre-flight Recorder: of a Pod or workload only the
// subtrees it reads (preflight.Subtrees), unless the probes converted it whole already (or
// a test parses everything whole, to hold the subtrees to the whole).
func (d *fileDecoder) preflight(n *yaml.Node, av, kind string, ref inventory.ObjectRef, whole func() any, converted bool) {
	// The object is handed over as kubectl reads it, whatever a merge key or an inherited
	// List kind made of its own apiVersion and kind.
	var obj map[string]any
	if paths := preflight.Subtrees(av, kind); paths != nil && !converted && !d.parseEvery {
		// The maps leading to the subtrees are the decoder's, reused from one object to the
		// next: Observe keeps none of them.
		defer d.skeleton.reset()
		obj = d.skeleton.subtrees(n, paths)
		obj["apiVersion"], obj["kind"] = d.skeleton.boxed(av), d.skeleton.boxed(kind)
	} else if v, ok := whole().(map[string]any); ok {
		obj = v
		if obj["apiVersion"] != av || obj["kind"] != kind {
			obj = maps.Clone(obj) // the probes' value is shared
			obj["apiVersion"], obj["kind"] = av, kind
		}
	} else {
		return
	}
	d.res.preflight.ObserveIn(obj, ref, d.objText, d.objLine)
}

// skeleton keeps the maps subtrees builds, to be cleared and built again for the next object,
// and the apiVersions and kinds they were given as values (a string in an interface costs an
// allocation, and a file holds few of them).
type skeleton struct {
	maps  []map[string]any
	used  int
	boxes map[string]any
}

func (s *skeleton) boxed(v string) any {
	b, ok := s.boxes[v]
	if !ok {
		if s.boxes == nil {
			s.boxes = map[string]any{}
		}
		b = v
		s.boxes[v] = b
	}
	return b
}

func (s *skeleton) newMap() map[string]any {
	if s.used == len(s.maps) {
		s.maps = append(s.maps, make(map[string]any, 4))
	}
	s.used++
	return s.maps[s.used-1]
}

func (s *skeleton) reset() {
	for _, m := range s.maps[:s.used] {
		clear(m)
	}
	s.used = 0
}

// subtrees is n as plain values holding only the subtrees at paths; the maps leading to
// them are s's.
func (s *skeleton) subtrees(n *yaml.Node, paths [][]string) map[string]any {
	obj := s.newMap()
	for _, p := range paths {
		v := n
		for _, k := range p {
			if v = resolve(field(v, k), 0); v == nil {
				break
			}
		}
		if v == nil {
			continue
		}
		into := obj
		for _, k := range p[:len(p)-1] {
			next, ok := into[k].(map[string]any)
			if !ok {
				next = s.newMap()
				into[k] = next
			}
			into = next
		}
		into[p[len(p)-1]] = plain(v)
	}
	return obj
}

// readTag returns a node that decides which object n is, or what it is called, and carries
// an explicit tag other than !!str: a key of n or of its metadata, or the value of apiVersion,
// kind, name or namespace. kubectl's reader resolves such tags as YAML 1.1 does (!!binary
// decoded, unknown tags dropped), which string fields here do not.
func readTag(n *yaml.Node) *yaml.Node {
	meta := field(n, "metadata")
	for _, m := range []*yaml.Node{n, meta} {
		if m == nil || m.Kind != yaml.MappingNode {
			continue
		}
		for i := 0; i < len(m.Content); i += 2 {
			if k := m.Content[i]; tagged(k) && k.Tag != "!!merge" {
				return k
			}
		}
	}
	for _, v := range []*yaml.Node{field(n, "apiVersion"), field(n, "kind"), field(meta, "name"), field(meta, "namespace")} {
		if tagged(v) {
			return v
		}
	}
	return nil
}

func tagged(n *yaml.Node) bool {
	return n != nil && n.Kind == yaml.ScalarNode && n.Style&yaml.TaggedStyle != 0 && n.Tag != "!!str"
}

// evidence records what add-on, team and CRD rules read from an object of this kind.
func (d *fileDecoder) evidence(n *yaml.Node, apiVersion, kind string, ref inventory.ObjectRef) {
	group, _ := splitAPIVersion(apiVersion)
	switch {
	case kind == "IngressClass" && group == "networking.k8s.io":
		d.ingressClass(n, ref.Name)
	case kind == "Namespace" && group == "":
		d.namespace(n, ref.Name)
	case kind == "CustomResourceDefinition" && group == "apiextensions.k8s.io":
		d.crd(n)
	case isWorkload(group, kind):
		ref.Ignore = nil // the report reads suppression annotations on apiUsage, CRD and probe objects only
		d.images(n, group, kind, ref)
	case gitops.DeclaresCharts(group, kind):
		d.gitopsObject(n)
	}
}

// holdsEvidence says whether evidence reads anything from an object of this kind.
func holdsEvidence(group, kind string) bool {
	return kind == "IngressClass" && group == "networking.k8s.io" ||
		kind == "Namespace" && group == "" ||
		kind == "CustomResourceDefinition" && group == "apiextensions.k8s.io" ||
		isWorkload(group, kind) ||
		gitops.DeclaresCharts(group, kind)
}

// isWorkload says whether objects of this group and kind run a pod template.
func isWorkload(group, kind string) bool {
	_, ok := probe.TemplatePath(group, kind)
	return ok
}

// gitopsObject keeps an Argo CD Application, Flux HelmRelease or OCIRepository whole: the
// charts they declare are read after every file is decoded, since a chartRef may point into
// another file.
func (d *fileDecoder) gitopsObject(n *yaml.Node) {
	// Through JSON, so values have the types unstructured's helpers expect (yaml gives int and
	// maps with non-string keys, on which they panic). An object that has no JSON form was
	// counted; a chart it might declare is not read.
	var v any
	if err := n.Decode(&v); err != nil {
		return
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return
	}
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return
	}
	d.res.gitops = append(d.res.gitops, &unstructured.Unstructured{Object: obj})
}

func resolve(n *yaml.Node, depth int) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode && depth < maxAliasDepth {
		n, depth = n.Alias, depth+1
	}
	if n != nil && n.Kind == yaml.AliasNode {
		return nil
	}
	return n
}

// field finds a key in a mapping whose merge keys are expanded: the last occurrence wins, as
// kubectl decodes duplicates.
func field(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	var found *yaml.Node
	for i := 0; i+1 < len(m.Content); i += 2 {
		if k := m.Content[i]; k.Kind == yaml.ScalarNode && k.Value == key {
			found = m.Content[i+1]
		}
	}
	return found
}

// stringField returns a key's node and its value when the value is a string scalar.
func stringField(m *yaml.Node, key string) (*yaml.Node, string) {
	v := field(m, key)
	if v == nil || v.Kind != yaml.ScalarNode || (v.Tag != "!!str" && v.Tag != "") {
		return nil, ""
	}
	return v, v.Value
}

// skipTemplate skips an unrendered template. One that holds a judged API, or whose apiVersion
// or kind is itself templated (charts pick an Ingress API by cluster version that way), might
// hold what the verdict needs, so it is partial: the verdict cannot be ready without it.
func (d *fileDecoder) skipTemplate(doc *yamlDoc) {
	templated := strings.Contains(doc.apiVersion, "{{") || strings.Contains(doc.kind, "{{")
	switch {
	case d.opts.Watched[doc.apiVersion+"/"+doc.kind]:
		d.warn(doc.startLine, fmt.Sprintf("unrendered template of %s %s, an API the knowledge base judges: render it with helm template first", doc.apiVersion, doc.kind), true)
	case templated || doc.apiVersion == "" && doc.kind == "" && mentionsWatched(doc.text.Bytes(), d.opts.Watched):
		d.warn(doc.startLine, "unrendered template whose API cannot be read: render it with helm template first", true)
	case doc.apiVersion != "" && doc.kind != "" && d.lists(doc.apiVersion, doc.kind):
		// A custom resource, or a version of a built-in group the knowledge base does not
		// know: the CRD rules and the unknown-API rule judge those.
		d.warn(doc.startLine, fmt.Sprintf("unrendered template of %q %q, which the rules for custom resources and unknown APIs judge: render it with helm template first", doc.apiVersion, doc.kind), true)
	default:
		d.warn(doc.startLine, "unrendered template skipped: render it with helm template first", false)
	}
}

// mentionsWatched says whether text names the group/version of a judged API anywhere: a
// document whose apiVersion line the scan could not read is judged by its text. Core "v1"
// is left out: every other object names it.
func mentionsWatched(text []byte, watched map[string]bool) bool {
	for key := range watched {
		gv := key[:strings.LastIndexByte(key, '/')]
		if strings.Contains(gv, "/") && bytes.Contains(text, []byte("apiVersion: "+gv)) {
			return true
		}
	}
	return false
}
