package server

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"

	"github.com/upgradescope/upgradescope/fleet/server/store"
	"github.com/upgradescope/upgradescope/fleet/server/web"
	"github.com/upgradescope/upgradescope/report"
)

// What the cluster page adds to explain a report: the agent behind a probe gap, and the
// exports the page may link.

// fillAgent names the agent of the latest snapshot when the report has probe gaps: their fix
// is a newer agent, and the page says which one collected the inventory.
func (h *dashboardHandler) fillAgent(ctx context.Context, c store.Cluster, view *web.Cluster) error {
	if view.Result == nil || !slices.ContainsFunc(view.Result.NotAssessed, func(g report.Gap) bool {
		return strings.HasPrefix(g.Capability, "probes/")
	}) {
		return nil
	}
	snap, err := h.reads.store.LatestSnapshot(ctx, c.ID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	} else if err != nil {
		return err
	}
	view.AgentVersion, view.AgentKB = snap.AgentVersion, snap.KBVersion
	return nil
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
