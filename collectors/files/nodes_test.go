package files

import (
	"cmp"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	yaml "go.yaml.in/yaml/v3"
)

// tiny repeats unit until the document's node bound passes MaxDocumentNodes, as a document
// of many tiny items does in a fraction of the 16 MiB byte bound.
func tiny(head, unit, tail string) string {
	return head + strings.Repeat(unit, MaxDocumentNodes) + tail
}

func TestDocumentsOfTooManyNodesAreRefusedAndNamed(t *testing.T) {
	tests := []struct {
		name, file, content string
		line                int
		hint                string
	}{
		{name: "a flow sequence of tiny items is refused", file: "flow.yaml", content: tiny("items: [", "1,", "1]\n"), line: 1},
		{name: "a flow sequence inside a judged kind is refused", file: "dep.yaml", content: tiny("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\nspec: [", "1,", "1]\n"), line: 1},
		{name: "a block sequence of one item a line is refused", file: "block.yaml", content: tiny("items:\n", "- 1\n", ""), line: 1},
		// At column 0 the line scan reads such keys with certainty, and a document that names
		// no kind needs no parse; indented, only the parser can say what the mapping holds.
		{name: "an indented mapping of many tiny keys is refused", file: "keys.yaml", content: tiny("", "  a: 1\n", ""), line: 1},
		{name: "a refused document is named by its own first line", file: "later.yaml", content: ing("ok") + "---\n" + tiny("items: [", "1,", "1]\n"), line: 7},
		{name: "a YAML List whose items are one flow sequence is refused with the hint to export it as JSON", file: "list.yaml", content: tiny("apiVersion: v1\nkind: List\nitems: [", "{apiVersion: v1, kind: Pod},", "1]\n"), line: 1,
			hint: "export it as JSON (kubectl get -o json), whose List items are read one at a time"},
		{name: "one item of a YAML List past the bound is refused by the line it starts on", file: "items.yaml", content: "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n" + tiny("- apiVersion: apps/v1\n  kind: Deployment\n  spec: [", "1,", "1]\n"), line: 6},
		{name: "a JSON object of a judged kind holding a huge array is refused", file: "dep.json", content: tiny(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"x"},"spec":[`, "1,", "1]}\n"), line: 1},
		{name: "a huge JSON object in a List is refused by the line it starts on", file: "list.json", content: "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[\n" + tiny(`{"apiVersion":"extensions/v1beta1","kind":"Ingress","spec":[`, "1,", "1]}]}\n"), line: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := collect(t, map[string]string{tt.file: tt.content, "z.yaml": ing("kept")})
			hint := cmp.Or(tt.hint, "split it into smaller documents")
			want := fmt.Sprintf("%s:%d: document of more than %d YAML nodes refused: %s", tt.file, tt.line, MaxDocumentNodes, hint)
			var got []string
			for _, w := range res.Warnings {
				got = append(got, w.String())
				if w.String() == want && !w.Partial {
					t.Errorf("%s is not partial: the verdict could be ready without the document", w)
				}
			}
			if !reflect.DeepEqual(got, []string{want}) {
				t.Errorf("warnings = %q, want %q", got, want)
			}
			if refs := refs(res); len(refs) == 0 || !strings.Contains(refs[len(refs)-1], "/kept z.yaml:1") {
				t.Errorf("objects = %q, want the other file still read", refs)
			}
		})
	}
}

func TestManyTinyValuesInReadableShapesAreStillRead(t *testing.T) {
	var stream, items strings.Builder
	for i := range 20_000 {
		fmt.Fprintf(&stream, `{"apiVersion":"extensions/v1beta1","kind":"Ingress","metadata":{"name":"i%d"}}`+"\n", i)
	}
	items.WriteString(`{"apiVersion":"v1","kind":"List","items":[`)
	items.WriteString(strings.Repeat("1,", MaxDocumentNodes))
	items.WriteString("\n" + `{"apiVersion":"extensions/v1beta1","kind":"Ingress","metadata":{"name":"last"}}]}`)
	tests := []struct {
		name, file, content string
		objects             int
	}{
		{name: "a JSON stream of many small objects is read object by object", file: "stream.json", content: stream.String(), objects: 20_000},
		{name: "a JSON List of many tiny items is read item by item", file: "list.json", content: items.String(), objects: 1},
		{name: "a kubectl YAML List export of many objects is read item by item", file: "export.yaml", content: kubectlList(40_000), objects: 40_000},
		{name: "a document just under the bound is parsed", file: "big.yaml", content: ing("big") + "spec:\n" + strings.Repeat("  k: v\n", MaxDocumentNodes/2-8), objects: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := collect(t, map[string]string{tt.file: tt.content})
			if len(res.Warnings) > 0 {
				t.Errorf("warnings = %v, want none", res.Warnings)
			}
			recorded := 0
			for _, u := range res.APIUsage {
				recorded += u.Count
			}
			if res.Objects != tt.objects || recorded != tt.objects {
				t.Errorf("objects = %d (%d recorded), want %d", res.Objects, recorded, tt.objects)
			}
		})
	}
}

// kubectlList is a List as `kubectl get ingress -A -o yaml` writes it, of n removed Ingresses.
func kubectlList(n int) string {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nitems:\n")
	for i := range n {
		fmt.Fprintf(&b, "- apiVersion: extensions/v1beta1\n  kind: Ingress\n  metadata:\n    name: i%d\n    namespace: web\n  spec:\n    rules:\n    - host: a.example\n", i)
	}
	b.WriteString("kind: List\nmetadata:\n  resourceVersion: \"\"\n")
	return b.String()
}

func TestAYAMLListItemKeepsItsLine(t *testing.T) {
	list := kubectlList(MaxDocumentNodes / 10)
	res := collect(t, map[string]string{"l.yaml": "# export\n" + list})
	got := refs(res)
	if len(res.APIUsage) != 1 || res.APIUsage[0].Count != MaxDocumentNodes/10 {
		t.Fatalf("usage = %+v, want one row of %d Ingresses", res.APIUsage, MaxDocumentNodes/10)
	}
	if got[0] != "extensions/v1beta1 Ingress web/i0 l.yaml:4" || got[1] != "extensions/v1beta1 Ingress web/i1 l.yaml:12" {
		t.Errorf("first objects = %q, want l.yaml:4 and l.yaml:12", got[:2])
	}
}

func TestAJSONListItemKeepsItsLine(t *testing.T) {
	res := collect(t, map[string]string{"l.json": "{\"apiVersion\":\"v1\",\"kind\":\"List\",\"items\":[1, \"a,]\\\"\", [2,{}],\n {\"apiVersion\":\"v1\",\"kind\":\"Endpoints\",\"metadata\":{\"name\":\"e\"}}\n]}\n"})
	if got, want := refs(res), []string{"v1 Endpoints /e l.json:2"}; !reflect.DeepEqual(got, want) {
		t.Errorf("objects = %q, want %q", got, want)
	}
}

func TestAManifestInMemoryNamesTheDocumentItRefuses(t *testing.T) {
	manifest := ing("a") + "---\n# Source: c/templates/x.yaml\n" + tiny("items: [", "1,", "1]\n")
	usage, warnings := Manifest("manifest", []byte(manifest), testOptions())
	if len(usage) != 1 || usage[0].Count != 1 {
		t.Errorf("usage = %+v, want the Ingress before the refused document", usage)
	}
	want := fmt.Sprintf("manifest:7: document of more than %d YAML nodes refused: split it into smaller documents", MaxDocumentNodes)
	if len(warnings) != 1 || warnings[0].String() != want || !warnings[0].Partial {
		t.Errorf("warnings = %v, want one partial %q", warnings, want)
	}
}

// countNodes counts the nodes of a parsed tree; an alias is one node, never expanded.
func countNodes(n *yaml.Node) int {
	c := 1
	for _, k := range n.Content {
		c += countNodes(k)
	}
	return c
}

func TestTheNodeBoundIsAtLeastTheNodesParsed(t *testing.T) {
	for _, doc := range []string{
		"a", "a: 1", "a:\n  b: c", "- a: 1", "[a: 1]", "{a: 1}", "[[]]", "[a, b]", "{a, b}", "{a, b,}",
		"? a\n? b", "? a\n: b", "[a: 1, b: 2]", "- - - a", "a: &x [1]\nb: *x", "<<: {a: 1}", "- |\n  text, [ { : -\n",
	} {
		var root yaml.Node
		if err := yaml.Unmarshal([]byte(doc), &root); err != nil {
			t.Fatalf("%q: %v", doc, err)
		}
		if got, parsed := nodeBound([]byte(doc)), countNodes(&root); got < parsed {
			t.Errorf("nodeBound(%q) = %d, but it parses into %d nodes", doc, got, parsed)
		}
	}
}

func TestTheParseBudgetIsNeverOverdrawnByParallelCallers(t *testing.T) {
	const total = 100
	b := newNodeBudget(total)
	var mu sync.Mutex
	held, peak := 0, 0
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 200 {
				n := []int{total, 1, 40, 70}[(i+j)%4] // a whole-budget caller is served too
				b.acquire(n)
				mu.Lock()
				held += n
				peak = max(peak, held)
				mu.Unlock()
				mu.Lock()
				held -= n
				mu.Unlock()
				b.release(n)
			}
		}()
	}
	wg.Wait()
	if peak > total {
		t.Errorf("callers held %d nodes at once, want at most %d", peak, total)
	}
}
