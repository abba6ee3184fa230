package files

import (
	"bufio"
	"reflect"
	"strings"
	"testing"

	"github.com/upgradescope/upgradescope/inventory"
)

// Recording a judged object from the line scan reads what the parse reads, name, namespace,
// line and warnings alike, or leaves the document to the parse.
func TestTheLineScanRecordsWhatAParseRecords(t *testing.T) {
	const head = "apiVersion: extensions/v1beta1\nkind: Ingress\n"
	tests := []struct {
		name, doc string
		scanned   bool // recorded without a parse
	}{
		{"plain metadata", head + "metadata:\n  name: shop\n  namespace: web\nspec: {}\n", true},
		{"namespace first, comments and blank lines", head + "metadata:\n  # owner: x\n\n  namespace: web # prod\n  name: shop\n", true},
		{"names nested in labels and annotations", head + "metadata:\n  labels:\n    name: not-this\n  annotations:\n    namespace: nor-this\n  name: shop\n  namespace: web\n", true},
		{"metadata indented by four", head + "metadata:\n    name: shop\n    namespace: web\n", true},
		{"quoted values", head + "metadata:\n  name: \"shop\"\n  namespace: 'web'\n", true},
		{"a key given twice", head + "metadata:\n  name: a\n  name: b\n", true},
		{"CRLF line ends", strings.ReplaceAll(head+"metadata:\n  name: shop\n  namespace: web\n", "\n", "\r\n"), true},
		{"kind and apiVersion after metadata", "metadata:\n  name: shop\nkind: Ingress\napiVersion: extensions/v1beta1\n", true},
		{"no namespace", head + "metadata:\n  name: shop\n", true},
		{"a numeric name", head + "metadata:\n  name: 123\n", false},
		{"a boolean name", head + "metadata:\n  name: true\n", false},
		{"a name that is a mapping", head + "metadata:\n  name:\n    x: y\n", false},
		{"a folded name", head + "metadata:\n  name: >-\n    shop\n", false},
		{"flow metadata", head + "metadata: {name: shop, namespace: web}\n", false},
		{"metadata given twice", head + "metadata:\n  name: a\nmetadata:\n  name: b\n", false},
		{"metadata holding a sequence", head + "metadata:\n- name: a\n", false},
		{"a quoted key", head + "metadata:\n  \"name\": shop\n", false},
		{"a suppression annotation", head + "metadata:\n  name: shop\n  annotations:\n    " + inventory.AnnotationIgnore + ": removed-api\n    " + inventory.AnnotationIgnoreReason + ": later\n", false},
		{"a template elsewhere", head + "metadata:\n  name: shop\nspec:\n  host: {{ .Values.host }}\n", false},
		{"an anchor on a name", head + "metadata:\n  name: &n shop\n", false},
		{"no metadata", head + "spec: {}\n", false},
		{"a name continued on the next line", head + "metadata:\n  name: a\n    b\n", false},
		{"a kind continued on the next line", "apiVersion: extensions/v1beta1\nkind: Ingress\n  Route\nmetadata:\n  name: a\n", false},
		{"a top-level line that is no key", head + "metadata:\n  name: a\nIngress\n", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			scan, parse := decodeText(tt.doc, false), decodeText(tt.doc, true)
			if !reflect.DeepEqual(scan.observed.usage(), parse.observed.usage()) || !reflect.DeepEqual(scan.warnings, parse.warnings) ||
				scan.objects != parse.objects {
				t.Errorf("scan read %+v %v, the parse %+v %v", scan.observed.usage(), scan.warnings, parse.observed.usage(), parse.warnings)
			}
			doc := &yamlDoc{startLine: 1}
			for n, line := range strings.SplitAfter(tt.doc, "\n") {
				if line != "" {
					doc.scanLine([]byte(line), n+1)
					doc.text.WriteString(line)
				}
			}
			if got := newFileDecoder("f.yaml", testOptions()).recordScanned(doc); got != tt.scanned {
				t.Errorf("recorded from the scan: %v, want %v", got, tt.scanned)
			}
		})
	}
}

func decodeText(text string, parseAll bool) fileResult {
	d := newFileDecoder("f.yaml", testOptions())
	d.parseAll = parseAll
	d.decodeYAMLStream(bufio.NewReader(strings.NewReader(text)))
	return d.res
}

// FuzzLineScanRecordsWhatAParseRecords: whatever valid YAML the text is, recording from the
// line scan gives the objects, lines and warnings the parse gives. (Text the parser refuses
// may be recorded by the scan where the parse warns: neither verdict is ready.)
func FuzzLineScanRecordsWhatAParseRecords(f *testing.F) {
	f.Add("apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata:\n  name: shop\n  namespace: web\n---\napiVersion: v1\nkind: ConfigMap\n")
	f.Add("kind: Ingress\napiVersion: extensions/v1beta1\nmetadata:\n    labels:\n      name: x\n    name: 'a'\n")
	f.Fuzz(func(t *testing.T, text string) {
		scan, parse := decodeText(text, false), decodeText(text, true)
		if len(parse.warnings) > 0 {
			return
		}
		if !reflect.DeepEqual(scan.observed.usage(), parse.observed.usage()) || !reflect.DeepEqual(scan.warnings, parse.warnings) ||
			scan.objects != parse.objects {
			t.Errorf("scan read %+v %v, the parse %+v %v", scan.observed.usage(), scan.warnings, parse.observed.usage(), parse.warnings)
		}
	})
}
