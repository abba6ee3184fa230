package output_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/internal/testenv/probetest"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/output"
	"github.com/upgradescope/upgradescope/report"
)

var update = flag.Bool("update", false, "rewrite golden files; read them before committing")

// goldenScenarios exercise every section of every format: blockers, a suppressed finding,
// an expired rule and an optional gap; a required gap; two targets; a finding naming its callers.
var goldenScenarios = []string{"suppressions", "partial-api-usage-is-unknown", "multi-target", "chart-advice-helm-release-upgrade", "audit-callers-blocker"}

// judged evaluates a golden scenario of ../testdata with the built-in bundles.
func judged(t *testing.T, dir string) *report.Report {
	t.Helper()
	inv, err := inventory.ReadFile(filepath.Join("..", "testdata", dir, "inventory.json"))
	if err != nil {
		t.Fatal(err)
	}
	var args struct {
		Targets []string            `json:"targets"`
		Ignore  []report.IgnoreRule `json:"ignore"`
		Plan    bool                `json:"plan"`
		From    string              `json:"planFrom"`
		// ProbesFoundNothing: the collector observed every declared probe and found nothing.
		ProbesFoundNothing bool `json:"probesFoundNothing"`
	}
	raw, _ := os.ReadFile(filepath.Join("..", "testdata", dir, "args.json"))
	if err := json.Unmarshal(raw, &args); err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(context.Background(), engine.WithToolVersion("test"))
	if err != nil {
		t.Fatal(err)
	}
	if args.ProbesFoundNothing {
		probetest.FoundNothing(inv, eng.Observe().Probes)
	}
	opts := []engine.EvalOption{engine.WithIgnore(args.Ignore)}
	if args.Plan {
		opts = append(opts, engine.WithPlan(args.From))
		from, _ := inventory.ParseVersion(args.From)
		to, _ := inventory.ParseVersion(args.Targets[0])
		args.Targets = from.MinorsAfter(to)
	}
	r, err := eng.Evaluate(context.Background(), inv, args.Targets, time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC), opts...)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// rendered renders r in format with opts.
func rendered(t *testing.T, format string, r *report.Report, opts output.Options) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := output.Render(&buf, format, r, opts); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// matchesGolden compares got with testdata/<name>, rewriting it under -update.
func matchesGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden := filepath.Join("testdata", name)
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
		t.Errorf("output differs from %s:\n%s", golden, got)
	}
}

// goldenPerScenario renders every golden scenario in one format and compares each with its
// golden file, testdata/<scenario>.<format>.
func goldenPerScenario(t *testing.T, format string, opts output.Options) {
	for _, scenario := range goldenScenarios {
		t.Run(scenario, func(t *testing.T) {
			matchesGolden(t, scenario+"."+format, rendered(t, format, judged(t, scenario), opts))
		})
	}
}

func TestEveryFormatIsListedOnceAndHasAGoldenTest(t *testing.T) {
	want := []string{output.FormatTable, output.FormatJSON, output.FormatSARIF, output.FormatJUnit, output.FormatMarkdown, output.FormatGitLab}
	if got := output.Formats(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("Formats() = %v, want %v", got, want)
	}
	for _, f := range output.Formats() {
		file := strings.ReplaceAll(f, "-", "_") + "_test.go"
		if _, err := os.Stat(file); err != nil {
			t.Errorf("format %s has no %s with its golden test", f, file)
		}
		if _, err := output.New(f, output.Options{}); err != nil {
			t.Errorf("New(%s): %v", f, err)
		}
	}
}

func TestAnUnknownFormatIsRefusedNamingTheFormats(t *testing.T) {
	_, err := output.New("yaml", output.Options{})
	if err == nil || !strings.Contains(err.Error(), `"yaml"`) || !strings.Contains(err.Error(), "table, json, sarif, junit, markdown or gitlab-codequality") {
		t.Errorf("New(yaml) = %v, want an error naming yaml and the formats", err)
	}
}

func TestOnlyTableAndJSONRenderAPlan(t *testing.T) {
	for _, f := range output.Formats() {
		err := output.CheckPlan(f)
		canPlan := f == output.FormatTable || f == output.FormatJSON
		if (err == nil) != canPlan {
			t.Errorf("CheckPlan(%s) = %v, want plan support %v", f, err, canPlan)
		}
	}
	r := judged(t, "plan-hops")
	var buf bytes.Buffer
	if err := output.Render(&buf, output.FormatSARIF, r, output.Options{}); err == nil {
		t.Error("rendering a plan as SARIF succeeded; want a refusal")
	}
}
