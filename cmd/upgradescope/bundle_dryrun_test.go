package main

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/upgradescope/upgradescope/bundles/rollout/outcome"
	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/internal/testenv/probetest"
	"github.com/upgradescope/upgradescope/inventory"
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

// gatewayFleet is dryRunFleet's teams, clean-is-ready and addon-eol-approaching, and
// teams-gateway: teams with a networking.k8s.io/v1 Ingress besides, blocked before the
// candidate by its removed APIs and blocked after it with fleet-gateway/ingress too.
func gatewayFleet(t *testing.T) string {
	t.Helper()
	eng, err := engine.New(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	fleet := dryRunFleet(t, "teams", "clean-is-ready", "addon-eol-approaching")
	write(t, fleet, "teams-gateway.json", string(mustJSON(t, gatewayDocument(t, eng))))
	return fleet
}

// gatewayDocument is the teams scenario with clean-is-ready's networking.k8s.io Ingress.
func gatewayDocument(t *testing.T, eng *engine.Engine) *inventory.Document {
	t.Helper()
	doc := probetest.Scenario(t, "../..", "teams", eng.Observe().Probes)
	ingress := probetest.Scenario(t, "../..", "clean-is-ready", eng.Observe().Probes)
	doc.APIUsage = append(doc.APIUsage, ingress.APIUsage...)
	return doc
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// A cluster already blocked that the candidate gives one more blocker passes --fail-on
// blocked (nothing turns blocked) and fails --fail-on new-blocker, which names it.
func TestBundleDryRunFailsOnANewBlockerOfAClusterAlreadyBlocked(t *testing.T) {
	fleet := gatewayFleet(t)
	for _, tt := range []struct {
		failOn string
		code   int
		says   string
	}{
		{"blocked", exitGate, "dry run failed: 1 cluster would turn blocked (clean-is-ready)"},
		{"new-blocker", exitGate, "dry run failed: 1 cluster would turn blocked (clean-is-ready); " +
			"1 cluster already blocked would gain a blocker (teams-gateway)"},
		{"never", exitOK, ""},
	} {
		r := runCLI(t, "bundle", "dry-run", dryRunData+"/candidate", "--inventories", fleet, "--target", "1.37", pinned,
			"-q", "--fail-on", tt.failOn)
		if r.code != tt.code || !strings.Contains(r.stderr, tt.says) {
			t.Errorf("--fail-on %s: exit %d, stderr %q; want %d saying %q", tt.failOn, r.code, r.stderr, tt.code, tt.says)
		}
	}
	alone := dryRunFleet(t, "teams")
	eng, _ := engine.New(context.Background())
	write(t, alone, "teams-gateway.json", string(mustJSON(t, gatewayDocument(t, eng))))
	if r := runCLI(t, "bundle", "dry-run", dryRunData+"/candidate", "--inventories", alone, "--target", "1.37", pinned,
		"-q"); r.code != exitOK {
		t.Errorf("--fail-on blocked with only already blocked clusters: exit %d, want 0: %s", r.code, r.stderr)
	}
}

// --changed-only shows the clusters the candidate changes and one line for the rest; the
// summary still counts every cluster.
func TestBundleDryRunChangedOnlyShowsTheChangesAndCountsTheRest(t *testing.T) {
	fleet := gatewayFleet(t)
	res := runCLI(t, "bundle", "dry-run", dryRunData+"/candidate", "--inventories", fleet, "--target", "1.37", pinned,
		"-q", "--changed-only", "--fail-on", "never")
	want := `CLUSTER         TARGET  BEFORE      AFTER       NEW  CHANGED  RESOLVED
clean-is-ready  1.37    ready 100   blocked 75  1    0        0
teams-gateway   1.33    blocked 50  blocked 25  1    0        0
teams-gateway   1.37    blocked 50  blocked 25  1    0        0
2 clusters without change omitted.

clean-is-ready 1.37 new: fleet-gateway/ingress

teams-gateway 1.33 new: fleet-gateway/ingress
teams-gateway 1.37 new: fleet-gateway/ingress

4 clusters in the dry run.
  would turn blocked: 1 (clean-is-ready)
  would gain a blocker: 2 (clean-is-ready, teams-gateway)
  would turn unknown: 0
  would turn ready: 0
  changed: 2 (clean-is-ready, teams-gateway)
  the candidate fails on: 0
  not judged: 0
`
	if res.code != exitOK || res.stdout != want {
		t.Errorf("exit %d, stdout:\n%s\nwant exit 0 and:\n%s", res.code, res.stdout, want)
	}
	js := runCLI(t, "bundle", "dry-run", dryRunData+"/candidate", "--inventories", fleet, "--target", "1.37", pinned,
		"-q", "--changed-only", "--fail-on", "never", "-o", "json")
	var out struct {
		Results          []struct{ Cluster string }
		UnchangedOmitted *int
		Summary          struct{ Clusters int }
	}
	if err := json.Unmarshal([]byte(js.stdout), &out); err != nil || len(out.Results) != 2 || out.UnchangedOmitted == nil ||
		*out.UnchangedOmitted != 2 || out.Summary.Clusters != 4 {
		t.Errorf("json: %v, %+v; want 2 results, 2 omitted, 4 clusters summed up:\n%s", err, out, js.stdout)
	}
}

// A server of an earlier release answers no new blockers: --fail-on new-blocker cannot
// judge its answer and says so (exit 1) instead of passing.
func TestDryRunGateAtNewBlockerRefusesAnAnswerWithoutNewBlockers(t *testing.T) {
	err := dryRunGate(outcome.Summary{Clusters: 3, TurnedBlocked: []string{}}, outcome.FailOnNewBlocker)
	var exit *exitError
	if err == nil || errors.As(err, &exit) || !strings.Contains(err.Error(), "does not report new blockers") {
		t.Errorf("dryRunGate = %v, want an error (exit 1) saying the answer lacks new blockers", err)
	}
	if err := dryRunGate(outcome.Summary{Clusters: 3}, outcome.FailOnBlocked); err != nil {
		t.Errorf("at blocked the same answer is judged: %v", err)
	}
}
