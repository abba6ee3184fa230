package inventory_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/upgradescope/upgradescope/hack/corpus"
	"github.com/upgradescope/upgradescope/inventory"
)

// The differential tests hold the fast paths (the acceptor compiled from schema.json and
// the json/v2 decode) to the slow path they skip: on valid documents and on each kind of
// broken one, Validate and Parse give the slow path's verdict, error text and Document.

// tree is a document decoded generically, numbers kept as written, so a mutation changes
// one value and leaves the rest byte for byte.
type tree = any

// rawJSON is written as it stands: invalid UTF-8, a lone surrogate, an escape.
type rawJSON string

// dupObject is an object written with one name twice: first as first, then as the object
// has it, so encoding/json (last one wins) sees the object's value.
type dupObject struct {
	m     map[string]any
	name  string
	first any
}

func decodeTree(t testing.TB, data []byte) tree {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func encodeTree(v tree) []byte {
	var b bytes.Buffer
	writeTree(&b, v)
	return b.Bytes()
}

func writeTree(b *bytes.Buffer, v tree) {
	switch v := v.(type) {
	case map[string]any:
		writeObject(b, v, "", nil)
	case dupObject:
		writeObject(b, v.m, v.name, v.first)
	case []any:
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			writeTree(b, e)
		}
		b.WriteByte(']')
	case rawJSON:
		b.WriteString(string(v))
	case json.Number:
		b.WriteString(string(v))
	default:
		data, err := json.Marshal(v)
		if err != nil {
			panic(err)
		}
		b.Write(data)
	}
}

// writeObject writes m in name order, with dup written first once more when it is set.
func writeObject(b *bytes.Buffer, m map[string]any, dup string, first any) {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	b.WriteByte('{')
	if dup != "" {
		writeName(b, dup)
		b.WriteByte(':')
		writeTree(b, first)
		b.WriteByte(',')
	}
	for i, k := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		writeName(b, k)
		b.WriteByte(':')
		writeTree(b, m[k])
	}
	b.WriteByte('}')
}

// writeName writes an object's name: quoted, or as the JSON after rawName.
func writeName(b *bytes.Buffer, name string) {
	if raw, ok := strings.CutPrefix(name, rawName); ok {
		b.WriteString(raw)
		return
	}
	writeTree(b, name)
}

// edit returns a copy of root with the value at path (a JSON pointer's parts) replaced by
// what change returns for it; false when path is not in root.
func edit(root tree, path []string, change func(tree) tree) (tree, bool) {
	if len(path) == 0 {
		return change(root), true
	}
	switch v := root.(type) {
	case map[string]any:
		child, ok := v[path[0]]
		if !ok {
			return nil, false
		}
		repl, ok := edit(child, path[1:], change)
		if !ok {
			return nil, false
		}
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = e
		}
		out[path[0]] = repl
		return out, true
	case []any:
		i, err := strconv.Atoi(path[0])
		if err != nil || i < 0 || i >= len(v) {
			return nil, false
		}
		repl, ok := edit(v[i], path[1:], change)
		if !ok {
			return nil, false
		}
		out := append([]any(nil), v...)
		out[i] = repl
		return out, true
	}
	return nil, false
}

// rawName starts a name written as the JSON that follows it, escapes and all.
const rawName = "\x00raw\x00"

// Object-level changes, applied to the object at a path.
func withoutName(name string) func(tree) tree {
	return func(v tree) tree {
		out := map[string]any{}
		for k, e := range v.(map[string]any) {
			if k != name {
				out[k] = e
			}
		}
		return out
	}
}

func withName(name string, value any) func(tree) tree {
	return func(v tree) tree {
		out := map[string]any{name: value}
		for k, e := range v.(map[string]any) {
			out[k] = e
		}
		return out
	}
}

// renaming gives the member name a new name, keeping its value.
func renaming(name, to string) func(tree) tree {
	return func(v tree) tree {
		out := map[string]any{}
		for k, e := range v.(map[string]any) {
			if k == name {
				k = to
			}
			out[k] = e
		}
		return out
	}
}

// twoNames adds both names to the object, each with the value 1: two spellings of one name
// (escaped, invalid bytes) or two names.
func twoNames(a, b string) func(tree) tree {
	return func(v tree) tree {
		out := map[string]any{a: json.Number("1"), b: json.Number("1")}
		for k, e := range v.(map[string]any) {
			out[k] = e
		}
		return out
	}
}

// dupOf gives the object a member name with the value 1, twice.
func dupOf(name string) func(tree) tree {
	return func(v tree) tree {
		m := map[string]any{name: json.Number("1")}
		for k, e := range v.(map[string]any) {
			m[k] = e
		}
		return dupObject{m: m, name: name, first: json.Number("2")}
	}
}

func duplicating(name string, first any) func(tree) tree {
	return func(v tree) tree { return dupObject{m: v.(map[string]any), name: name, first: first} }
}

func repeatedTo(n int) func(tree) tree {
	return func(v tree) tree {
		items := v.([]any)
		out := make([]any, n)
		for i := range out {
			out[i] = items[0]
		}
		return out
	}
}

func to(value any) func(tree) tree { return func(tree) tree { return value } }

func isObject(v tree) bool { _, ok := v.(map[string]any); return ok }

func isNonEmptyArray(v tree) bool { a, ok := v.([]any); return ok && len(a) > 0 }

// baseDocuments are valid documents of every shape at hand: the one that sets every schema
// property, the fixtures, and fleet-server-sized clusters.
func baseDocuments(t *testing.T) map[string][]byte {
	t.Helper()
	docs := map[string][]byte{}
	add := func(name string, d *inventory.Document) {
		data, err := json.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		docs[name] = data
	}
	add("the full document", inventory.FullDocument())
	for seed := 1; seed <= 2; seed++ {
		add(fmt.Sprintf("corpus.Cluster(50, %d)", seed), corpus.Cluster(50, seed))
	}
	paths, _ := filepath.Glob("../testdata/*/inventory.json")
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		docs[p] = data
	}
	return docs
}

func TestTheFastAcceptorAcceptsEveryValidDocument(t *testing.T) {
	for name, data := range baseDocuments(t) {
		t.Run(name, func(t *testing.T) {
			if !inventory.CheckSlowPathAgreement(t, data) {
				t.Errorf("the fast acceptor leaves a valid document to the slow path")
			}
		})
	}
}

var longRunes = strings.Repeat("é", inventory.MaxStringLength+1)

// mutations are the targeted breakages: path is a JSON pointer's parts, parses says
// whether the slow path (jsonschema, then encoding/json) still parses the result.
var mutations = []struct {
	name   string
	path   []string
	change func(tree) tree
	parses bool
}{
	{"an integer given as a string", []string{"apiUsage", "0", "count"}, to("3"), false},
	{"a boolean given as a string", []string{"capabilities", "api-usage", "available"}, to("true"), false},
	{"an object where an array is wanted", []string{"apiUsage"}, to(map[string]any{}), false},
	{"null where a string is wanted", []string{"clusterId"}, to(nil), false},
	{"null where an enum value is wanted", []string{"source"}, to(nil), false},
	{"null where an array is wanted", []string{"apiUsage"}, to(nil), false},
	{"null where an object is wanted", []string{"capabilities"}, to(nil), false},
	{"a missing required field", nil, withoutName("collectedAt"), false},
	{"a missing required field in a row", []string{"apiUsage", "0"}, withoutName("kind"), false},
	{"an extra property", nil, withName("junk", json.Number("1")), false},
	{"an extra property in a row", []string{"apiUsage", "0"}, withName("junk", "x"), false},
	{"a known property in another case", nil, withName("ClusterID", "x"), false},
	{"an enum value outside the enum", []string{"source"}, to("satellite"), false},
	{"schemaVersion other than its const", []string{"schemaVersion"}, to(json.Number("2")), false},
	{"schemaVersion 1.0, equal to its const", []string{"schemaVersion"}, to(json.Number("1.0")), false},
	{"a timestamp the pattern refuses", []string{"collectedAt"}, to("2026-11-29 12:00:00Z"), false},
	{"a timestamp the pattern allows and date-time refuses", []string{"collectedAt"}, to("2026-02-30T12:00:00Z"), false},
	{"a timestamp with a zone offset", []string{"collectedAt"}, to("2026-11-29T12:00:00+01:00"), true},
	{"a timestamp of ten fractional digits", []string{"collectedAt"}, to("2026-11-29T12:00:00.1234567891Z"), true},
	{"an emulated version the pattern refuses", []string{"emulatedVersion"}, to("v1.32"), false},
	{"a string past maxLength counted in runes", []string{"apiUsage", "0", "kind"}, to(longRunes), false},
	{"a string of maxLength multi-byte runes", []string{"apiUsage", "0", "kind"}, to(longRunes[len("é"):]), true},
	{"a string below minLength", []string{"apiUsage", "0", "kind"}, to(""), false},
	{"a key past maxLength", []string{"capabilities"}, withName(longRunes, map[string]any{"available": true}), false},
	{"an array past maxItems", []string{"apiUsage", "0", "objects"}, repeatedTo(inventory.MaxObjectRefs + 1), false},
	{"an array below minItems", []string{"workloadImages", "0", "versions"}, to([]any{}), false},
	{"an integer below minimum", []string{"apiUsage", "0", "count"}, to(json.Number("-1")), false},
	{"an integer below a minimum of 1", []string{"nodes", "0", "count"}, to(json.Number("0")), false},
	{"1.0 for an integer", []string{"apiUsage", "0", "count"}, to(json.Number("1.0")), false},
	{"1e2 for an integer", []string{"apiUsage", "0", "count"}, to(json.Number("1e2")), false},
	{"-0 for an integer", []string{"apiUsage", "0", "count"}, to(json.Number("-0")), true},
	{"1.5 for an integer", []string{"apiUsage", "0", "count"}, to(json.Number("1.5")), false},
	{"an integer past int64", []string{"apiUsage", "0", "count"}, to(json.Number("99999999999999999999")), false},
	{"an integer of 19 digits within int64", []string{"apiUsage", "0", "count"}, to(json.Number("1000000000000000000")), true},
	{"a duplicate name", nil, duplicating("source", "cluster"), false},
	{"a duplicate name whose first value is invalid", nil, duplicating("source", "satellite"), false},
	{"a duplicate namespace count", []string{"apiUsage", "0", "namespaces"}, dupOf("zz"), false},
	{"a duplicate name spelt with an escape", nil, duplicating(rawName+`"\u0061piUsage"`, []any{}), false},
	{"a duplicate row list, the first one empty", nil, duplicating("apiUsage", []any{}), false},
	{"a duplicate name in a row", []string{"apiUsage", "0"}, duplicating("kind", "ConfigMap"), false},
	{"a duplicate map key spelt with an escape", []string{"apiUsage", "0", "namespaces"}, twoNames(rawName+`"w\u0065b"`, "web"), false},
	{"two map keys of different invalid bytes, both U+FFFD", []string{"apiUsage", "0", "namespaces"}, twoNames(rawName+"\"a\xffb\"", rawName+"\"a\xfeb\""), false},
	{"two map keys of different lone surrogates, both U+FFFD", []string{"apiUsage", "0", "namespaces"}, twoNames(rawName+`"\ud800"`, rawName+`"\udfff"`), false},
	{"two map keys, one a lone surrogate, one U+FFFD itself", []string{"apiUsage", "0", "namespaces"}, twoNames(rawName+`"\ud800"`, "\ufffd"), false},
	{"two map keys differing only in a surrogate pair's spelling", []string{"apiUsage", "0", "namespaces"}, twoNames(rawName+`"\ud83d\ude00"`, "😀"), false},
	{"an ignore reason of one zero-width space", []string{"apiUsage", "0", "objects", "0", "ignore", "reason"}, to("\u200b"), false},
	{"an ignore reason of combining marks only", []string{"probes", "0", "objects", "0", "ignore", "reason"}, to("\u0301\u0302"), false},
	{"an ignore reason of a word joiner and a byte order mark", []string{"apiUsage", "0", "objects", "0", "ignore", "reason"}, to("\u2060\ufeff"), false},
	{"an ignore reason of one digit behind a zero-width space", []string{"apiUsage", "0", "objects", "0", "ignore", "reason"}, to("\u200b4"), true},
	{"two map keys differing in case", []string{"apiUsage", "0", "namespaces"}, twoNames("Web", "web"), true},
	{"two map keys differing in a trailing space", []string{"apiUsage", "0", "namespaces"}, twoNames("web", "web "), true},
	{"two map keys, é composed and decomposed", []string{"apiUsage", "0", "namespaces"}, twoNames("caf\u00e9", "cafe\u0301"), true},
	{"invalid UTF-8 in a string", []string{"clusterId"}, to(rawJSON("\"a\xffb\"")), true},
	{"invalid UTF-8 past maxLength in bytes only", []string{"clusterId"}, to(rawJSON("\"" + strings.Repeat("\xff", 4096) + "\"")), true},
	{"a lone surrogate escape", []string{"clusterId"}, to(rawJSON(`"\ud800"`)), true},
	{"escapes in a string", []string{"clusterId"}, to(rawJSON(`"a\u00e9\"\\\n\t\/"`)), true},
	{"an escaped name", nil, renaming("clusterId", rawName+`"\u0063lusterId"`), true},
	{"an escaped key of a map", []string{"apiUsage", "0", "namespaces"}, renaming("web", rawName+`"w\u0065b"`), true},
	{"an escaped timestamp", []string{"collectedAt"}, to(rawJSON(`"2026-11-29T12:00:00\u005a"`)), false},
	{"an escaped digit in a timestamp", []string{"collectedAt"}, to(rawJSON(`"2026-11-29T1\u0032:00:00Z"`)), false},
}

func TestTheFastAcceptorNeverAcceptsWhatTheSchemaRefuses(t *testing.T) {
	docs := baseDocuments(t)
	for _, m := range mutations {
		t.Run(m.name, func(t *testing.T) {
			applied := 0
			for name, data := range docs {
				mutated, ok := edit(decodeTree(t, data), m.path, m.change)
				if !ok {
					continue
				}
				applied++
				doc := encodeTree(mutated)
				inventory.CheckSlowPathAgreement(t, doc)
				if _, err := inventory.Parse(doc); (err == nil) != m.parses {
					t.Errorf("%s: Parse says %v, want it to parse: %v", name, err, m.parses)
				}
			}
			if applied == 0 {
				t.Fatalf("the mutation applies to no base document")
			}
		})
	}
}

// wrongValues are what the generated mutations put in place of each value in turn: every
// JSON type, the numbers jsonschema and encoding/json read differently, strings at and past
// the bounds, timestamps on both sides of the pattern and the format, and bytes only the
// slow path reads.
var wrongValues = []any{
	nil, true, "", "x", "satellite", json.Number("0"), json.Number("-1"), json.Number("2"),
	json.Number("1.0"), json.Number("1e2"), json.Number("-0"), json.Number("1.5"),
	json.Number("99999999999999999999"), map[string]any{}, []any{}, []any{"x"},
	longRunes, longRunes[len("é"):], "2026-11-29T12:00:60Z", "2026-11-29t12:00:00z",
	"1.32", rawJSON("\"\xff\""), rawJSON(`"\ud800"`),
}

// treePaths lists every path in v, parents before children.
func treePaths(v tree, prefix []string, out *[][]string) {
	*out = append(*out, prefix)
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			treePaths(e, append(prefix[:len(prefix):len(prefix)], k), out)
		}
	case []any:
		for i, e := range v {
			treePaths(e, append(prefix[:len(prefix):len(prefix)], strconv.Itoa(i)), out)
		}
	}
}

// generatedMutations changes every value of root in turn into each wrong value, and every
// object and array in the ways only a container can be wrong.
func generatedMutations(root tree) map[string]func(tree) tree {
	var paths [][]string
	treePaths(root, nil, &paths)
	out := map[string]func(tree) tree{}
	for _, p := range paths {
		ptr := "/" + strings.Join(p, "/")
		for _, w := range wrongValues {
			out[fmt.Sprintf("%s = %s", ptr, encodeTree(w))] = editing(p, to(w))
		}
		v := valueAt(root, p)
		if isObject(v) {
			out[ptr+" with an extra name"] = editing(p, withName("zz-extra", json.Number("1")))
			for k := range v.(map[string]any) {
				out[ptr+" without "+k] = editing(p, withoutName(k))
				out[ptr+" with "+k+" twice"] = editing(p, duplicating(k, nil))
			}
		}
		if isNonEmptyArray(v) {
			out[ptr+" of 101 items"] = editing(p, repeatedTo(inventory.MaxObjectRefs+1))
		}
	}
	return out
}

func editing(path []string, change func(tree) tree) func(tree) tree {
	return func(root tree) tree {
		out, _ := edit(root, path, change)
		return out
	}
}

func valueAt(v tree, path []string) tree {
	for _, k := range path {
		switch c := v.(type) {
		case map[string]any:
			v = c[k]
		case []any:
			i, _ := strconv.Atoi(k)
			v = c[i]
		}
	}
	return v
}

// Every value of the full document (which reaches every schema node) given each wrong value,
// and every object and array broken as a container, keeps the slow path's verdict and words.
func TestEveryValueGivenAWrongValueKeepsTheSlowPathsVerdict(t *testing.T) {
	data, err := json.Marshal(inventory.FullDocument())
	if err != nil {
		t.Fatal(err)
	}
	root := decodeTree(t, data)
	muts := generatedMutations(root)
	if len(muts) < 1000 {
		t.Fatalf("only %d generated mutations: the walk missed the document", len(muts))
	}
	accepted := 0
	for name, change := range muts {
		doc := encodeTree(change(root))
		t.Run(name, func(t *testing.T) {
			if inventory.CheckSlowPathAgreement(t, doc) {
				accepted++
			}
		})
	}
	// Wrong values the schema still allows (another string, another enum member) are valid
	// documents: an acceptor refusing them all would pass the checks above and be useless.
	if accepted < len(muts)/10 {
		t.Errorf("the fast acceptor accepted %d of %d generated mutations; want at least a tenth", accepted, len(muts))
	}
}

// The fleet server parses pushes concurrently: the compiled acceptor and schema are shared,
// so parsing valid and invalid documents side by side must answer each as alone (make race
// runs this under the race detector).
func TestParseIsSafeForConcurrentUse(t *testing.T) {
	docs := baseDocuments(t)
	full := decodeTree(t, docs["the full document"])
	for _, m := range mutations[:8] {
		if broken, ok := edit(full, m.path, m.change); ok {
			docs[m.name] = encodeTree(broken)
		}
	}
	want := map[string]string{}
	for name, data := range docs {
		want[name] = parseOutcome(data)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for name, data := range docs {
				if got := parseOutcome(data); got != want[name] {
					t.Errorf("%s: parsed concurrently %q, alone %q", name, got, want[name])
				}
			}
		})
	}
	wg.Wait()
}

// parseOutcome is Parse's answer as text: the error, or the decoded document's JSON.
func parseOutcome(data []byte) string {
	d, err := inventory.Parse(data)
	if err != nil {
		return "error: " + err.Error()
	}
	out, _ := json.Marshal(d)
	return string(out)
}
