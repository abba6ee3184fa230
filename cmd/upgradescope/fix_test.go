package main

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fixGoldenCases are fix's outputs held whole, as TestCLIGolden holds scan's.
var fixGoldenCases = []goldenCase{
	{name: "fix-examples", cmd: "fix --files ../../examples/manifests --target 1.37"},
	{name: "fix-examples-json", cmd: "fix --files ../../examples/manifests --target 1.37 -o json"},
	{name: "fix-examples-served", cmd: "fix --files ../../examples/manifests/flowcontrol.yaml --target 1.28"},
	{name: "fix-target-missing", cmd: "fix --files ../../examples/manifests"},
	{name: "fix-exclude-ignorefile", cmd: "fix --files testdata/exclude/bookinfo-ignorefile --target 1.37"},
}

func TestFixGolden(t *testing.T) {
	for _, tc := range fixGoldenCases {
		t.Run(tc.name, func(t *testing.T) {
			tmp := t.TempDir()
			r := runCLI(t, goldenArgs(tc.cmd, tmp)...)
			got := normalizeGolden(fmt.Sprintf("$ upgradescope %s\n--- stdout\n%s--- stderr\n%s--- exit %d\n", tc.cmd, r.stdout, r.stderr, r.code), tmp)
			path := filepath.Join("testdata", "golden", tc.name+".txt")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("read golden (go test -run TestFixGolden -update, then read it): %v", err)
			}
			if got != string(want) {
				t.Errorf("%s differs:\n%s", path, lineDiff(string(want), got))
			}
		})
	}
}

// copyExamples copies examples/manifests into a new directory.
func copyExamples(t *testing.T) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(examples, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(examples, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// The done-when: fix --write turns the examples' Ingress and FlowSchema into served
// versions, and a scan of the result finds no removed API any more.
func TestFixWriteLeavesNoRemovedAPIForScanToFind(t *testing.T) {
	dir := copyExamples(t)
	before := removedAPIFindings(t, dir)
	if len(before) == 0 {
		t.Fatal("the examples hold no removed API before the fix; the test proves nothing")
	}
	if r := runCLI(t, "fix", "--files", dir, "--target", "1.37", "--write"); r.code != 0 {
		t.Fatalf("fix --write: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if after := removedAPIFindings(t, dir); len(after) != 0 {
		t.Errorf("after fix --write, scan still finds removed APIs: %v (before: %v)", after, before)
	}
	if r := runCLI(t, "fix", "--files", dir, "--target", "1.37"); r.code != 0 || r.stdout != "" {
		t.Errorf("a second fix: exit %d, output %q; want 0 and nothing to change", r.code, r.stdout)
	}
}

// removedAPIFindings are the keys of the removed-api findings a scan of dir at 1.37 reports.
func removedAPIFindings(t *testing.T, dir string) []string {
	t.Helper()
	r := runCLI(t, "scan", "--files", dir, "--target", "1.37", "-o", "json", "--fail-on", "never", pinned)
	if r.code != 0 {
		t.Fatalf("scan: exit %d\n%s", r.code, r.stderr)
	}
	var rep struct {
		Targets []struct {
			Findings []struct{ Key, Category string }
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, tg := range rep.Targets {
		for _, f := range tg.Findings {
			if f.Category == "removed-api" {
				keys = append(keys, f.Key)
			}
		}
	}
	return keys
}

func TestFixExitsWithTheDocumentedCodes(t *testing.T) {
	dir := t.TempDir()
	served := write(t, dir, "served/svc.yaml", "apiVersion: v1\nkind: Service\nmetadata: {name: a}\n")
	manual := write(t, dir, "manual/pdb.yaml", "apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata: {name: a}\nspec:\n  selector: {}\n  minAvailable: 1\n")
	broken := write(t, dir, "broken/x.yaml", "a: 1\n--- nope\n")
	for _, tc := range []struct {
		name string
		args []string
		code int
		say  string
	}{
		{"nothing to change is 0", []string{"--files", served}, 0, ""},
		{"something would change is 2", []string{"--files", examples}, 2, "would change"},
		{"something needs a person is 3", []string{"--files", manual}, 3, "need a person"},
		{"needs a person stays 3 with --write", []string{"--files", manual, "--write"}, 3, "need a person"},
		{"bad input is 1 naming file:line", []string{"--files", broken}, 1, "x.yaml:2:"},
		{"a bad target is 1", []string{"--files", served, "--target", "one"}, 1, "--target"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"fix", "--target", "1.37"}, tc.args...)
			r := runCLI(t, args...)
			if r.code != tc.code || !strings.Contains(r.stderr, tc.say) {
				t.Errorf("exit %d, stderr %q; want %d saying %q", r.code, r.stderr, tc.code, tc.say)
			}
		})
	}
	if b, _ := os.ReadFile(manual); !strings.Contains(string(b), "policy/v1beta1") {
		t.Error("--write changed a document that needs a person")
	}
}

// The README's fix example is pasted output: it must be what fix prints, line for line, as
// the golden TestFixGolden holds to the real command.
func TestTheREADMEsFixExampleIsWhatFixPrints(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	golden, err := os.ReadFile("testdata/golden/fix-examples.txt")
	if err != nil {
		t.Fatal(err)
	}
	_, stdout, _ := strings.Cut(string(golden), "--- stdout\n")
	stdout, _, _ = strings.Cut(stdout, "--- stderr\n")
	example := strings.Join(exampleBlock(string(readme), "    --- a/flowcontrol.yaml"), "\n")
	if strings.TrimSpace(example) != strings.TrimSpace(stdout) {
		t.Errorf("the README's fix example is not what fix prints; paste the output of its command:\n%s", lineDiff(strings.TrimSpace(stdout), strings.TrimSpace(example)))
	}
}
