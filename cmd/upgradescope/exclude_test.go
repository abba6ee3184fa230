package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/upgradescope/upgradescope/inventory"
)

// bookinfo is istio's samples trimmed: manifests and a MongoDB seed file that is not JSON.
func bookinfo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	write(t, dir, "platform/kube/bookinfo.yaml", "apiVersion: v1\nkind: Service\nmetadata:\n  name: ratings\n  namespace: bookinfo\n")
	write(t, dir, "src/mongodb/ratings_data.json", "{rating: 5}\n")
	return dir
}

func TestExclusionsDecideWhatIsReadAndBadOnesAreErrors(t *testing.T) {
	plain := bookinfo(t)
	withFile := bookinfo(t)
	write(t, withFile, ".upgradescopeignore", "# seed data\nsrc/mongodb/\n")
	badFile := bookinfo(t)
	badIgnore := write(t, badFile, ".upgradescopeignore", "ok.json\n\n!keep.json\n")
	besideConfig := bookinfo(t)
	cfgDir := t.TempDir()
	cfg := write(t, cfgDir, ".upgradescope.yaml", "ignore: []\n")
	write(t, cfgDir, ".upgradescopeignore", "ratings_data.json\n")

	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stdout []string
		stderr []string
	}{
		{name: "a seed file that is not JSON makes the verdict unknown", args: []string{"scan", "--files", plain, "--target", "1.37", pinned},
			code: 2, stdout: []string{"VERDICT UNKNOWN"}, stderr: []string{"ratings_data.json:1: invalid JSON"}},
		{name: "an excluded seed file leaves the verdict to the manifests", args: []string{"scan", "--files", plain, "--exclude", "**/ratings_data.json", "--target", "1.37", pinned},
			code: 0, stdout: []string{"VERDICT READY", "Excluded:  1 path not read: src/mongodb/ratings_data.json (**/ratings_data.json)"}},
		{name: "an ignore file in the scanned directory excludes a directory", args: []string{"scan", "--files", withFile, "--target", "1.37", pinned},
			code: 0, stdout: []string{"VERDICT READY", "src/mongodb (src/mongodb/)"}},
		{name: "an ignore file beside --config is the one read", args: []string{"scan", "--files", besideConfig, "--config", cfg, "--target", "1.37", pinned},
			code: 0, stdout: []string{"VERDICT READY", "(ratings_data.json)"}},
		{name: "a bad --exclude is an error naming the flag", args: []string{"scan", "--files", plain, "--exclude", "[seed", "--target", "1.37"},
			code: 1, stderr: []string{`--exclude: exclude pattern "[seed": segment "[seed": syntax error in pattern`}},
		{name: "a bad ignore file line is an error naming the file and line", args: []string{"inventory", "--files", badFile},
			code: 1, stderr: []string{badIgnore + `:3: exclude pattern "!keep.json": negation (!) is not supported`}},
		{name: "fix reads the same ignore file", args: []string{"fix", "--files", badFile, "--target", "1.37"},
			code: 1, stderr: []string{badIgnore + ":3:"}},
		{name: "--exclude without --files is an error", args: []string{"scan", "--exclude", "x", "--target", "1.37"},
			code: 1, stderr: []string{"--exclude applies to --files"}},
		{name: "an unparsable file not excluded still fails fix", args: []string{"fix", "--files", plain, "--target", "1.37"},
			code: 1, stderr: []string{"ratings_data.json:1: invalid JSON"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runCLI(t, tc.args...)
			if r.code != tc.code {
				t.Errorf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", r.code, tc.code, r.stdout, r.stderr)
			}
			for _, want := range tc.stdout {
				if !strings.Contains(r.stdout, want) {
					t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
				}
			}
			for _, want := range tc.stderr {
				if !strings.Contains(r.stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
				}
			}
		})
	}
}

func TestAnExportedInventoryListsWhatWasExcluded(t *testing.T) {
	dir := bookinfo(t)
	r := runCLI(t, "inventory", "--files", dir, "--exclude", "src/", pinned)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	doc, err := inventory.Parse([]byte(r.stdout))
	if err != nil {
		t.Fatalf("the inventory does not validate: %v", err)
	}
	want := inventory.ExcludedPath{Path: "src", Pattern: "src/", Origin: "--exclude"}
	if len(doc.FilesExcluded) != 1 || doc.FilesExcluded[0] != want {
		t.Errorf("filesExcluded = %+v, want [%+v]", doc.FilesExcluded, want)
	}
	if c := doc.Capabilities[inventory.CapAPIUsage]; c.Partial {
		t.Errorf("api-usage is partial although the unreadable file was excluded: %+v", c)
	}
	var raw map[string]any
	if err := json.Unmarshal([]byte(r.stdout), &raw); err != nil || raw["filesBase"] != filepath.ToSlash(dir) {
		t.Errorf("filesBase = %v, want %s (%v)", raw["filesBase"], dir, err)
	}
}
