package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/cover"
	"github.com/open-policy-agent/opa/v1/storage"
	"github.com/open-policy-agent/opa/v1/tester"
	"github.com/open-policy-agent/opa/v1/topdown"
	"github.com/open-policy-agent/opa/v1/topdown/lineage"
	"github.com/spf13/cobra"

	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/policies"
)

func newPolicyCommand(s streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "policy",
		Short: "Work with rule packs",
	}
	cmd.AddCommand(newPolicyTestCommand(s))
	return cmd
}

// policyTestOptions are the options of `opa test` that policy test takes, meaning what they
// mean there.
type policyTestOptions struct {
	verbose   bool    // every test's result, and the notes and failures of a failing one's trace
	run       string  // only tests whose name matches this regular expression
	coverage  bool    // the JSON coverage report instead of the results
	threshold float64 // with coverage: exit 2 below this percentage
	memoryMiB int     // the heap the tests may grow by, as scan's --policy-memory
}

func newPolicyTestCommand(s streams) *cobra.Command {
	var o policyTestOptions
	cmd := &cobra.Command{
		Use:   "test PATH...",
		Short: "Run the Rego tests of rule packs, as `opa test` does (exit 2 when a test fails)",
		Long: `Runs the Rego tests under PATH with OPA's own test runner. The built-in library and
knowledge base (data.upgradescope.lib, data.upgradescope.kb) are loaded beside them, so the
result is that of ` + "`opa test PATH... policies/rules policies/kb`" + ` without the built-in tests.

-v, --run, --coverage and --threshold do what they do for ` + "`opa test`" + `. The coverage report
covers the modules under PATH; the built-in library loaded beside them is left out unless
PATH holds it (policies/rules).`,
		Example: `  upgradescope policy test ./my-rules
  upgradescope policy test -v --run 'prod' ./my-rules
  upgradescope policy test --coverage --threshold 90 ./my-rules
  upgradescope policy test policies/rules policies/kb`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.threshold > 0 {
				o.coverage = true // as opa test: a threshold asks for coverage
			}
			return policyTest(cmd.Context(), s, args, o)
		},
	}
	f := cmd.Flags()
	f.BoolVarP(&o.verbose, "verbose", "v", false, "print every test, and the notes and failures of a failing test's trace")
	f.StringVarP(&o.run, "run", "r", "", "run only the tests whose name matches this regular expression")
	f.BoolVarP(&o.coverage, "coverage", "c", false, "print the coverage report (JSON, as opa test --coverage) of the modules under PATH")
	f.Float64Var(&o.threshold, "threshold", 0, "exit 2 when coverage is below this percentage (implies --coverage)")
	f.IntVar(&o.memoryMiB, "policy-memory", engine.DefaultMemory>>20, "MiB the heap may grow by while the tests run before they are stopped (each test also stops after 5s)")
	return cmd
}

// policyTest runs OPA's own test runner and reporters, so its output and exit codes are
// those of `opa test`.
func policyTest(ctx context.Context, s streams, paths []string, o policyTestOptions) error {
	if err := o.validate(); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "upgradescope-policies-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	load, err := withBuiltins(paths, tmp)
	if err != nil {
		return err
	}
	popts := ast.ParserOptions{RegoVersion: ast.RegoV1, ProcessAnnotation: true}
	modules, store, err := tester.LoadWithParserOptions(load, nil, popts)
	if err != nil {
		return err
	}
	txn, err := store.NewTransaction(ctx, storage.WriteParams)
	if err != nil {
		return err
	}
	defer store.Abort(ctx, txn)
	// The compiler the runner would build itself, refusing what scan and eval refuse: a
	// pack's tests are as hermetic as its rules, and a test that calls http.send fails to
	// compile with its file and line.
	compiler := ast.NewCompiler().
		WithCapabilities(ast.CapabilitiesForThisVersion()).
		WithEnablePrintStatements(true).
		WithDefaultRegoVersion(ast.RegoV1).
		WithUnsafeBuiltins(engine.RefusedBuiltins())
	runner := tester.NewRunner().SetCompiler(compiler).SetStore(store).SetModules(modules).SetDefaultRegoVersion(ast.RegoV1)
	runner, reporter := o.setup(runner, s.out, modulesOutside(modules, tmp))
	guarded, stop := engine.GuardHeap(ctx, uint64(o.memoryMiB)<<20)
	defer stop()
	ch, err := runner.RunTests(guarded, txn)
	if err != nil {
		return fmt.Errorf("compile policies and tests: %w", err)
	}
	var stopped stops
	err = policyTestExit(reporter, stopped.note(guarded, ch), paths, o)
	switch {
	case engine.OverMemory(guarded):
		running := ""
		if len(stopped.running) > 0 {
			running = " while " + strings.Join(stopped.running, ", ") + " ran"
		}
		return fmt.Errorf("policy test stopped%s: the heap grew by more than %d MiB (--policy-memory)", running, o.memoryMiB)
	case len(stopped.refused) > 0:
		return fmt.Errorf("policy test stopped: %s (--policy-memory)", strings.Join(stopped.refused, "; "))
	}
	return err
}

// stops are the tests a memory bound stopped, at most three of each kind.
type stops struct {
	// running ended in an error once the guard had cancelled the tests' context: those
	// running when it did (at most one per worker of the runner), then any that started after.
	running []string
	// refused called a builtin that would have built more than one call may:
	// "data.p.test_x: replace would build more than 16 MiB in one call".
	refused []string
}

// note passes the results on, noting the tests a bound stopped.
func (s *stops) note(ctx context.Context, ch chan *tester.Result) chan *tester.Result {
	out := make(chan *tester.Result)
	go func() {
		defer close(out)
		for r := range ch {
			name := r.Package + "." + r.Name
			var refused *engine.BuildLimitError
			switch {
			case r.Error == nil:
			case engine.OverMemory(ctx) && len(s.running) < 3:
				s.running = append(s.running, name)
			case errors.As(r.Error, &refused) && len(s.refused) < 3:
				s.refused = append(s.refused, name+": "+refused.Message())
			}
			out <- r
		}
	}()
	return out
}

func (o policyTestOptions) validate() error {
	if _, err := regexp.Compile(o.run); err != nil {
		return fmt.Errorf("--run %q: %w", o.run, err)
	}
	if o.memoryMiB <= 0 {
		return fmt.Errorf("--policy-memory %d: want a positive number of MiB", o.memoryMiB)
	}
	if o.threshold < 0 || o.threshold > 100 {
		return fmt.Errorf("--threshold %g: want a percentage from 0 to 100", o.threshold)
	}
	return nil
}

// setup applies the options to the runner, as opa test does, and picks the reporter; pack
// is what the coverage report covers.
func (o policyTestOptions) setup(runner *tester.Runner, out io.Writer, pack map[string]*ast.Module) (*tester.Runner, tester.Reporter) {
	runner = runner.EnableTracing(o.verbose).Filter(o.run)
	if !o.coverage {
		return runner, tester.PrettyReporter{Output: out, Verbose: o.verbose}
	}
	cov := cover.New()
	return runner.SetCoverageQueryTracer(cov), packCoverage{cover: cov, modules: pack, out: out, threshold: o.threshold, verbose: o.verbose}
}

// policyTestExit hands the results to the reporter and turns them into the exit code.
func policyTestExit(reporter tester.Reporter, ch chan *tester.Result, paths []string, o policyTestOptions) error {
	failed, ran := false, false
	results := make(chan *tester.Result)
	go func() {
		defer close(results)
		for r := range ch {
			ran = true
			failed = failed || !r.Pass() // a skipped (todo_) test fails too, as in opa test
			if o.verbose {
				r.Trace = lineage.Filter(r.Trace, noteOrFail) // as opa test -v without --explain
			}
			results <- r
		}
	}()
	err := reporter.Report(results)
	var below *cover.CoverageThresholdError
	switch {
	case errors.As(err, &below):
		return &exitError{code: exitGate, msg: below.Error()}
	case err != nil:
		return err
	case failed:
		return &exitError{code: exitGate}
	case !ran && o.run != "":
		return fmt.Errorf("no test in %v matches --run %q", paths, o.run)
	case !ran:
		return fmt.Errorf("no tests found in %v", paths)
	}
	return nil
}

func noteOrFail(e *topdown.Event) bool { return e.Op == topdown.NoteOp || e.Op == topdown.FailOp }

// withBuiltins is paths plus a copy in dir of each built-in bundle the paths do not hold.
func withBuiltins(paths []string, dir string) ([]string, error) {
	load := append([]string(nil), paths...)
	for _, b := range policies.Builtin {
		if holdsBuiltin(paths, b.Name) {
			continue
		}
		target := filepath.Join(dir, b.Name)
		if err := writeBuiltin(b.FS, target); err != nil {
			return nil, err
		}
		load = append(load, target)
	}
	return load, nil
}

// modulesOutside is the modules not loaded from under dir.
func modulesOutside(modules map[string]*ast.Module, dir string) map[string]*ast.Module {
	out := map[string]*ast.Module{}
	for name, m := range modules {
		if !strings.HasPrefix(name, dir+string(filepath.Separator)) {
			out[name] = m
		}
	}
	return out
}

// packCoverage is tester.JSONCoverageReporter for the modules under the paths named: OPA's
// report of them, without the built-in library loaded beside them, which is not the pack's
// to cover (its own tests, not run here, cover it). Failing tests are printed instead, as
// OPA's reporter does.
type packCoverage struct {
	cover     *cover.Cover
	modules   map[string]*ast.Module
	out       io.Writer
	threshold float64
	verbose   bool
}

func (r packCoverage) Report(ch chan *tester.Result) error {
	var failed []*tester.Result
	for tr := range ch {
		if tr.Fail || tr.Error != nil {
			failed = append(failed, tr)
		}
	}
	if len(failed) > 0 {
		return tester.PrettyReporter{Output: r.out, Verbose: r.verbose}.Report(closedChannel(failed))
	}
	report := coverageOf(r.cover.Report(r.modules), r.modules)
	if report.Coverage < r.threshold {
		return &cover.CoverageThresholdError{Coverage: report.Coverage, Threshold: r.threshold}
	}
	enc := json.NewEncoder(r.out)
	enc.SetIndent("", "  ")
	return enc.Encode(report)
}

func closedChannel(results []*tester.Result) chan *tester.Result {
	ch := make(chan *tester.Result, len(results))
	for _, r := range results {
		ch <- r
	}
	close(ch)
	return ch
}

// coverageOf keeps the report's files that are modules and sums their lines again, as
// cover.Report does.
func coverageOf(report cover.Report, modules map[string]*ast.Module) cover.Report {
	report.CoveredLines, report.NotCoveredLines, report.Coverage = 0, 0, 0
	for file, fr := range report.Files {
		if _, ok := modules[file]; !ok {
			delete(report.Files, file)
			continue
		}
		report.CoveredLines += fr.CoveredLines
		report.NotCoveredLines += fr.NotCoveredLines
	}
	if total := report.CoveredLines + report.NotCoveredLines; total > 0 {
		report.Coverage = 100 * float64(report.CoveredLines) / float64(total)
	}
	return report
}

// builtinMarker is a directory only each built-in bundle's checkout holds.
var builtinMarker = map[string]string{"rules": "upgradescope/lib", "kb": "upgradescope/kb"}

// holdsBuiltin is true when a path is the named built-in bundle itself (a checkout's
// policies/rules or policies/kb).
func holdsBuiltin(paths []string, name string) bool {
	for _, p := range paths {
		if info, err := os.Stat(filepath.Join(p, filepath.FromSlash(builtinMarker[name]))); err == nil && info.IsDir() {
			return true
		}
	}
	return false
}

// writeBuiltin copies an embedded bundle, tests and manifest excluded, to dir.
func writeBuiltin(fsys fs.FS, dir string) error {
	return fs.WalkDir(fsys, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == "." {
			return err
		}
		target := filepath.Join(dir, filepath.FromSlash(path))
		if d.IsDir() {
			return os.MkdirAll(target, 0o700)
		}
		if strings.HasSuffix(path, "_test.rego") || path == ".manifest" {
			return nil
		}
		data, err := fs.ReadFile(fsys, path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o600)
	})
}
