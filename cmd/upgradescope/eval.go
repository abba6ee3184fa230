package main

import (
	"context"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/upgradescope/upgradescope/inventory"
)

func newEvalCommand(s streams) *cobra.Command {
	var jf judgeFlags
	var path string
	cmd := &cobra.Command{
		Use:   "eval --inventory FILE --target 1.37",
		Short: "Judge an inventory document collected elsewhere; gates exactly like scan",
		Example: `  upgradescope eval --inventory inventory.json --target 1.36,1.37 --policy ./my-rules
  upgradescope eval --inventory inventory.json --target 1.37 --fail-on blocker --output sarif`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withLimitFlag(runEval(cmd.Context(), s, &jf, path))
		},
	}
	jf.register(cmd)
	cmd.Flags().StringVar(&path, "inventory", "", "inventory JSON `FILE`, as upgradescope inventory writes it (required)")
	_ = cmd.MarkFlagRequired("inventory")
	return cmd
}

// runEval judges the inventory at path; newEvalCommand names the flag of a bound it crosses.
func runEval(ctx context.Context, s streams, jf *judgeFlags, path string) error {
	tuneGCForOneShot()
	j, err := jf.validate()
	if err != nil {
		return err
	}
	j.inventoryFile = describeFile(path)
	doc, err := inventory.ReadFile(path)
	if err != nil {
		return err
	}
	rep := newProgress(s, jf.quiet)
	defer rep.Close()
	eng, err := jf.newEngine(ctx, rep)
	if err != nil {
		return err
	}
	return jf.judge(ctx, s, rep, eng, doc, j, filepath.Dir(path))
}
