package rollout_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/bundles"
	"github.com/upgradescope/upgradescope/bundles/rollout"
	"github.com/upgradescope/upgradescope/bundles/rollout/outcome"
	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/internal/testenv/probetest"
)

var now = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// engines answers the built-in set and the set with testdata/dry-run/<candidate> in it.
func engines(t *testing.T, candidate string) (current, with *engine.Engine) {
	t.Helper()
	ctx := context.Background()
	current, err := engine.New(ctx, engine.WithToolVersion("test"))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join("..", "..", "testdata", "dry-run", candidate)
	b, err := bundles.ReadDir(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	with, err = engine.New(ctx, engine.WithToolVersion("test"), engine.WithBundle(dir, b, ""))
	if err != nil {
		t.Fatal(err)
	}
	return current, with
}

// fleetDir writes golden scenarios of ../testdata as a fleet directory, their probes observed
// as finding nothing (as the scenarios' args.json say).
func fleetDir(t *testing.T, eng *engine.Engine, scenarios ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, s := range scenarios {
		doc := probetest.Scenario(t, "../..", s, eng.Observe().Probes)
		raw, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, s+".json"), raw, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestADryRunJudgesEveryClusterWithTheCandidateAndComparesEachTarget(t *testing.T) {
	current, with := engines(t, "candidate")
	clusters, err := rollout.FromInventories(fleetDir(t, current, "teams", "clean-is-ready"), []string{"1.37"}, current)
	if err != nil {
		t.Fatal(err)
	}
	var progress []string
	results, summary := rollout.Run(context.Background(), clusters, with, rollout.Options{Workers: 2, Now: now,
		Progress: func(r outcome.Result) { progress = append(progress, r.Cluster) }})
	if len(results) != 2 || results[0].Cluster != "clean-is-ready" || results[1].Cluster != "teams" || len(progress) != 2 {
		t.Fatalf("results %+v, progress %v: want both clusters in file order, each reported once", results, progress)
	}
	clean := results[0].Targets
	if len(clean) != 1 || clean[0].Before == nil || clean[0].Before.Verdict != "ready" || clean[0].After.Verdict != "blocked" ||
		strings.Join(clean[0].New, ",") != "fleet-gateway/ingress" {
		t.Errorf("clean-is-ready: %+v, want ready → blocked by fleet-gateway/ingress", clean)
	}
	if teams := results[1].Targets; len(teams) != 2 || teams[0].Target != "1.33" || teams[0].Turned() != "" {
		t.Errorf("teams: %+v, want 1.33 and 1.37 with no Ingress at networking.k8s.io and so no change", teams)
	}
	if strings.Join(summary.TurnedBlocked, ",") != "clean-is-ready" || summary.Fails(outcome.FailOnBlocked) == "" {
		t.Errorf("summary %+v should fail on clean-is-ready turning blocked", summary)
	}
}

func TestACandidateBreakingTheContractIsNamedWithTheCluster(t *testing.T) {
	current, with := engines(t, "broken")
	clusters, err := rollout.FromInventories(fleetDir(t, current, "teams", "addon-eol-approaching"), nil, current)
	if err != nil {
		t.Fatal(err)
	}
	results, summary := rollout.Run(context.Background(), clusters, with, rollout.Options{Workers: 1, Now: now})
	teams := results[1]
	if !teams.Candidate || !strings.Contains(teams.Error, "custom/broken breaks the findings contract") ||
		!strings.Contains(teams.Error, "broken/endpoints") || results[0].Error != "" {
		t.Errorf("results %+v: want teams (with Endpoints) failing on custom/broken's finding broken/endpoints", results)
	}
	if strings.Join(summary.CandidateErrors, ",") != "teams" {
		t.Errorf("summary %+v", summary)
	}
}

func TestClustersTheBudgetLeavesOutAreNotJudgedNeverPassed(t *testing.T) {
	current, with := engines(t, "candidate")
	clusters, err := rollout.FromInventories(fleetDir(t, current, "teams", "clean-is-ready"), nil, current)
	if err != nil {
		t.Fatal(err)
	}
	results, summary := rollout.Run(context.Background(), clusters, with, rollout.Options{Workers: 1, Now: now, Budget: time.Nanosecond})
	for _, r := range results {
		if r.Candidate || !strings.Contains(r.Error, "time budget") {
			t.Errorf("%+v: want not judged for the budget", r)
		}
	}
	if len(summary.Unjudged) != 2 || summary.Fails(outcome.FailOnBlocked) == "" {
		t.Errorf("summary %+v should fail: nothing was judged", summary)
	}
}

func TestADirectoryWithoutInventoriesIsRefused(t *testing.T) {
	if _, err := rollout.FromInventories(t.TempDir(), nil, nil); err == nil || !strings.Contains(err.Error(), "holds no inventory") {
		t.Errorf("err = %v", err)
	}
}

// A server shares its evaluation slots through Turn: each candidate evaluation holds one,
// and a cluster that gets none (its caller stopped waiting) is not judged, never passed.
func TestEachCandidateEvaluationHoldsATurnAndOneWithoutATurnIsNotJudged(t *testing.T) {
	current, with := engines(t, "candidate")
	clusters, err := rollout.FromInventories(fleetDir(t, current, "teams", "clean-is-ready"), []string{"1.37"}, current)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	held, taken, released := 0, 0, 0
	turn := func(context.Context) (func(), error) {
		mu.Lock()
		defer mu.Unlock()
		held, taken = held+1, taken+1
		return func() {
			mu.Lock()
			defer mu.Unlock()
			held, released = held-1, released+1
		}, nil
	}
	results, _ := rollout.Run(context.Background(), clusters, with, rollout.Options{Workers: 2, Now: now, Turn: turn})
	if taken != 2 || released != 2 || held != 0 || results[0].Error != "" || results[1].Error != "" {
		t.Errorf("turns taken %d, released %d, results %+v: want one turn per cluster, each given back", taken, released, results)
	}
	refused := func(context.Context) (func(), error) { return nil, errors.New("the server is busy") }
	results, summary := rollout.Run(context.Background(), clusters, with, rollout.Options{Workers: 1, Now: now, Turn: refused})
	for _, r := range results {
		if r.Candidate || !strings.Contains(r.Error, "wait for an evaluation turn: the server is busy") {
			t.Errorf("%+v: want not judged for want of a turn", r)
		}
	}
	if len(summary.Unjudged) != 2 {
		t.Errorf("summary %+v: want both clusters not judged", summary)
	}
}
