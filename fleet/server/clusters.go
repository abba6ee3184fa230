package server

import (
	"context"
	"errors"
	"net/http"

	"github.com/upgradescope/upgradescope/fleet/api"
	"github.com/upgradescope/upgradescope/fleet/server/admission"
	"github.com/upgradescope/upgradescope/fleet/server/store"
	"github.com/upgradescope/upgradescope/inventory"
)

// clustersHandler is GET /api/v1/clusters and GET /api/v1/clusters/{id}.
type clustersHandler struct {
	reads *fleetReads
	snaps *snapshots
	admit *admission.Turns
	store store.Store
	plan  targetPlan
}

func (h *clustersHandler) list(w http.ResponseWriter, r *http.Request, sc scope) error {
	v, err := h.reads.loadFleet(r.Context(), sc)
	if err != nil {
		return err
	}
	out := make([]api.Cluster, 0, len(v.clusters))
	for _, c := range v.clusters {
		out = append(out, h.reads.clusterSummary(c, v.cells[c.ID]))
	}
	writeJSON(w, http.StatusOK, api.ClusterList{Clusters: out})
	return nil
}

func (h *clustersHandler) get(w http.ResponseWriter, r *http.Request, sc scope) error {
	c, cells, err := h.reads.cluster(r, sc)
	if err != nil {
		return err
	}
	if cells, err = h.reads.cellsFor(r.Context(), c, cells, sc); err != nil {
		return err
	}
	d := api.ClusterDetail{Cluster: h.reads.clusterSummary(c, cells), Evaluations: []*api.Evaluation{}}
	d.Targets = h.plan.plan(c.ServerVersion)
	if d.Targets == nil {
		d.Targets = []string{}
	}
	for _, row := range sortedCells(cells) {
		d.Evaluations = append(d.Evaluations, h.reads.summary(c, row))
	}
	if d.Snapshot, err = h.snapshotView(r.Context(), c, sc); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, d)
	return nil
}

// snapshotView is the latest snapshot's summary. A team-scoped reader is told which
// capabilities were missing or partial, not why: a reason may name other teams' objects.
func (h *clustersHandler) snapshotView(ctx context.Context, c store.Cluster, sc scope) (*api.Snapshot, error) {
	if c.LatestSnapshotID == 0 {
		return nil, nil
	}
	turn, err := h.admit.Report(ctx)
	if err != nil {
		return nil, err
	}
	defer turn()
	snap, err := h.store.LatestSnapshot(ctx, c.ID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	doc, err := h.snaps.decode(ctx, snap)
	if err != nil {
		return nil, err
	}
	v := &api.Snapshot{ID: snap.ID, ReceivedAt: snap.ReceivedAt.UTC(), AgentVersion: snap.AgentVersion,
		KBVersion: snap.KBVersion, ServerVersion: snap.ServerVersion, Capabilities: doc.Capabilities}
	if !snap.CollectedAt.IsZero() {
		at := snap.CollectedAt.UTC()
		v.CollectedAt = &at
	}
	if v.Capabilities == nil {
		v.Capabilities = map[string]inventory.Capability{}
	}
	if !sc.fleet {
		v.Capabilities = withheldCapabilities(v.Capabilities) // as its share says them
	}
	return v, nil
}

// sortedCells orders a cluster's cells by target minor.
func sortedCells(cells []store.FleetRow) []store.FleetRow {
	byTarget := map[string]store.FleetRow{}
	var targets []string
	for _, c := range cells {
		byTarget[c.Target] = c
		targets = append(targets, c.Target)
	}
	out := make([]store.FleetRow, 0, len(cells))
	for _, t := range inventory.SortMinors(targets) {
		out = append(out, byTarget[t])
	}
	return out
}
