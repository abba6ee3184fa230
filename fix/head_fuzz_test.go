package fix

import (
	"os"
	"path/filepath"
	"testing"

	yaml "go.yaml.in/yaml/v3"
)

// FuzzHeadReadsWhatAParseReads holds the line scan that lets fix skip served documents
// unparsed to the YAML reader: whenever the scan says what a document is, a parse of it
// reads the same apiVersion and kind, or the document is no object at all.
func FuzzHeadReadsWhatAParseReads(f *testing.F) {
	paths, _ := filepath.Glob(filepath.Join("..", "convert", "testdata", "fixtures", "*.yaml"))
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(string(b))
		}
	}
	for _, s := range []string{
		"apiVersion: &a extensions/v1beta1\nkind: Ingress\n",
		"apiVersion: !!str extensions/v1beta1\nkind: Ingress\n",
		"apiVersion: \"ext\\x65nsions/v1beta1\"\nkind: Ingress\n",
		"a: \"x\napiVersion: v1\"\nkind: Pod\napiVersion: extensions/v1beta1\n",
		"apiVersion: v1 # served\nkind: 'Pod'\n",
		"subsets:\n- addresses: [{ip: 10.0.0.1}]\napiVersion: v1\nkind: Endpoints\n",
		"kind: Pod\n...\napiVersion: extensions/v1beta1\n",
		"description: don't 'quote' me\napiVersion: v1\nkind: ConfigMap\n",
		"apiVersion: 61\nkind: true\n",
		"---\napiVersion: extensions/v1beta1\nkind: Ingress\n",
		"---\n---\napiVersion: v1\nkind: Pod\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		h := readHead(source{text: []byte(text)})
		if !h.ok {
			return
		}
		var n yaml.Node
		if yaml.Unmarshal([]byte(text), &n) != nil || len(n.Content) == 0 || n.Content[0].Kind != yaml.MappingNode {
			return // not an object: skipping it unparsed loses nothing
		}
		var obj struct {
			APIVersion any `yaml:"apiVersion"`
			Kind       any `yaml:"kind"`
		}
		if n.Decode(&obj) != nil {
			return
		}
		if obj.APIVersion != h.apiVersion || obj.Kind != h.kind {
			t.Fatalf("the line scan read %q %q, the parse %#v %#v", h.apiVersion, h.kind, obj.APIVersion, obj.Kind)
		}
	})
}
