package main

import (
	"context"
	"strings"

	"github.com/spf13/cobra"

	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/internal/progress"
)

// registerQuiet adds --quiet, which silences the progress a terminal's stderr gets.
func registerQuiet(cmd *cobra.Command, quiet *bool) {
	cmd.Flags().BoolVarP(quiet, "quiet", "q", false, "show no progress on stderr (shown only when stderr is a terminal)")
}

// newProgress shows progress on stderr when it is a terminal and --quiet is not set; else it
// is nil, which shows nothing.
func newProgress(s streams, quiet bool) *progress.Reporter {
	return progress.ForTerminal(s.err, quiet)
}

// loadEngine builds the engine from opts, a step worth showing: bundles may be fetched and
// compiling them takes a moment.
func loadEngine(ctx context.Context, rep *progress.Reporter, opts []engine.Option) (*engine.Engine, error) {
	rep.Start("loading policy bundles")
	eng, err := engine.New(ctx, opts...)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, b := range eng.Bundles() {
		names = append(names, b.Name+" "+b.Revision)
	}
	rep.Done(strings.Join(names, ", "))
	return eng, nil
}
