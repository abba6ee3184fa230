package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/upgradescope/upgradescope/collectors/files"
)

// fifteenMiB is a document of tiny items filled up to 15 MiB, under the 16 MiB byte bound.
type fifteenMiB struct{ head, unit, tail string }

// write streams the document to dir/name, so the test process stays small: its memory counts
// in the child's peak until exec.
func (d fifteenMiB) write(t *testing.T, dir, name string) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := strings.Repeat(d.unit, 64<<10/len(d.unit))
	body := 15<<20 - len(d.head) - len(d.tail)
	w := bufio.NewWriter(f)
	w.WriteString(d.head)
	for ; body >= len(chunk); body -= len(chunk) {
		w.WriteString(chunk)
	}
	w.WriteString(strings.Repeat(d.unit, body/len(d.unit)))
	w.WriteString(d.tail)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
}

// scanOfBig scans a directory holding one valid Ingress and docs, streamed to disk so the test
// process stays small.
func scanOfBig(docs map[string]fifteenMiB) func(*testing.T, string) []string {
	return func(t *testing.T, dir string) []string {
		m := filepath.Join(dir, "m")
		write(t, m, "web.yaml", "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: web\n")
		for name, doc := range docs {
			doc.write(t, m, name)
		}
		return []string{"scan", "--files", "m", "--target", "1.37", pinned}
	}
}

// Issue 13, item 1: documents under the byte bound made of millions of tiny items parsed into
// gigabytes (1.4 GiB and 100 s for one file). Each is now refused by its node bound, naming
// file and line, while the decoder's parallel workers read them side by side: the verdict is
// unknown, never ready.
func TestDocumentsOfMillionsOfTinyItemsAreBoundedByNodes(t *testing.T) {
	refused := func(file string) string {
		return fmt.Sprintf("warning: %s:1: document of more than %d YAML nodes refused", file, files.MaxDocumentNodes)
	}
	runHostile(t, []hostile{
		{
			name: "a flow sequence and a block sequence of tiny items are refused and the verdict is unknown",
			args: scanOfBig(map[string]fifteenMiB{
				"flow.yaml":  {"items: [", "1,", "1]\n"},
				"block.yaml": {"items:\n", "- 1\n", ""},
			}),
			code: 2,
			want: []string{"VERDICT UNKNOWN", "2 document(s) could not be decoded", refused("flow.yaml"), refused("block.yaml"),
				"verdict unknown (api-usage not assessed)"},
		},
		{
			name: "many tiny keys and a JSON Deployment holding a huge array are refused and the verdict is unknown",
			args: scanOfBig(map[string]fifteenMiB{
				// indented: at column 0 the line scan reads such keys whole, finds no kind and
				// needs no parse; indented, only the parser can say what the mapping holds
				"keys.yaml": {"", "  a: 1\n", ""},
				"dep.json":  {`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"x"},"spec":[`, "1,", "1]}\n"},
			}),
			code: 2,
			want: []string{"VERDICT UNKNOWN", "2 document(s) could not be decoded", refused("keys.yaml"), refused("dep.json"),
				"verdict unknown (api-usage not assessed)"},
		},
		{
			name: "a JSON List of millions of tiny items is read item by item, to the removed API at its end",
			args: scanOfBig(map[string]fifteenMiB{
				"list.json": {`{"apiVersion":"v1","kind":"List","items":[`, "1,", `{"apiVersion":"extensions/v1beta1","kind":"Ingress","metadata":{"name":"last"}}]}`},
			}),
			code: 2,
			want: []string{"VERDICT BLOCKED", "extensions/v1beta1 Ingress removed in 1.22", "list.json:1", "gate failed: 1.37:"},
		},
	})
}
