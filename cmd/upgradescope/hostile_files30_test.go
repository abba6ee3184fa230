package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// decoy is a ConfigMap read first: a reader that stops trusting its parser after it reads the
// decoy's apiVersion and kind judges the file by the ConfigMap.
const decoy = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: decoy\n"

// hidden is an Ingress whose annotation runs on over column-0 lines that look like keys.
func hidden(open, close string) string {
	return "apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata:\n  name: hidden\n  annotations:\n    note:" +
		open + "start\napiVersion: v1\nkind: ConfigMap\nend" + close + "\n"
}

// Issue 30, items 1-3: whatever kubectl would apply from a file is judged, however the file
// dresses it; a file that cannot be read as kubectl reads it is never ready.
func TestFilesAreJudgedAsKubectlReadsThem(t *testing.T) {
	blocked := []string{"VERDICT BLOCKED", "extensions/v1beta1 Ingress"}
	runHostile(t, []hostile{
		{
			name: "keys with a space before the colon after a decoy (item 1)",
			args: scanOf(map[string]string{"x.yaml": decoy + "apiVersion : extensions/v1beta1\nkind : Ingress\n"}),
			code: 2, want: append(blocked, "x.yaml:5"),
		},
		{
			name: "tagged keys after a decoy (item 1)",
			args: scanOf(map[string]string{"x.yaml": decoy + "!!str apiVersion: extensions/v1beta1\n!!str kind: Ingress\n"}),
			code: 2, want: blocked,
		},
		{
			name: "anchored keys after a decoy (item 1)",
			args: scanOf(map[string]string{"x.yaml": decoy + "&a apiVersion: extensions/v1beta1\n&b kind: Ingress\n"}),
			code: 2, want: blocked,
		},
		{
			name: "quoted keys after a decoy (item 1)",
			args: scanOf(map[string]string{"x.yaml": decoy + "\"apiVersion\": extensions/v1beta1\n'kind': Ingress\n"}),
			code: 2, want: blocked,
		},
		{
			name: "a double-quoted scalar running over column-0 lines (item 1)",
			args: scanOf(map[string]string{"y.yaml": hidden(` "`, `"`)}),
			code: 2, want: append(blocked, "y.yaml:1"),
		},
		{
			name: "a single-quoted scalar opened after a tab (item 1)",
			args: scanOf(map[string]string{"y.yaml": hidden("\t'", "'")}),
			code: 2, want: append(blocked, "y.yaml:1"),
		},
		{
			name: "a flow mapping running over column-0 lines (item 1)",
			args: scanOf(map[string]string{"y.yaml": "apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata: {name: hidden, labels: {a: b,\napiVersion: v1,\nkind: ConfigMap}}\n"}),
			code: 2, want: blocked,
		},
		{
			name: "a kind continued on an indented line is another kind (item 1)",
			args: scanOf(map[string]string{"a.yaml": removedIngress, "k.yaml": "apiVersion: v1\nkind: Config\n  Map\nmetadata:\n  name: c\n"}),
			code: 2, want: blocked,
		},
		{
			name: "a merge key after the keys it overrides, as kubectl's reader merges (item 1)",
			args: scanOf(map[string]string{"m.yaml": decoy + "<<: {apiVersion: extensions/v1beta1, kind: Ingress}\n"}),
			code: 2, want: blocked,
		},
		{
			name: "JSON keys in another case after the real ones (item 2)",
			args: scanOf(map[string]string{"j.json": `{"apiVersion":"extensions/v1beta1","kind":"Ingress","metadata":{"name":"j"},"APIVERSION":"v1","KIND":"ConfigMap"}`}),
			code: 2, want: append(blocked, "j.json:1"),
		},
		{
			name: "JSON keys in mixed case in a List item (item 2)",
			args: scanOf(map[string]string{"j.json": `{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"extensions/v1beta1","kind":"Ingress","metadata":{"name":"j"},"ApiVersion":"v1","Kind":"ConfigMap"}]}`}),
			code: 2, want: blocked,
		},
		{
			name: "a merge chain of 20 levels is read through (item 3)",
			args: scanOf(map[string]string{"deep.yaml": mergeChainManifest(20)}),
			code: 2, want: blocked,
		},
		{
			name: "a merge chain of 2,000 levels is read through (item 3)",
			args: scanOf(map[string]string{"deep.yaml": mergeChainManifest(2000)}),
			code: 2, want: blocked,
		},
		{
			name: "items of an object that is not named a List are applied by kubectl",
			args: scanOf(map[string]string{"l.yaml": decoy + "items:\n- {apiVersion: extensions/v1beta1, kind: Ingress, metadata: {name: x}}\n"}),
			code: 2, want: blocked,
		},
		{
			name: "items of an IngressList that name no kind are Ingresses",
			args: scanOf(map[string]string{"l.yaml": "apiVersion: extensions/v1beta1\nkind: IngressList\nitems:\n- metadata: {name: x}\n"}),
			code: 2, want: blocked,
		},
	})
}

// mergeChainManifest is an Ingress whose apiVersion and kind are reached through n merge keys.
func mergeChainManifest(n int) string {
	var b strings.Builder
	b.WriteString("x0: &a0 {apiVersion: extensions/v1beta1, kind: Ingress}\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "x%d: &a%d {<<: *a%d}\n", i, i, i-1)
	}
	fmt.Fprintf(&b, "<<: *a%d\nmetadata: {name: deep}\n", n-1)
	return b.String()
}

// lattice is 1.5 KB of merge keys, levels deep, each level merging every anchor of the one
// before: following each path costs width^levels lookups.
func lattice(levels, width int) string {
	var b strings.Builder
	b.WriteString("l0: &l0_0 {apiVersion: extensions/v1beta1, kind: Ingress}\n")
	for l := 1; l <= levels; l++ {
		for w := range width {
			fmt.Fprintf(&b, "l%d_%d: &l%d_%d {<<: [", l, w, l, w)
			for p := range width {
				if l == 1 && p > 0 {
					break
				}
				if p > 0 {
					b.WriteString(", ")
				}
				if l == 1 {
					b.WriteString("*l0_0")
				} else {
					fmt.Fprintf(&b, "*l%d_%d", l-1, p)
				}
			}
			b.WriteString("]}\n")
		}
	}
	fmt.Fprintf(&b, "<<: *l%d_0\nmetadata: {name: lattice}\n", levels)
	return b.String()
}

// Issue 30, items 4, 7 and 12: what the walk cannot or may not read is named and makes the
// verdict unknown; no file shape keeps it reading without bound.
func TestTheWalkOfFilesIsBoundedAndSaysWhatItDidNotRead(t *testing.T) {
	cm := map[string]string{"a.yaml": decoy}
	runHostile(t, []hostile{
		{
			name: "a named pipe called *.yaml is reported, not read (item 4)",
			args: func(t *testing.T, dir string) []string {
				mkfifo(t, filepath.Join(dir, "m", "pipe.yaml"))
				return scanOf(cm)(t, dir)
			},
			code: 2, want: []string{"pipe.yaml:0: a FIFO: not read", "VERDICT UNKNOWN"},
		},
		{
			name: "a link to a named pipe is reported, not read (item 4)",
			args: func(t *testing.T, dir string) []string {
				mkfifo(t, filepath.Join(dir, "elsewhere", "pipe"))
				if err := os.MkdirAll(filepath.Join(dir, "m"), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(filepath.Join(dir, "elsewhere", "pipe"), filepath.Join(dir, "m", "link.json")); err != nil {
					t.Fatal(err)
				}
				return scanOf(cm)(t, dir)
			},
			code: 2, want: []string{"link.json:0: symlink to a FIFO: not read", "VERDICT UNKNOWN"},
		},
		{
			name: "a merge-key lattice of 8 levels of 30 aliases is read in bounded time (item 7)",
			args: scanOf(map[string]string{"lattice.yaml": lattice(8, 30)}),
			code: 2, want: []string{"VERDICT BLOCKED", "extensions/v1beta1 Ingress"},
		},
		{
			name: "an alias inside the node it names is reported, not followed (item 7)",
			args: scanOf(map[string]string{"a.yaml": decoy, "loop.yaml": "apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata: &m {<<: *m, name: x}\n"}),
			code: 2, want: []string{"loop.yaml:1: YAML aliases and merge keys past the 300000 steps read in one document, or an alias inside what it names: not read", "VERDICT UNKNOWN"},
		},
		{
			name: "256 MiB of tiny documents naming no kind (item 12)",
			args: func(t *testing.T, dir string) []string {
				writeRepeated(t, filepath.Join(dir, "m", "tiny.yaml"), "---\na: 1\n", 256<<20)
				return scanOf(map[string]string{"a.yaml": removedIngress})(t, dir)
			},
			code: 2, want: []string{"VERDICT BLOCKED"},
		},
		{
			name: "256 MiB of separators (item 12)",
			args: func(t *testing.T, dir string) []string {
				writeRepeated(t, filepath.Join(dir, "m", "seps.yaml"), "---\n", 256<<20)
				return scanOf(map[string]string{"a.yaml": removedIngress})(t, dir)
			},
			code: 2, want: []string{"VERDICT BLOCKED"},
		},
		{
			name: "manifests past --files-max-mib are named and not read (item 12)",
			args: func(t *testing.T, dir string) []string {
				writeRepeated(t, filepath.Join(dir, "m", "b.yaml"), removedIngress+"---\n", 2<<20)
				return scanOf(cm, "--files-max-mib", "1")(t, dir)
			},
			code: 2, want: []string{"b.yaml:0: 1 file(s) from here on not read: past the 1 MiB of manifests a walk reads (--files-max-mib)", "VERDICT UNKNOWN", "1 path(s) not read"},
		},
		{
			name: "manifests past --timeout are named and not read (item 12)",
			args: scanOf(map[string]string{"a.yaml": removedIngress, "b.yaml": decoy}, "--timeout", "1ns"),
			code: 1, want: []string{"2 file(s) not read: the walk ran past its time limit (--timeout)", "no Kubernetes objects found"},
		},
	})
}

func mkfifo(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
}

// writeRepeated writes unit over and over until the file holds size bytes or just under.
func writeRepeated(t *testing.T, path, unit string, size int) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	chunk := strings.Repeat(unit, (1<<20)/len(unit))
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for written := 0; written+len(chunk) <= size; written += len(chunk) {
		if _, err := f.WriteString(chunk); err != nil {
			t.Fatal(err)
		}
	}
}
