package main

import (
	"context"
	"errors"
	"fmt"
	"regexp"

	"github.com/spf13/cobra"

	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/policies/packtest"
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

// policyTest runs the pack's tests and turns how they ended into output and an exit code,
// those of `opa test`.
func policyTest(ctx context.Context, s streams, paths []string, o policyTestOptions) error {
	if err := o.validate(); err != nil {
		return err
	}
	err := packtest.Run(ctx, s.out, paths, packtest.Options{Verbose: o.verbose, Run: o.run, Coverage: o.coverage,
		Threshold: o.threshold, MemoryMiB: o.memoryMiB})
	var failure *packtest.Failure
	var stopped *packtest.StoppedError
	switch {
	case errors.As(err, &failure):
		return &exitError{code: exitGate, msg: failure.Msg}
	case errors.As(err, &stopped):
		return fmt.Errorf("policy test %w (--policy-memory)", err)
	case errors.Is(err, packtest.ErrNoTests) && o.run != "":
		return fmt.Errorf("no test in %v matches --run %q", paths, o.run)
	case errors.Is(err, packtest.ErrNoTests):
		return fmt.Errorf("no tests found in %v", paths)
	}
	return err
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
