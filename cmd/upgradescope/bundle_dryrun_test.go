package main

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/internal/testenv/probetest"
)

const dryRunData = "../../testdata/dry-run"

// dryRunFleet writes golden scenarios as a fleet directory of inventories, their probes
// observed as finding nothing, as the scenarios' args.json say.
func dryRunFleet(t *testing.T, scenarios ...string) string {
	t.Helper()
	eng, err := engine.New(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, s := range scenarios {
		doc := probetest.Scenario(t, "../..", s, eng.Observe().Probes)
		raw, _ := json.Marshal(doc)
		write(t, dir, s+".json", string(raw))
	}
	return dir
}

// The table is checked by hand in testdata/dry-run/expected.table: clean-is-ready (an
// Ingress at networking.k8s.io/v1) turns blocked under the candidate's gateway rule at
// 1.37, and the others keep their verdicts.
func TestBundleDryRunPrintsEachClustersDeltaAndFailsWhenOneTurnsBlocked(t *testing.T) {
	fleet := dryRunFleet(t, "teams", "clean-is-ready", "addon-eol-approaching")
	res := runCLI(t, "bundle", "dry-run", dryRunData+"/candidate", "--inventories", fleet, "--target", "1.37", pinned)
	want, err := os.ReadFile(dryRunData + "/expected.table")
	if err != nil {
		t.Fatal(err)
	}
	if res.code != exitGate || res.stdout != string(want) {
		t.Errorf("exit %d, stdout:\n%s\nwant exit 2 and:\n%s", res.code, res.stdout, want)
	}
	if n := strings.Count(res.stderr, "/3] "); n != 3 || !strings.Contains(res.stderr, "clean-is-ready: 1.37 ready → blocked") ||
		!strings.Contains(res.stderr, "dry run failed: 1 cluster would turn blocked (clean-is-ready)") {
		t.Errorf("stderr should hold a progress line per cluster and the reason:\n%s", res.stderr)
	}
	for _, tt := range []struct {
		threshold string
		code      int
	}{{"never", exitOK}, {"unknown", exitGate}, {"changed", exitGate}} {
		if r := runCLI(t, "bundle", "dry-run", dryRunData+"/candidate", "--inventories", fleet, "--target", "1.37", pinned,
			"-q", "--fail-on", tt.threshold); r.code != tt.code {
			t.Errorf("--fail-on %s: exit %d, want %d: %s", tt.threshold, r.code, tt.code, r.stderr)
		}
	}
}

func TestBundleDryRunNamesTheClusterACandidateBreaks(t *testing.T) {
	fleet := dryRunFleet(t, "teams", "clean-is-ready")
	res := runCLI(t, "bundle", "dry-run", dryRunData+"/broken", "--inventories", fleet, pinned, "-q", "-o", "json", "--target", "1.37")
	var out struct {
		Results []struct {
			Cluster, Error string
			Candidate      bool `json:"candidateError"`
		}
		Summary struct{ CandidateErrors []string }
	}
	if err := json.Unmarshal([]byte(res.stdout), &out); err != nil {
		t.Fatalf("json: %v: %s", err, res.stdout)
	}
	if res.code != exitGate || len(out.Results) != 2 || !out.Results[1].Candidate ||
		!strings.Contains(out.Results[1].Error, "policy custom/broken breaks the findings contract") ||
		strings.Join(out.Summary.CandidateErrors, ",") != "teams" {
		t.Errorf("exit %d, %+v: want teams named as broken by custom/broken", res.code, out)
	}
}

func TestBundleDryRunRefusesBadInputWithExitOne(t *testing.T) {
	fleet := dryRunFleet(t, "teams")
	write(t, fleet, "corrupt.json", `{"schemaVersion": 1,`)
	tests := []struct {
		name string
		args []string
		says string
	}{
		{"an unknown threshold", []string{"--inventories", fleet, "--fail-on", "sometimes"}, "--fail-on"},
		{"a bad target", []string{"--inventories", fleet, "--target", "1.x"}, "--target"},
		{"a directory without inventories", []string{"--inventories", t.TempDir()}, "holds no inventory"},
		{"no inventories flag", nil, "inventories"},
		{"a flag of --server", []string{"--inventories", fleet, "--read-token-file", "read.token"}, "--read-token-file applies to --server"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI(t, append([]string{"bundle", "dry-run", dryRunData + "/candidate", pinned}, tt.args...)...)
			if r.code != exitErr || !strings.Contains(r.stderr, tt.says) {
				t.Errorf("exit %d, stderr %q; want 1 naming %q", r.code, r.stderr, tt.says)
			}
		})
	}
	// A corrupt inventory is named and fails the run closed: it was not judged.
	r := runCLI(t, "bundle", "dry-run", dryRunData+"/candidate", "--inventories", fleet, pinned, "-q")
	if r.code != exitGate || !strings.Contains(r.stdout, "corrupt: read:") || !strings.Contains(r.stderr, "1 cluster not judged (corrupt)") {
		t.Errorf("exit %d:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

// A candidate with the roots of a --bundle the fleet runs is its new revision: it replaces
// that bundle, and the same pack as candidate changes nothing.
func TestBundleDryRunReplacesTheBundleOfTheCandidatesRoots(t *testing.T) {
	fleet := dryRunFleet(t, "clean-is-ready")
	res := runCLI(t, "bundle", "dry-run", dryRunData+"/candidate", "--inventories", fleet, "--target", "1.37", pinned, "-q",
		"--bundle", dryRunData+"/candidate", "--fail-on", "changed")
	if res.code != exitOK || !strings.Contains(res.stdout, "blocked 75  blocked 75  0    0        0") {
		t.Errorf("exit %d:\n%s\n%s\nwant the fleet pack replaced by itself, nothing changed", res.code, res.stdout, res.stderr)
	}
}
