package engine_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/internal/testenv/probetest"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/output"
	"github.com/upgradescope/upgradescope/report"
)

var update = flag.Bool("update", false, "rewrite golden files; read them before committing")

// now pins the clock of every golden report.
var now = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

type scenarioArgs struct {
	Targets  []string            `json:"targets"`
	Ignore   []report.IgnoreRule `json:"ignore"`
	Plan     bool                `json:"plan"`
	PlanFrom string              `json:"planFrom"`
	// ProbesFoundNothing says the collector observed every declared probe and found nothing:
	// the scenario is about something else, and its inventory leaves the probes out.
	ProbesFoundNothing bool `json:"probesFoundNothing"`
}

func newEngine(t testing.TB, opts ...engine.Option) *engine.Engine {
	t.Helper()
	eng, err := engine.New(context.Background(), append([]engine.Option{engine.WithToolVersion("test")}, opts...)...)
	if err != nil {
		t.Fatalf("engine.New: %v", err)
	}
	return eng
}

func render(t testing.TB, r *report.Report) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := output.Render(&buf, output.FormatJSON, r, output.Options{}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func evaluateScenario(t *testing.T, eng *engine.Engine, dir string) []byte {
	t.Helper()
	sc := readScenario(t, eng, dir)
	r, err := eng.Evaluate(context.Background(), sc.inv, sc.targets, now, sc.opts...)
	if err != nil {
		t.Fatalf("Evaluate: %v", err)
	}
	return render(t, r)
}

// scenario is what a testdata scenario asks Evaluate.
type scenario struct {
	inv     *inventory.Document
	targets []string
	opts    []engine.EvalOption
}

// readScenario reads testdata/<scenario>: its inventory, and its targets and options from
// args.json.
func readScenario(t *testing.T, eng *engine.Engine, dir string) scenario {
	t.Helper()
	inv, err := inventory.ReadFile(filepath.Join(dir, "inventory.json"))
	if err != nil {
		t.Fatal(err)
	}
	var args scenarioArgs
	raw, err := os.ReadFile(filepath.Join(dir, "args.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &args); err != nil {
		t.Fatal(err)
	}
	if args.ProbesFoundNothing {
		probetest.FoundNothing(inv, eng.Observe().Probes)
	}
	sc := scenario{inv: inv, targets: args.Targets, opts: []engine.EvalOption{engine.WithIgnore(args.Ignore)}}
	if args.Plan {
		sc.opts = append(sc.opts, engine.WithPlan(args.PlanFrom))
		sc.targets = planTargets(t, args.PlanFrom, args.Targets[0])
	}
	return sc
}

// TestGoldenScenarios judges each testdata/<scenario>/inventory.json and compares the JSON
// report with expected.json byte for byte.
func TestGoldenScenarios(t *testing.T) {
	eng := newEngine(t)
	dirs, err := filepath.Glob("../testdata/*/inventory.json")
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no scenarios found: %v", err)
	}
	for _, invPath := range dirs {
		dir := filepath.Dir(invPath)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			got := evaluateScenario(t, eng, dir)
			golden := filepath.Join(dir, "expected.json")
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("report differs from %s (run go test ./engine -update, then read the diff):\n%s", golden, got)
			}
		})
	}
}

func TestSameInputsGiveByteIdenticalReportsEvenConcurrently(t *testing.T) {
	eng := newEngine(t)
	first := evaluateScenario(t, eng, "../testdata/suppressions")
	var wg sync.WaitGroup
	results := make([][]byte, 8)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = evaluateScenario(t, eng, "../testdata/suppressions")
		}()
	}
	wg.Wait()
	for i, r := range results {
		if !bytes.Equal(r, first) {
			t.Fatalf("evaluation %d differs from the first", i)
		}
	}
}

// planTargets lists the minors after from up to to, as the CLI's --plan does.
func planTargets(t *testing.T, from, to string) []string {
	t.Helper()
	f, err := inventory.ParseVersion(from)
	if err != nil {
		t.Fatal(err)
	}
	e, err := inventory.ParseVersion(to)
	if err != nil {
		t.Fatal(err)
	}
	return f.MinorsAfter(e)
}
