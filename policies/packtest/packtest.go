// Package packtest runs a rule pack's Rego tests as `opa test` does, with OPA's own runner
// and reporters, so its output and failures are those of opa test: the built-in library and
// knowledge base loaded beside the pack (as `opa test PACK policies/rules policies/kb`
// without the built-in tests), the builtins scan refuses refused at compile time, a heap
// bound, and coverage of the pack's own modules only.
package packtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/cover"
	"github.com/open-policy-agent/opa/v1/storage"
	"github.com/open-policy-agent/opa/v1/tester"
	"github.com/open-policy-agent/opa/v1/topdown"
	"github.com/open-policy-agent/opa/v1/topdown/lineage"

	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/policies"
)

// Options are those of `opa test` that Run takes, meaning what they mean there. The caller
// validates them: Run is the pack's runner, its caller's flags are its own.
type Options struct {
	Verbose   bool    // every test's result, and the notes and failures of a failing one's trace
	Run       string  // only tests whose name matches this regular expression
	Coverage  bool    // the JSON coverage report instead of the results
	Threshold float64 // with Coverage: a Failure below this percentage
	MemoryMiB int     // the heap the tests may grow by, as scan's --policy-memory
}

// Failure is a run the pack fails: a test failed or was skipped (Msg is "", the report
// written says which), or coverage is below the threshold (Msg says by how much, in
// opa test's words).
type Failure struct{ Msg string }

func (f *Failure) Error() string {
	if f.Msg == "" {
		return "a test failed"
	}
	return f.Msg
}

// ErrNoTests is a run that found no test to run: none under the paths, or none matching
// Options.Run.
var ErrNoTests = errors.New("no tests found")

// StoppedError is a run the heap bound stopped: the tests running when the heap grew past
// MemoryMiB, or those that called a builtin that would have built more than one call may.
type StoppedError struct {
	MemoryMiB int
	Running   []string
	Refused   []string
}

func (e *StoppedError) Error() string {
	if len(e.Refused) > 0 && len(e.Running) == 0 {
		return "stopped: " + strings.Join(e.Refused, "; ")
	}
	running := ""
	if len(e.Running) > 0 {
		running = " while " + strings.Join(e.Running, ", ") + " ran"
	}
	return fmt.Sprintf("stopped%s: the heap grew by more than %d MiB", running, e.MemoryMiB)
}

// Run runs the Rego tests under paths and writes OPA's report of them to out: the results
// (opa test's pretty reporter) or, with Coverage, the JSON coverage report of the modules
// under paths. It answers nil when every test passed, a *Failure when the pack fails,
// ErrNoTests, a *StoppedError, or the error that kept the tests from running (a pack that
// does not compile names its file and line).
func Run(ctx context.Context, out io.Writer, paths []string, o Options) error {
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
	runner, reporter := o.setup(runner, out, modulesOutside(modules, tmp))
	guarded, stop := engine.GuardHeap(ctx, uint64(o.MemoryMiB)<<20)
	defer stop()
	ch, err := runner.RunTests(guarded, txn)
	if err != nil {
		return fmt.Errorf("compile policies and tests: %w", err)
	}
	var stopped stops
	err = reportResults(reporter, stopped.note(guarded, ch), o)
	switch {
	case engine.OverMemory(guarded):
		return &StoppedError{MemoryMiB: o.MemoryMiB, Running: stopped.running}
	case len(stopped.refused) > 0:
		return &StoppedError{MemoryMiB: o.MemoryMiB, Refused: stopped.refused}
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

// setup applies the options to the runner, as opa test does, and picks the reporter; pack
// is what the coverage report covers.
func (o Options) setup(runner *tester.Runner, out io.Writer, pack map[string]*ast.Module) (*tester.Runner, tester.Reporter) {
	runner = runner.EnableTracing(o.Verbose).Filter(o.Run)
	if !o.Coverage {
		return runner, tester.PrettyReporter{Output: out, Verbose: o.Verbose}
	}
	cov := cover.New()
	return runner.SetCoverageQueryTracer(cov), packCoverage{cover: cov, modules: pack, out: out, threshold: o.Threshold, verbose: o.Verbose}
}

// reportResults hands the results to the reporter and answers how the run ended.
func reportResults(reporter tester.Reporter, ch chan *tester.Result, o Options) error {
	failed, ran := false, false
	results := make(chan *tester.Result)
	go func() {
		defer close(results)
		for r := range ch {
			ran = true
			failed = failed || !r.Pass() // a skipped (todo_) test fails too, as in opa test
			if o.Verbose {
				r.Trace = lineage.Filter(r.Trace, noteOrFail) // as opa test -v without --explain
			}
			results <- r
		}
	}()
	err := reporter.Report(results)
	var below *cover.CoverageThresholdError
	switch {
	case errors.As(err, &below):
		return &Failure{Msg: below.Error()}
	case err != nil:
		return err
	case failed:
		return &Failure{}
	case !ran:
		return ErrNoTests
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
