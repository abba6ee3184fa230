package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/upgradescope/upgradescope/bundles"
	"github.com/upgradescope/upgradescope/bundles/rollout/outcome"
	"github.com/upgradescope/upgradescope/fleet/server"
	"github.com/upgradescope/upgradescope/internal/smallfile"
)

// dryRunSlack is how long past its budget a server's dry run may take to answer: the
// upload, the clusters in flight when it ran out, the summary.
const dryRunSlack = 2 * time.Minute

// localDryRunOnly are the flags that shape a dry run over --inventories, which a server decides
// for itself: it judges at its own targets, with its own bundles, limits, clock and workers.
// serverDryRunOnly are those of --server alone.
var (
	localDryRunOnly = []string{"target", "workers", "now", "bundle", "verification-key", "signing-alg",
		"bundle-token-file", "bundle-ca-file", "bundle-timeout", "policy-timeout", "policy-memory"}
	serverDryRunOnly = []string{"server-ca-file", "read-token", "read-token-file"}
)

// refuseFlags names the first of flags given, which the mode does not use: a flag silently
// ignored would let a pipeline believe it judged what it did not.
func refuseFlags(cmd *cobra.Command, flags []string, why string) error {
	for _, name := range flags {
		if cmd.Flags().Changed(name) {
			return fmt.Errorf("--%s %s", name, why)
		}
	}
	return nil
}

// runServerDryRun sends the candidate to a fleet server's dry run and prints its answer as
// the --inventories mode prints its own, with the same exit codes.
func runServerDryRun(cmd *cobra.Command, s streams, candidate string, f *dryRunFlags) error {
	if err := refuseFlags(cmd, localDryRunOnly, "applies to --inventories: with --server the server judges at its own targets, with its own bundles"); err != nil {
		return err
	}
	if _, err := f.validate(); err != nil {
		return err
	}
	raw, err := readCandidateTarball(candidate)
	if err != nil {
		return err
	}
	c, err := fleetClient(s, f.server, f.caFile, f.token, "read-token")
	if err != nil {
		return err
	}
	// Unset, the server's own budget applies: the wait is that of a server of this version.
	budget, asked := server.DefaultDryRunBudget, time.Duration(0)
	if cmd.Flags().Changed("budget") {
		budget, asked = f.budget, f.budget
	}
	// The answer streams for as long as the dry run takes: the context bounds it.
	ctx, cancel := context.WithTimeout(cmd.Context(), budget+dryRunSlack)
	defer cancel()
	results, summary, err := c.DryRun(ctx, raw, asked, dryRunProgress(s, f.quiet))
	if err != nil {
		return err
	}
	if err := writeDryRun(s, f, results, summary); err != nil {
		return err
	}
	return dryRunGate(summary, f.failOn)
}

// readCandidateTarball reads the candidate a server verifies: a bundle tarball (a server
// cannot be sent a directory, and would refuse it unsigned anyway).
func readCandidateTarball(path string) ([]byte, error) {
	if info, err := os.Stat(path); err == nil && info.IsDir() {
		return nil, fmt.Errorf("candidate %s is a directory: a server takes a signed bundle tarball, made with `upgradescope bundle build` and `bundle sign`", path)
	}
	if bundles.IsURL(path) {
		return nil, fmt.Errorf("candidate %s: with --server give a local signed bundle tarball", bundles.SanitizedURL(path))
	}
	raw, err := smallfile.Read(path, bundles.MaxSize)
	if err != nil {
		return nil, fmt.Errorf("candidate: %w", err)
	}
	return raw, nil
}

// dryRunProgress prints a line per cluster on stderr as the server judges it (nil with -q).
func dryRunProgress(s streams, quiet bool) func(outcome.Result) {
	if quiet {
		return nil
	}
	done := 0
	return func(r outcome.Result) {
		done++
		fmt.Fprintf(s.err, "[%d] %s\n", done, progressLine(r))
	}
}
