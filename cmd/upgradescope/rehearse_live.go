package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/upgradescope/upgradescope/collectors/cluster"
	"github.com/upgradescope/upgradescope/kb"
	"github.com/upgradescope/upgradescope/rehearsal"
)

// rehearseLiveFlags bound the full-object collection `rehearse` makes of a live cluster.
type rehearseLiveFlags struct {
	maxObjects int
}

func (f *rehearseLiveFlags) register(cmd *cobra.Command) {
	cmd.Flags().IntVar(&f.maxObjects, "rehearse-max-objects", cluster.DefaultRehearsalMaxObjects,
		"most objects read from the cluster for the rehearsal (and 512 MiB of them); past it the rest are not replayed and the verdict is unknown")
}

// collectRehearsal reads, from the cluster of the chosen context, every object a rehearsal
// replays and every Helm release's manifest, within --timeout. It reads whole objects of
// every resource, Secrets included, with the user's own credentials: the agent never does
// (its ClusterRole does not grant it). What the identity may not list is skipped, and the
// verdict is unknown.
func (f *liveFlags) collectRehearsal(ctx context.Context, rf rehearseLiveFlags, k *kb.KB, target string) ([]rehearsal.Object, []rehearsal.Skipped, error) {
	if rf.maxObjects < 1 {
		return nil, nil, fmt.Errorf("--rehearse-max-objects %d: want at least 1", rf.maxObjects)
	}
	_, cfg, err := f.restConfig(", or --files PATH to rehearse rendered manifests instead")
	if err != nil {
		return nil, nil, err
	}
	col, err := cluster.New(cfg)
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	objs, skipped, err := col.RehearsalObjects(ctx, cluster.RehearsalOptions{KB: k, Target: target, MaxObjects: rf.maxObjects})
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return nil, nil, fmt.Errorf("reading the cluster's objects for the rehearsal did not finish within --timeout %s: raise --timeout", f.timeout)
	case err != nil:
		return nil, nil, fmt.Errorf("read the cluster's objects for the rehearsal: %w", err)
	}
	return objs, skipped, nil
}
