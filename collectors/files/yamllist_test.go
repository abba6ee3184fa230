package files

import (
	"bytes"
	"reflect"
	"testing"
)

// The split reads what a whole parse reads, object for object and line for line, in every
// layout a List is written in; only its memory differs.
func TestSplittingAYAMLListReadsWhatAWholeParseReads(t *testing.T) {
	tests := []struct{ name, list string }{
		{"kubectl's layout, entries at column 0", kubectlList(3)},
		{"entries indented under items", "apiVersion: v1\nkind: List\nitems:\n  - apiVersion: extensions/v1beta1\n    kind: Ingress\n    metadata: {name: a}\n  - apiVersion: extensions/v1beta1\n    kind: Ingress\n    metadata:\n      name: b\n"},
		{"an entry's content on the line after its dash", "kind: List\napiVersion: v1\nitems:\n-\n  apiVersion: extensions/v1beta1\n  kind: Ingress\n  metadata: {name: a}\n- apiVersion: extensions/v1beta1\n  kind: Ingress\n  metadata: {name: b}\n"},
		{"comments, blank lines and CRLF between entries", "apiVersion: v1\r\nitems: # exported\r\n\r\n- apiVersion: extensions/v1beta1\r\n  # a comment\r\n  kind: Ingress\r\n\r\n  metadata: {name: a}\r\n- apiVersion: extensions/v1beta1\r\n  kind: Ingress\r\n  metadata: {name: b}\r\nkind: List\r\n"},
		{"a block scalar inside an entry", "apiVersion: v1\nitems:\n- apiVersion: extensions/v1beta1\n  kind: Ingress\n  metadata:\n    name: a\n    annotations:\n      note: |\n        - not an entry\n        items:\n- apiVersion: extensions/v1beta1\n  kind: Ingress\n  metadata: {name: b}\nkind: List\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			whole := listDecoder()
			whole.parseYAML(listDoc(tt.list))
			split := listDecoder()
			if !split.parseYAMLListItems(listDoc(tt.list)) {
				t.Fatal("the List was not split")
			}
			got, want := split.res.observed.usage(), whole.res.observed.usage()
			if len(want) == 0 || !reflect.DeepEqual(got, want) {
				t.Errorf("split read %+v, a whole parse %+v", got, want)
			}
			if len(split.res.warnings) > 0 {
				t.Errorf("warnings = %v, want none", split.res.warnings)
			}
		})
	}
}

func TestAnItemThatCannotStandAloneIsAPartialWarning(t *testing.T) {
	list := "apiVersion: v1\nitems:\n- &shared\n  apiVersion: extensions/v1beta1\n  kind: Ingress\n  metadata: {name: a}\n- *shared\nkind: List\n"
	d := listDecoder()
	d.parseYAMLListItems(listDoc(list))
	if len(d.res.warnings) != 1 || d.res.warnings[0].Line != 7 || !d.res.warnings[0].Partial {
		t.Errorf("warnings = %+v, want one partial warning on line 7", d.res.warnings)
	}
}

func listDecoder() *fileDecoder { return newFileDecoder("l.yaml", testOptions()) }

func listDoc(text string) *yamlDoc {
	doc := &yamlDoc{startLine: 1, kind: "List", apiVersion: "v1"}
	doc.text = *bytes.NewBufferString(text)
	return doc
}
