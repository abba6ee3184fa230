package server

import (
	"context"
	"errors"

	"github.com/upgradescope/upgradescope/fleet/server/store"
	"github.com/upgradescope/upgradescope/inventory"
)

// lastJudged is the inventory a new bundle set should be rehearsed on before the server
// has judged any push since it started: the latest snapshot of the cluster that pushed
// last, with the team map applied, and the targets an ingest judges it at. Without it a
// restart would take up a pack that breaks the findings contract unrehearsed, and then
// store every push without evaluations. It answers nil when no cluster has a snapshot.
func (s *Server) lastJudged(ctx context.Context) (*inventory.Document, []string, error) {
	clusters, err := s.cfg.Store.Clusters(ctx)
	if err != nil {
		return nil, nil, err
	}
	var last *store.Cluster
	for i, c := range clusters {
		if c.LatestSnapshotID != 0 && (last == nil || c.LastSeen.After(last.LastSeen)) {
			last = &clusters[i]
		}
	}
	if last == nil {
		return nil, nil, nil
	}
	snap, err := s.cfg.Store.LatestSnapshot(ctx, last.ID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, nil
	} else if err != nil {
		return nil, nil, err
	}
	doc, err := s.snaps.decodeInBackground(ctx, snap)
	if err != nil {
		return nil, nil, err
	}
	targets := s.plan.plan(currentVersion(doc, last.ServerVersion))
	return s.cfg.TeamMap.apply(doc), targets, nil
}
