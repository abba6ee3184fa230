package server

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/upgradescope/upgradescope/fleet/api"
	"github.com/upgradescope/upgradescope/fleet/server/store"
	"github.com/upgradescope/upgradescope/inventory"
)

// fleetView is one read of the store: every cluster and its fleet cells, with what the
// reader's scope lets it see: for a team-scoped reader its clusters and their shares' cells.
type fleetView struct {
	clusters []store.Cluster
	cells    map[int64][]store.FleetRow
}

func (s *Server) loadFleet(ctx context.Context, sc scope) (fleetView, error) {
	clusters, err := s.store.Clusters(ctx)
	if err != nil {
		return fleetView{}, err
	}
	cells, err := s.fleetCells(ctx)
	if err != nil {
		return fleetView{}, err
	}
	v := fleetView{cells: cells}
	for _, c := range clusters {
		if inScope(sc, c, v.cells[c.ID]) {
			v.clusters = append(v.clusters, c)
		}
	}
	if sc.fleet {
		return v, nil
	}
	// A team-scoped reader sees its shares' cells, never the stored ones (which s.cells
	// keeps for every reader: it is not written to).
	v.cells = make(map[int64][]store.FleetRow, len(v.clusters))
	for _, c := range v.clusters {
		if v.cells[c.ID], err = s.shareCells(ctx, c, sc, nil); err != nil {
			return fleetView{}, err
		}
	}
	return v, nil
}

// fleetCells answers every cluster's cells by cluster id. The rows are kept while the
// store's fleet version is unchanged: a cheap query in place of reading every cell, checked
// on every call, so each replica serves what the database holds.
func (s *Server) fleetCells(ctx context.Context) (map[int64][]store.FleetRow, error) {
	version, err := s.store.FleetVersion(ctx)
	if err != nil {
		return nil, err
	}
	s.cellsMu.Lock()
	defer s.cellsMu.Unlock()
	if s.cellsVersion == version && s.cells != nil {
		return s.cells, nil
	}
	rows, err := s.store.Fleet(ctx)
	if err != nil {
		return nil, err
	}
	cells := map[int64][]store.FleetRow{}
	for _, r := range rows {
		cells[r.ClusterID] = append(cells[r.ClusterID], r)
	}
	s.cells, s.cellsVersion = cells, version
	return cells, nil
}

// inScope answers whether a reader sees a cluster: the fleet sees every one, a team scope
// those whose evaluations of the latest snapshot give one of its teams a namespace. A cell
// of an older snapshot does not count: a team that left the cluster stops seeing it.
func inScope(sc scope, c store.Cluster, cells []store.FleetRow) bool {
	if sc.fleet {
		return true
	}
	for _, cell := range cells {
		if cell.SnapshotID == c.LatestSnapshotID && sc.seesAny(cell.Teams) {
			return true
		}
	}
	return false
}

// summary is evaluation row r of cluster c as the API shows it, outdated as s.outdated says.
func (s *Server) summary(c store.Cluster, r store.FleetRow) *api.Evaluation {
	return &api.Evaluation{Target: r.Target, Verdict: r.Verdict, Score: r.Score, Ready: r.Verdict == "ready",
		Blockers: r.Blockers, Warnings: r.Warnings, EvaluatedAt: r.EvaluatedAt.UTC(), SnapshotID: r.SnapshotID,
		Outdated: s.outdated(r.BundlesKey, r.SnapshotID, c.LatestSnapshotID, r.EvaluatedAt)}
}

// outdated says whether a stored evaluation is not the cluster's judgement now (current):
// another bundle set made it, a newer snapshot was not evaluated at its target, or it was
// made on an earlier UTC day, which the pass after midnight judges again.
func (s *Server) outdated(bundlesKey string, snapshot, latest int64, evaluatedAt time.Time) bool {
	return !current{latest, s.policy().key, s.now()}.holds(snapshot, bundlesKey, evaluatedAt)
}

func (s *Server) clusterSummary(c store.Cluster, cells []store.FleetRow) api.Cluster {
	out := api.Cluster{ID: c.ID, Name: c.Name, ClusterUID: c.UID, FirstSeen: c.FirstSeen.UTC(),
		LastSeen: c.LastSeen.UTC(), ServerVersion: c.ServerVersion, Stale: s.stale(c),
		LatestSnapshotID: c.LatestSnapshotID, DefaultTarget: inventory.DefaultTarget(c.ServerVersion), Bundles: s.agentBundles(c)}
	for _, r := range cells {
		if r.Target == out.DefaultTarget {
			out.Latest = s.summary(c, r)
		}
	}
	return out
}

// stale answers whether the cluster has not pushed (duplicates count) for --stale-after.
func (s *Server) stale(c store.Cluster) bool { return s.now().Sub(c.LastSeen) > s.cfg.StaleAfter }

func (s *Server) listClusters(w http.ResponseWriter, r *http.Request, sc scope) error {
	v, err := s.loadFleet(r.Context(), sc)
	if err != nil {
		return err
	}
	out := make([]api.Cluster, 0, len(v.clusters))
	for _, c := range v.clusters {
		out = append(out, s.clusterSummary(c, v.cells[c.ID]))
	}
	writeJSON(w, http.StatusOK, api.ClusterList{Clusters: out})
	return nil
}

var errClusterNotFound = fail(http.StatusNotFound, "cluster not found")

// cluster answers the cluster {id} names and its cells, or the same 404 for an unknown id
// and one the reader's scope does not reach.
func (s *Server) cluster(r *http.Request, sc scope) (store.Cluster, []store.FleetRow, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id < 1 {
		return store.Cluster{}, nil, fail(http.StatusBadRequest, "cluster id must be a positive integer")
	}
	return s.clusterByID(r, id, sc)
}

// clusterByID answers the cluster id names when the scope may read it.
func (s *Server) clusterByID(r *http.Request, id int64, sc scope) (store.Cluster, []store.FleetRow, error) {
	// The cells first: an unknown id and one out of a team's scope take the same path.
	cells, err := s.store.ClusterCells(r.Context(), id)
	if err != nil {
		return store.Cluster{}, nil, err
	}
	c, err := s.store.Cluster(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) {
		return store.Cluster{}, nil, errClusterNotFound
	} else if err != nil {
		return store.Cluster{}, nil, err
	}
	if !inScope(sc, c, cells) {
		return store.Cluster{}, nil, errClusterNotFound
	}
	return c, cells, nil
}

func (s *Server) getCluster(w http.ResponseWriter, r *http.Request, sc scope) error {
	c, cells, err := s.cluster(r, sc)
	if err != nil {
		return err
	}
	if cells, err = s.cellsFor(r.Context(), c, cells, sc); err != nil {
		return err
	}
	d := api.ClusterDetail{Cluster: s.clusterSummary(c, cells), Evaluations: []*api.Evaluation{}}
	d.Targets = s.planTargets(c.ServerVersion)
	if d.Targets == nil {
		d.Targets = []string{}
	}
	for _, row := range sortedCells(cells) {
		d.Evaluations = append(d.Evaluations, s.summary(c, row))
	}
	if d.Snapshot, err = s.snapshotView(r.Context(), c, sc); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, d)
	return nil
}

// snapshotView is the latest snapshot's summary. A team-scoped reader is told which
// capabilities were missing or partial, not why: a reason may name other teams' objects.
func (s *Server) snapshotView(ctx context.Context, c store.Cluster, sc scope) (*api.Snapshot, error) {
	if c.LatestSnapshotID == 0 {
		return nil, nil
	}
	if err := acquire(ctx, s.reports, 1, whatIfWait); err != nil {
		return nil, err
	}
	defer s.reports.Release(1)
	snap, err := s.store.LatestSnapshot(ctx, c.ID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	doc, err := s.decodeInventory(snap)
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
