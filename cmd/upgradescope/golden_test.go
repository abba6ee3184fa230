package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/upgradescope/upgradescope/policies"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from the commands' output; read every line before committing")

// goldenCase is one command whose whole output is held to testdata/golden/<name>.txt, as
// Helm's cmdTestCase does: stdout, stderr and the exit code, so a reordered, added or lost
// line fails where a substring check would not.
type goldenCase struct {
	name string
	// setup runs first, each command expected to exit 0; its output is not compared, but
	// "> FILE" at the end of one saves its stdout there.
	setup []string
	cmd   string
}

// goldenCases are the main commands on inputs in the repository, the clock pinned. {tmp} is
// a directory of the test's own.
var goldenCases = []goldenCase{
	{name: "scan-examples-table", cmd: "scan --files ../../examples/manifests --target 1.37 " + pinned},
	{name: "scan-examples-json", cmd: "scan --files ../../examples/manifests --target 1.37 -o json " + pinned},
	{name: "scan-examples-fail-on-never-markdown", cmd: "scan --files ../../examples/manifests --target 1.37 --fail-on never -o markdown " + pinned},
	{name: "eval-inventory-two-targets-fail-on-warning",
		setup: []string{"inventory --files ../../examples/manifests " + pinned + " > {tmp}/inventory.json"},
		cmd:   "eval --inventory {tmp}/inventory.json --target 1.36,1.37 --fail-on warning " + pinned},
	{name: "policy-test-examples", cmd: "policy test ../../examples/policies"},
	{name: "bundle-inspect-built",
		setup: []string{"bundle build ../../examples/policies -o {tmp}/acme.tar.gz --revision 2026-11-29.1"},
		cmd:   "bundle inspect {tmp}/acme.tar.gz"},
	{name: "version-flag", cmd: "--version"},
	{name: "usage-unknown-flag", cmd: "scan --frobnicate"},
	{name: "usage-target-missing", cmd: "scan --files ../../examples/manifests"},
	// istio's samples: a MongoDB seed file that is not JSON makes the verdict unknown until
	// it is excluded, and an excluded path is listed, never silent.
	{name: "scan-exclude-none-unknown", cmd: "scan --files testdata/exclude/bookinfo --target 1.37 " + pinned},
	{name: "scan-exclude-flag-ready", cmd: "scan --files testdata/exclude/bookinfo --exclude **/ratings_data.json --target 1.37 " + pinned},
	{name: "scan-exclude-ignorefile-json", cmd: "scan --files testdata/exclude/bookinfo-ignorefile --target 1.37 -o json " + pinned},
	// istio's sample apps live under docker.io/istio with Istio-like tags, yet are no install:
	// only Istio's own component images identify Istio.
	{name: "scan-istio-sample-is-not-istio", cmd: "scan --files testdata/istio-samples --target 1.36 " + pinned},
}

func TestCLIGolden(t *testing.T) {
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			tmp := t.TempDir()
			for _, line := range tc.setup {
				runSetup(t, line, tmp)
			}
			r := runCLI(t, goldenArgs(tc.cmd, tmp)...)
			got := normalizeGolden(fmt.Sprintf("$ upgradescope %s\n--- stdout\n%s--- stderr\n%s--- exit %d\n", tc.cmd, r.stdout, r.stderr, r.code), tmp)
			path := filepath.Join("testdata", "golden", tc.name+".txt")
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("read golden (go test -run TestCLIGolden -update, then read it): %v", err)
			}
			if got != string(want) {
				t.Errorf("%s differs; with -update, read the diff line by line before committing:\n%s", path, lineDiff(string(want), got))
			}
		})
	}
}

// runSetup runs one setup command, saving its stdout to the file after a final ">".
func runSetup(t *testing.T, line, tmp string) {
	t.Helper()
	args, saveTo := goldenArgs(line, tmp), ""
	if n := len(args); n > 2 && args[n-2] == ">" {
		args, saveTo = args[:n-2], args[n-1]
	}
	r := runCLI(t, args...)
	if r.code != 0 {
		t.Fatalf("setup %q: exit %d\n%s", line, r.code, r.stderr)
	}
	if saveTo != "" {
		write(t, filepath.Dir(saveTo), filepath.Base(saveTo), r.stdout)
	}
}

// goldenArgs splits a case's command line on spaces, {tmp} replaced by the test's directory.
func goldenArgs(line, tmp string) []string {
	return strings.Fields(strings.ReplaceAll(line, "{tmp}", tmp))
}

// normalizeGolden replaces what changes without the commands' behaviour changing: the test's
// directory, and the built-in bundles' revisions, which every rule or kb change bumps (the
// golden scenarios in testdata/ hold those).
func normalizeGolden(s, tmp string) string {
	return strings.NewReplacer(
		tmp, "{tmp}",
		policies.RulesRevision, "{rules-revision}",
		policies.KBRevision, "{kb-revision}",
	).Replace(s)
}

// lineDiff lists the lines that differ, by line number, want first.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i := range max(len(w), len(g)) {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			fmt.Fprintf(&b, "line %d:\n  want %q\n   got %q\n", i+1, wl, gl)
		}
	}
	return b.String()
}
