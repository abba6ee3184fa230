package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
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

// Documents under the byte bound made of millions of tiny items parsed into gigabytes (1.4
// GiB and 100 s for one file on main). Each is now refused by its node bound, naming file and
// line, while the decoder's parallel workers read them side by side: the verdict is unknown,
// never ready, below 256 MiB peak RSS (the kernel's count for the child; see
// TestAGzipBombStaysBelow256MiB for why it is an upper bound).
func TestDocumentsOfMillionsOfTinyItemsStayBelow256MiB(t *testing.T) {
	buildBinary(t)
	refused := func(file string) string {
		return fmt.Sprintf("warning: %s:1: document of more than %d YAML nodes refused", file, files.MaxDocumentNodes)
	}
	tests := []struct {
		name   string
		files  map[string]fifteenMiB
		code   int
		stdout []string
		stderr []string
	}{
		{
			name: "a flow sequence and a block sequence of tiny items are refused and the verdict is unknown",
			files: map[string]fifteenMiB{
				"flow.yaml":  {"items: [", "1,", "1]\n"},
				"block.yaml": {"items:\n", "- 1\n", ""},
			},
			code:   2,
			stdout: []string{"VERDICT UNKNOWN", "2 document(s) could not be decoded"},
			stderr: []string{refused("flow.yaml"), refused("block.yaml"), "verdict unknown (api-usage not assessed)"},
		},
		{
			name: "many tiny keys and a JSON Deployment holding a huge array are refused and the verdict is unknown",
			files: map[string]fifteenMiB{
				"keys.yaml": {"", "a: 1\n", ""},
				"dep.json":  {`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"x"},"spec":[`, "1,", "1]}\n"},
			},
			code:   2,
			stdout: []string{"VERDICT UNKNOWN", "2 document(s) could not be decoded"},
			stderr: []string{refused("keys.yaml"), refused("dep.json"), "verdict unknown (api-usage not assessed)"},
		},
		{
			name: "a JSON List of millions of tiny items is read item by item, to the removed API at its end",
			files: map[string]fifteenMiB{
				"list.json": {`{"apiVersion":"v1","kind":"List","items":[`, "1,", `{"apiVersion":"extensions/v1beta1","kind":"Ingress","metadata":{"name":"last"}}]}`},
			},
			code:   2,
			stdout: []string{"VERDICT BLOCKED", "extensions/v1beta1 Ingress removed in 1.22", "list.json:1"},
			stderr: []string{"gate failed: 1.37:"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, "web.yaml", "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: web\n")
			for name, doc := range tt.files {
				doc.write(t, dir, name)
			}
			cmd := exec.Command(agentBin, "scan", "--files", dir, "--target", "1.37", pinned)
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			_ = cmd.Run()
			if code := cmd.ProcessState.ExitCode(); code != tt.code {
				t.Errorf("exit %d, want %d\n%s", code, tt.code, stderr.String())
			}
			for _, want := range tt.stdout {
				if !strings.Contains(stdout.String(), want) {
					t.Errorf("stdout lacks %q:\n%s", want, stdout.String())
				}
			}
			for _, want := range tt.stderr {
				if !strings.Contains(stderr.String(), want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
				}
			}
			peak := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10 // KiB on Linux
			t.Logf("peak RSS %d MiB", peak>>20)
			if peak > 256<<20 {
				t.Errorf("peak RSS %d MiB, want under 256 MiB", peak>>20)
			}
		})
	}
}
