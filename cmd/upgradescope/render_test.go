package main

import (
	"strings"
	"testing"

	"github.com/upgradescope/upgradescope/output"
)

// TestRenderOfASavedReportIsWhatTheJudgingCommandPrints: one judgement rendered later in
// every format is byte for byte what scan prints in that format.
func TestRenderOfASavedReportIsWhatTheJudgingCommandPrints(t *testing.T) {
	saved := runCLI(t, "scan", "--files", examples, "--target", "1.37", "-o", "json", pinned)
	if saved.code != 2 {
		t.Fatalf("scan exit %d: %s", saved.code, saved.stderr)
	}
	path := write(t, t.TempDir(), "report.json", saved.stdout)
	for _, format := range output.Formats() {
		t.Run(format, func(t *testing.T) {
			want := runCLI(t, "scan", "--files", examples, "--target", "1.37", "-o", format, "--fail-on", "warning", pinned)
			got := runCLI(t, "render", "--report", path, "-o", format, "--fail-on", "warning")
			if got.code != 0 || got.stdout != want.stdout {
				t.Errorf("render exit %d (want 0), output equal to scan's: %v\n%s\n%s", got.code, got.stdout == want.stdout, got.stdout, got.stderr)
			}
		})
	}
}

func TestRenderOutputsAreTheGatingTargetsNumbers(t *testing.T) {
	saved := runCLI(t, "scan", "--files", examples, "--target", "1.36,1.37", "-o", "json", "--fail-on", "never", pinned)
	path := write(t, t.TempDir(), "report.json", saved.stdout)
	got := runCLI(t, "render", "--report", path, "-o", "outputs")
	want := "target=1.37\nverdict=blocked\nready=false\nscore=25\nblockers=6\nwarnings=0\ninfos=2\nsuppressed=0\n"
	if got.code != 0 || got.stdout != want {
		t.Errorf("exit %d, outputs:\n%s\nwant:\n%s%s", got.code, got.stdout, want, got.stderr)
	}
}

func TestRenderRefusesWhatIsNotAReport(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		name   string
		args   []string
		stderr string
	}{
		{"no such file", []string{"--report", "/nonexistent.json"}, "--report"},
		{"not JSON", []string{"--report", write(t, dir, "a.yaml", "a: b\n")}, "not a JSON report (write one with --output json)"},
		{"an inventory", []string{"--report", "../../testdata/clean-is-ready/inventory.json"}, "not a JSON report of schema version 1 with a target"},
		{"an unknown format", []string{"--report", write(t, dir, "r.json", "{}"), "-o", "yaml"}, `--output: unknown output format "yaml": want one of table, json, sarif, junit, markdown, gitlab-codequality, outputs`},
		{"a bad --fail-on", []string{"--report", write(t, dir, "r2.json", "{}"), "--fail-on", "sometimes"}, "--fail-on"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI(t, append([]string{"render"}, tt.args...)...)
			if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, tt.stderr) {
				t.Errorf("exit %d, stdout %q, stderr %q; want 1, nothing, %q", r.code, r.stdout, r.stderr, tt.stderr)
			}
		})
	}
}
