package main

import (
	"context"
	"fmt"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/storage"
	"github.com/open-policy-agent/opa/v1/tester"
	"github.com/spf13/cobra"
)

func newPolicyCommand(s streams) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "policy",
		Short: "Work with rule packs",
	}
	cmd.AddCommand(newPolicyTestCommand(s))
	return cmd
}

func newPolicyTestCommand(s streams) *cobra.Command {
	return &cobra.Command{
		Use:   "test PATH...",
		Short: "Run the Rego tests of rule packs, as `opa test` does (exit 2 when a test fails)",
		Example: `  upgradescope policy test ./my-rules
  upgradescope policy test policies/`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return policyTest(cmd.Context(), s, args)
		},
	}
}

// policyTest runs OPA's own test runner and reporter, so its output and exit codes are
// those of `opa test`.
func policyTest(ctx context.Context, s streams, paths []string) error {
	popts := ast.ParserOptions{RegoVersion: ast.RegoV1, ProcessAnnotation: true}
	modules, store, err := tester.LoadWithParserOptions(paths, nil, popts)
	if err != nil {
		return err
	}
	txn, err := store.NewTransaction(ctx, storage.WriteParams)
	if err != nil {
		return err
	}
	defer store.Abort(ctx, txn)
	runner := tester.NewRunner().SetStore(store).SetModules(modules).SetDefaultRegoVersion(ast.RegoV1)
	ch, err := runner.RunTests(ctx, txn)
	if err != nil {
		return err
	}
	failed, ran := false, false
	results := make(chan *tester.Result)
	go func() {
		defer close(results)
		for r := range ch {
			ran = true
			if !r.Pass() {
				failed = true
			}
			results <- r
		}
	}()
	reporter := tester.PrettyReporter{Output: s.out, FailureLine: true}
	if err := reporter.Report(results); err != nil {
		return err
	}
	if !ran {
		return fmt.Errorf("no tests found in %v", paths)
	}
	if failed {
		return &exitError{code: exitGate}
	}
	return nil
}
