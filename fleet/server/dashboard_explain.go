package server

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/upgradescope/upgradescope/fleet/server/store"
	"github.com/upgradescope/upgradescope/fleet/server/web"
	"github.com/upgradescope/upgradescope/report"
)

// What the cluster page adds to explain a report: the agent behind a probe gap, and the
// exports the page may link.

// probeCollector is what the agent that collected snapshot said it collects with, for the
// fix of a probe gap in gaps: read only when there is one, and only for the cluster's latest
// snapshot, the one whose agent the cluster's record holds. The cluster page and the HTML
// export both name it.
func probeCollector(ctx context.Context, st store.Store, c store.Cluster, snapshot int64, gaps []report.Gap) (report.Collector, error) {
	if snapshot != c.LatestSnapshotID || !slices.ContainsFunc(gaps, func(g report.Gap) bool {
		return strings.HasPrefix(g.Capability, "probes/")
	}) {
		return report.Collector{}, nil
	}
	snap, err := st.LatestSnapshot(ctx, c.ID)
	if errors.Is(err, store.ErrNotFound) {
		return report.Collector{}, nil
	} else if err != nil {
		return report.Collector{}, fmt.Errorf("read the agent of cluster %d: %w", c.ID, err)
	}
	by := report.Collector{Version: snap.AgentVersion, KB: snap.KBVersion, Bundles: map[string]string{}}
	for _, b := range c.AgentBundles {
		by.Bundles[b.Name] = b.Revision
	}
	return by, nil
}

// fillExports lists the export formats when GET /api/v1/clusters/{id}/export would answer
// the page's target: a stored evaluation there, of the latest snapshot for a team-scoped
// reader (exportHandler.export). A link that answers 404 would be worse than none.
func (h *dashboardHandler) fillExports(ctx context.Context, c store.Cluster, sc scope, view *web.Cluster) error {
	if view.Target == "" || view.Result == nil {
		return nil
	}
	ev, err := h.reads.store.LatestEvaluation(ctx, c.ID, view.Target)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	} else if err != nil {
		return err
	}
	if !sc.fleet && ev.SnapshotID != c.LatestSnapshotID {
		return nil
	}
	view.Exports = slices.Sorted(maps.Keys(exportFormats))
	return nil
}
