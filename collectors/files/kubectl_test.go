package files

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/resource"

	"github.com/upgradescope/upgradescope/inventory"
)

// kubectlReads returns the objects kubectl would apply from a file, read by kubectl's own
// reader: cli-runtime's resource builder, local and unstructured, flattening Lists, as
// `kubectl apply -f` reads it. Objects it could not decode are left out, as kubectl applies
// none of them.
func kubectlReads(path string) []objectKey {
	infos, _ := resource.NewLocalBuilder().Unstructured().Flatten().ContinueOnError().
		FilenameParam(false, &resource.FilenameOptions{Filenames: []string{path}}).
		Do().Infos()
	var out []objectKey
	for _, info := range infos {
		u, ok := info.Object.(*unstructured.Unstructured)
		if !ok {
			continue
		}
		key := objectKey{apiVersion: stringAt(u.Object, "apiVersion"), kind: stringAt(u.Object, "kind")}
		if meta, ok := u.Object["metadata"].(map[string]any); ok {
			key.namespace, key.name = stringAt(meta, "namespace"), stringAt(meta, "name")
		}
		out = append(out, key)
	}
	return out
}

func stringAt(m map[string]any, key string) string {
	s, _ := m[key].(string)
	return s
}

// objectKey is what a finding names an object by.
type objectKey struct{ apiVersion, kind, namespace, name string }

// comparable is the key with each run of replaced invalid UTF-8 as one U+FFFD: decoders
// replace invalid bytes one by one or by sequence, and no API, kind or name holds them.
func (k objectKey) comparable() objectKey {
	fix := func(s string) string {
		s = strings.ToValidUTF8(s, "\uFFFD")
		for strings.Contains(s, "\uFFFD\uFFFD") {
			s = strings.ReplaceAll(s, "\uFFFD\uFFFD", "\uFFFD")
		}
		return s
	}
	return objectKey{fix(k.apiVersion), fix(k.kind), fix(k.namespace), fix(k.name)}
}

func (k objectKey) String() string {
	return fmt.Sprintf("%s %s %s/%s", k.apiVersion, k.kind, k.namespace, k.name)
}

// recorded is what a decode listed: every object of a judged, unknown or custom API.
func recorded(res fileResult) map[objectKey]bool {
	out := map[objectKey]bool{}
	for _, rows := range [][]inventory.APIUsage{res.observed.usage(), res.custom.usage()} {
		for _, u := range rows {
			av := u.Version
			if u.Group != "" {
				av = u.Group + "/" + u.Version
			}
			for _, o := range u.Objects {
				out[objectKey{av, u.Kind, o.Namespace, o.Name}.comparable()] = true
			}
		}
	}
	return out
}

// missedByUs names the objects kubectl reads from data, of APIs the collector lists, that
// the collector neither recorded nor covered with a warning that the file was not fully read.
func missedByUs(t *testing.T, data []byte, name string) []string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	d := newFileDecoder(name, testOptions())
	res := decodeFile(path, name, testOptions())
	for _, w := range res.warnings {
		if w.Partial {
			return nil // not read: the verdict cannot be ready
		}
	}
	ours := recorded(res)
	var missed []string
	for _, k := range kubectlReads(path) {
		if k.apiVersion != "" && k.kind != "" && d.lists(k.apiVersion, k.kind) && !ours[k.comparable()] {
			missed = append(missed, k.String())
		}
	}
	return missed
}

// kubectlSeeds are inputs where a fast path once read a file differently from kubectl.
var kubectlSeeds = []string{
	// issue 30, item 1: a key written with a space before its colon, after a decoy
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: decoy\napiVersion : extensions/v1beta1\nkind : Ingress\n",
	// issue 30, item 1: column-0 lines continuing a quoted scalar are no keys
	"apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata:\n  name: hidden\n  annotations:\n    note: \"start\napiVersion: v1\nkind: ConfigMap\nend\"\n",
	"apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata:\n  name: hidden\n  annotations:\n    note: 'start\napiVersion: v1\nkind: ConfigMap\nend'\n",
	"apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata: {name: hidden, annotations: {note: x,\napiVersion: v1,\nkind: ConfigMap}}\n",
	// issue 30, item 1: tagged and anchored keys
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: decoy\n!!str apiVersion: extensions/v1beta1\n!!str kind: Ingress\n",
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: decoy\n&a apiVersion: extensions/v1beta1\n&b kind: Ingress\n",
	// a merge key after the keys it sets: kubectl's reader lets it override them
	"kind: ConfigMap\napiVersion: v1\nmetadata: {name: m}\n<<: {kind: Ingress, apiVersion: extensions/v1beta1}\n",
	// issue 30, item 2: JSON keys differing only in case are other keys to kubectl
	`{"apiVersion":"extensions/v1beta1","kind":"Ingress","metadata":{"name":"j"},"APIVERSION":"v1","KIND":"ConfigMap"}`,
	`{"apiVersion":"extensions/v1beta1","kind":"Ingress","metadata":{"name":"j"},"ApiVersion":"v1","Kind":"ConfigMap"}`,
	// issue 30, item 3: a merge chain deeper than the alias bound
	mergeChain(20),
	// every object with items is a List to kubectl, and items without a kind take the List's
	"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\nitems:\n- {apiVersion: extensions/v1beta1, kind: Ingress, metadata: {name: in-items}}\n",
	"apiVersion: extensions/v1beta1\nkind: IngressList\nitems:\n- metadata: {name: inherits}\n",
	`{"apiVersion":"extensions/v1beta1","kind":"IngressList","items":[{"metadata":{"name":"inherits"}}]}`,
	"apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: List\n  items:\n  - {apiVersion: extensions/v1beta1, kind: Ingress, metadata: {name: nested}}\n",
	// shapes where YAML readers are known to differ, for the fuzzer to start from
	"%YAML 1.1\n---\napiVersion: extensions/v1beta1\nkind: Ingress\nmetadata: {name: directive}\n",
	"{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\"}\napiVersion: extensions/v1beta1\nkind: Ingress\nmetadata:\n  name: after-json\n",
	"? apiVersion\n: extensions/v1beta1\nkind: Ingress\nmetadata: {name: explicit}\n",
	"  apiVersion: extensions/v1beta1\n  kind: Ingress\n  metadata:\n    name: indented\n",
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n...\napiVersion: extensions/v1beta1\nkind: Ingress\n",
	"apiVersion: extensions/v1beta1\r\nkind: Ingress\r\nmetadata:\r\n  name: crlf\r\n",
	"apiVersion: \"extensions/v1beta1\"\nkind: 'Ingress'\nmetadata:\n  name: \"q\\x41\"\n  namespace: yes\n",
	"apiVersion: v1\nkind: ConfigMap\ndata:\n  script: |\n    kind: Ingress\n    \"open\nmetadata: {name: block}\n",
	"base: &b {apiVersion: extensions/v1beta1, kind: Ingress}\n<<: [*b, {kind: ConfigMap}]\nmetadata: {name: seq}\n",
	"apiVersion: v1\nkind: ConfigMap\nkind:\n  Ingress\napiVersion:\n  extensions/v1beta1\n",
	// line breaks other than "\n" (review): a lone CR, NEL, LS and PS after a comment, on an
	// indented line and in a value
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: decoy\n#\rapiVersion: extensions/v1beta1\rkind: Ingress\n",
	"x: 1\rapiVersion: extensions/v1beta1\rkind: Ingress\rmetadata:\r  name: h\n",
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: decoy\n  x: y\u0085apiVersion: extensions/v1beta1\u0085kind: Ingress\n",
	"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: decoy\n# \u2028apiVersion: extensions/v1beta1\u2029kind: Ingress\n",
	// "---#" separates documents to kubectl
	"apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata:\n  name: hidden\n---#: y\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: decoy\n",
	// white space kubectl skips before telling JSON from YAML
	"\u00a0{\"apiVersion\":\"extensions/v1beta1\",\"kind\":\"Ingress\",\"metadata\":{\"name\":\"n\"}}\n---\napiVersion: v1\nkind: ConfigMap\n",
	"\f{\"apiVersion\":\"extensions/v1beta1\",\"kind\":\"Ingress\",\"metadata\":{\"name\":\"n\"}}\n",
	// tags kubectl's reader resolves as YAML 1.1 does
	"apiVersion: !!binary ZXh0ZW5zaW9ucy92MWJldGEx\nkind: !x Ingress\nmetadata: {name: t}\n",
	"apiVersion: extensions/v1beta1\nkind: ConfigMap\n!!binary a2luZA==: Ingress\nmetadata: {name: t}\n",
	"apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata: {name: !x t}\n",
}

// mergeChain is an Ingress whose apiVersion and kind are reached through n nested merge keys.
func mergeChain(n int) string {
	var b strings.Builder
	b.WriteString("a0: &a0 {apiVersion: extensions/v1beta1, kind: Ingress}\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "a%d: &a%d {<<: *a%d}\n", i, i, i-1)
	}
	fmt.Fprintf(&b, "<<: *a%d\nmetadata: {name: deep}\n", n-1)
	return b.String()
}

// Every seed that once made a fast path read a file differently from kubectl is read as
// kubectl reads it, or reported as not read.
func TestWhatKubectlWouldApplyIsRecorded(t *testing.T) {
	for i, seed := range kubectlSeeds {
		for _, name := range []string{"f.yaml", "f.json"} {
			if missed := missedByUs(t, []byte(seed), name); len(missed) > 0 {
				t.Errorf("seed %d as %s: kubectl reads %v, which we neither record nor call unread:\n%s", i, name, missed, seed)
			}
		}
	}
}

// A List past the node bound is split by its lines only when the scan read it with
// certainty: with a second items key, kubectl reads the last, which the split would miss.
func TestAListPastTheNodeBoundWithTwoItemsKeysIsNotSplit(t *testing.T) {
	for _, second := range []string{"items :", "!!str items:", "\"items\":"} {
		list := tiny("apiVersion: v1\nkind: List\nitems:\n", "- {}\n", second+"\n- {apiVersion: extensions/v1beta1, kind: Ingress, metadata: {name: second}}\n")
		if missed := missedByUs(t, []byte(list), "list.yaml"); len(missed) > 0 {
			t.Errorf("with %q, kubectl reads %v, which we neither record nor call unread", second, missed)
		}
	}
}

// FuzzWhatKubectlReadsIsRecorded is the differential test of the files collector against
// kubectl's own reader: every object cli-runtime reads from an input, of an API we list, is
// recorded by us, or the file is reported as not read (a partial warning: never ready).
func FuzzWhatKubectlReadsIsRecorded(f *testing.F) {
	for _, seed := range kubectlSeeds {
		f.Add([]byte(seed))
	}
	f.Add([]byte(ing("a")))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, name := range []string{"f.yaml", "f.json"} {
			if missed := missedByUs(t, data, name); len(missed) > 0 {
				t.Errorf("as %s, kubectl reads %v, which we neither record nor call unread:\n%q", name, missed, data)
			}
		}
	})
}
