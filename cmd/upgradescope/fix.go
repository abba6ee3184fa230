package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/upgradescope/upgradescope/fix"
	"github.com/upgradescope/upgradescope/inventory"
)

// Exit codes of fix: 2 says something would change (exitGate's number), 3 that something
// needs a person, which takes precedence.
const exitNeedsPerson = 3

// fixFlags are fix's flags.
type fixFlags struct {
	files, target, output string
	write, quiet          bool
	bundles               bundleFlags
	budget                filesBudget
	exclude               excludeFlags
}

func newFixCommand(s streams) *cobra.Command {
	var f fixFlags
	cmd := &cobra.Command{
		Use:   "fix --files PATH --target 1.N [--write]",
		Short: "Rewrite manifests at APIs the target does not serve into the versions that replace them",
		Long: `fix converts every object the files hold at an API the target does not serve into the
version that replaces it, field by field as the API server converts it, and prints a unified
diff; --write edits the files in place. Only the converted objects' lines change. What needs a
choice by a person (a field the new version dropped, a changed meaning, a Helm template, an
object an Argo CD or Flux source produces) is listed with file:line and left untouched.

Exit codes: 0 nothing to change and nothing needs a person; 2 something would change (the
diff is printed, nothing written); 3 something needs a person (before 2); with --write, 0 or
3 when something still needs a person; 1 an error. See docs/fix.md.`,
		Example: `  upgradescope fix --files ./manifests --target 1.37
  upgradescope fix --files ./manifests --target 1.37 --write
  upgradescope fix --files ./manifests --target 1.37 -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runFix(cmd, s, &f) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.files, "files", "", "manifests: a directory (walked) or one file (required)")
	fl.StringVar(&f.target, "target", "", "the Kubernetes minor the objects must be served by, e.g. 1.37 (required)")
	fl.BoolVar(&f.write, "write", false, "write the converted files in place instead of printing the diff")
	fl.StringVarP(&f.output, "output", "o", "text", "output format: text (the diff, then what needs a person) or json (the plan)")
	registerFilesBudget(cmd, &f.budget)
	f.exclude.register(cmd)
	f.bundles.register(cmd)
	registerQuiet(cmd, &f.quiet)
	_ = cmd.MarkFlagRequired("files")
	_ = cmd.MarkFlagRequired("target")
	completeValues(cmd, "output", "text", "json")
	return cmd
}

func runFix(cmd *cobra.Command, s streams, f *fixFlags) error {
	tuneGCForFix()
	target, err := inventory.ParseTarget(f.target)
	if err != nil {
		return fmt.Errorf("--target: %w", err)
	}
	if f.output != "text" && f.output != "json" {
		return fmt.Errorf("--output %q: want text or json", f.output)
	}
	if f.budget.maxMiB < 0 {
		return fmt.Errorf("--files-max-mib %d: must not be negative", f.budget.maxMiB)
	}
	ex, err := f.exclude.forFiles(f.files, "")
	if err != nil {
		return err
	}
	rep := newProgress(s, f.quiet)
	defer rep.Close()
	opts, err := f.bundles.engineOptions(cmd.Context())
	if err != nil {
		return err
	}
	eng, err := loadEngine(cmd.Context(), rep, opts)
	if err != nil {
		return err
	}
	rep.Start("converting manifests in " + f.files)
	plan, err := fix.Scan(f.files, fix.Options{KB: eng.KB(), Target: target, MaxBytes: int64(f.budget.maxMiB) << 20, SkipServed: true, Retain: f.retain(), Exclude: ex})
	if err != nil {
		return err
	}
	rep.Done(fmt.Sprintf("%d file(s) to change", len(plan.Changed())))
	rep.Close()
	for _, w := range plan.Warnings {
		fmt.Fprintf(s.err, "warning: %s\n", w)
	}
	if f.write {
		if err := plan.Write(); err != nil {
			return err
		}
	}
	if err := renderFix(s, f, plan); err != nil {
		return err
	}
	return fixExit(plan, f.write)
}

// retain is what of a changed file's bytes the outputs the flags ask for read: --write its
// new bytes (and a digest of the old, to leave a file edited meanwhile), the text output its
// diff, -o json none.
func (f *fixFlags) retain() fix.Retain {
	switch {
	case f.write:
		return fix.RetainWrite
	case f.output == "json":
		return fix.RetainNone
	}
	return fix.RetainDiff
}

func renderFix(s streams, f *fixFlags, plan *fix.Plan) error {
	if f.output == "json" {
		enc := json.NewEncoder(s.out)
		enc.SetIndent("", "  ")
		return enc.Encode(plan.Report())
	}
	if f.write {
		for _, c := range plan.Changed() {
			fmt.Fprintf(s.out, "wrote %s\n", c.Path)
		}
	} else if err := plan.WriteDiff(s.out); err != nil {
		return err
	}
	plan.WriteText(s.out)
	return nil
}

// fixExit is the documented exit code of a plan.
func fixExit(plan *fix.Plan, written bool) error {
	manual := len(plan.Manual())
	switch {
	case manual > 0:
		return &exitError{code: exitNeedsPerson, msg: fmt.Sprintf("%d object(s) need a person", manual)}
	case len(plan.Changed()) > 0 && !written:
		return &exitError{code: exitGate, msg: fmt.Sprintf("%d file(s) would change: run with --write to write them", len(plan.Changed()))}
	}
	return nil
}
