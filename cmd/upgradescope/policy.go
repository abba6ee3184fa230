package main

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/storage"
	"github.com/open-policy-agent/opa/v1/tester"
	"github.com/spf13/cobra"

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

func newPolicyTestCommand(s streams) *cobra.Command {
	return &cobra.Command{
		Use:   "test PATH...",
		Short: "Run the Rego tests of rule packs, as `opa test` does (exit 2 when a test fails)",
		Long: `Runs the Rego tests under PATH with OPA's own test runner. The built-in library and
knowledge base (data.upgradescope.lib, data.upgradescope.kb) are loaded beside them, so the
result is that of ` + "`opa test PATH... policies/rules policies/kb`" + ` without the built-in tests.`,
		Example: `  upgradescope policy test ./my-rules
  upgradescope policy test policies/rules policies/kb`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return policyTest(cmd.Context(), s, args)
		},
	}
}

// policyTest runs OPA's own test runner and reporter, so its output and exit codes are
// those of `opa test`.
func policyTest(ctx context.Context, s streams, paths []string) error {
	load := append([]string(nil), paths...)
	tmp, err := os.MkdirTemp("", "upgradescope-policies-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	for _, b := range policies.Builtin {
		if holdsBuiltin(paths, b.Name) {
			continue
		}
		dir := filepath.Join(tmp, b.Name)
		if err := writeBuiltin(b.FS, dir); err != nil {
			return err
		}
		load = append(load, dir)
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
