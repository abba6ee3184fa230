package files

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	kjson "sigs.k8s.io/json"

	"github.com/upgradescope/upgradescope/collectors/preflight"
)

// jsonObject is what decides whether an object needs a full parse. Its fields stay raw, so
// decoding it costs a copy of their bytes, not a Go value per item of a hostile array. It is
// decoded as kubectl decodes objects, matching keys by case: "KIND" is another key.
type jsonObject struct {
	APIVersion json.RawMessage `json:"apiVersion"`
	Kind       json.RawMessage `json:"kind"`
	Items      json.RawMessage `json:"items"`
}

// jsonString is raw's value when it is a JSON string, else "".
func jsonString(raw json.RawMessage) string {
	var s string
	if len(raw) == 0 || raw[0] != '"' || kjson.UnmarshalCaseSensitivePreserveInts(raw, &s) != nil {
		return ""
	}
	return s
}

var errValueTooLarge = fmt.Errorf("JSON value larger than %d MiB refused", MaxDocumentBytes>>20)

// jsonSource feeds the decoder. It remembers where newlines are, so a value's offset becomes
// a line, and fails once one value grows past the document bound, so a hostile value cannot
// take the process's memory.
type jsonSource struct {
	r        io.Reader
	read     int64   // bytes handed to the decoder
	newlines []int64 // offsets of newlines at or after pruned
	pruned   int     // newlines before the retained ones
	valueAt  int64   // where the value being decoded starts
}

func (s *jsonSource) Read(p []byte) (int, error) {
	if s.read-s.valueAt > MaxDocumentBytes+readBufferBytes {
		return 0, errValueTooLarge
	}
	n, err := s.r.Read(p)
	for i, c := range p[:n] {
		if c == '\n' {
			s.newlines = append(s.newlines, s.read+int64(i))
		}
	}
	s.read += int64(n)
	return n, err
}

// lineOf returns the 1-based line of an absolute offset.
func (s *jsonSource) lineOf(off int64) int {
	i := sort.Search(len(s.newlines), func(i int) bool { return s.newlines[i] >= off })
	return s.pruned + i + 1
}

// prune forgets newlines before off; no later lookup goes back that far.
func (s *jsonSource) prune(off int64) {
	i := sort.Search(len(s.newlines), func(i int) bool { return s.newlines[i] >= off })
	s.pruned += i
	s.newlines = append(s.newlines[:0], s.newlines[i:]...)
	s.valueAt = off
}

func (d *fileDecoder) decodeJSONStream(r *bufio.Reader) {
	src := &jsonSource{r: r}
	dec := json.NewDecoder(src)
	for {
		var raw json.RawMessage
		err := dec.Decode(&raw)
		if errors.Is(err, io.EOF) {
			return
		}
		end := dec.InputOffset()
		if err != nil {
			d.res.documents++
			d.warn(src.lineOf(end), "invalid JSON: "+err.Error(), true)
			return // a JSON stream cannot resynchronise after an error
		}
		start := end - int64(len(raw))
		if d.opts.pastDeadline() {
			d.refuse(src.lineOf(start), "the rest of the file not read: the walk ran past its time limit (--timeout)")
			return
		}
		d.res.documents++
		d.jsonValue(raw, start, src, listOf{})
		src.prune(end)
	}
}

// jsonValue records raw, which starts at absolute offset start, when it is an object. The
// cheap decode decides; objects that hold evidence are parsed again for their lines. in is
// the List raw is an item of, if any.
func (d *fileDecoder) jsonValue(raw json.RawMessage, start int64, src *jsonSource, in listOf) {
	if len(raw) == 0 || raw[0] != '{' {
		return // arrays, scalars, null: not objects
	}
	var o jsonObject
	if err := kjson.UnmarshalCaseSensitivePreserveInts(raw, &o); err != nil {
		d.warn(src.lineOf(start), "not a Kubernetes object: "+err.Error(), false)
		return
	}
	av, kind := jsonString(o.APIVersion), jsonString(o.Kind)
	if len(o.Items) > 0 && o.Items[0] == '[' {
		// A List to kubectl, whatever its kind; its items are read instead of it.
		if in.depth == maxListDepth {
			d.refuse(src.lineOf(start), fmt.Sprintf("Lists nested more than %d deep: not read", maxListDepth))
			return
		}
		d.jsonItems(o.Items, start+int64(max(bytes.Index(raw, o.Items), 0)), src, in.inner(av, kind))
		return
	}
	if av == "" && kind == "" && in.kind != "" {
		d.startDocument(raw)
		d.objText, d.objLine = raw, src.lineOf(start)
		d.parseJSONItem(raw, src.lineOf(start), in)
		return
	}
	if av == "" || kind == "" {
		return
	}
	d.startDocument(raw)
	d.objText, d.objLine = raw, src.lineOf(start)
	if !d.opts.needsParse(av, kind) && !d.probesLive(av, kind) && (d.opts.noPreflight || !jsonKubeProxyConfigMap(av, kind, raw)) {
		d.counted(av, kind)
		return
	}
	d.parseJSONObject(raw, src.lineOf(start))
}

// listOf is the List a value is an item of: how deep, and the apiVersion and kind an item
// naming neither takes (only from the outermost List, as kubectl reads it).
type listOf struct {
	depth            int
	apiVersion, kind string
}

// inner is the List an item of this one holds.
func (l listOf) inner(apiVersion, kind string) listOf {
	if l.depth > 0 {
		apiVersion, kind = "", ""
	}
	return listOf{depth: l.depth + 1, apiVersion: apiVersion, kind: strings.TrimSuffix(kind, "List")}
}

// jsonItems reads a List's items, which start at absolute offset start, one at a time: a
// List of millions of tiny items costs a pass over their bytes, not a Go value each.
func (d *fileDecoder) jsonItems(items json.RawMessage, start int64, src *jsonSource, in listOf) {
	eachItem(items, func(at int, it []byte) {
		d.jsonValue(it, start+int64(at), src, in)
	})
}

// parseJSONItem reads an item that names neither kind nor apiVersion as an object of its
// List's.
func (d *fileDecoder) parseJSONItem(raw []byte, line int, in listOf) {
	nodes, ok := d.reserveNodes(raw, line, splitHint)
	if !ok {
		return
	}
	defer parsing.release(nodes)
	var root yaml.Node
	if err := yaml.Unmarshal(raw, &root); err != nil || len(root.Content) == 0 {
		d.warn(line, "invalid JSON object", true)
		return
	}
	d.objectIn(root.Content[0], line-1, "", in)
}

// eachItem calls f with each item of a JSON array and its offset in the array. The array is
// valid JSON: the stream decoder read it whole. encoding/json's Decoder is not used here, as
// it formats an error to find the end of every number it reads.
func eachItem(array []byte, f func(at int, it []byte)) {
	depth, inString, from := 0, false, 1
	for i := 1; i < len(array); i++ {
		c := array[i]
		switch {
		case inString:
			if c == '\\' {
				i++
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			depth++
		case depth > 0 && (c == ']' || c == '}'):
			depth--
		case depth == 0 && (c == ',' || c == ']'):
			lead := bytes.TrimLeft(array[from:i], " \t\r\n")
			if it := bytes.TrimRight(lead, " \t\r\n"); len(it) > 0 {
				f(i-len(lead), it)
			}
			from = i + 1
		}
	}
}

// jsonKubeProxyConfigMap says whether a JSON object may be kube-proxy's ConfigMap, which the
// pre-flight Recorder reads: its name is in its text, or a \u escape that can spell it.
func jsonKubeProxyConfigMap(apiVersion, kind string, raw []byte) bool {
	return apiVersion == "v1" && kind == "ConfigMap" &&
		(bytes.Contains(raw, []byte(preflight.KubeProxyConfigMap)) || bytes.Contains(raw, []byte(`\u`)))
}
