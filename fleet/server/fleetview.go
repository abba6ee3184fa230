package server

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/upgradescope/upgradescope/fleet/api"
	"github.com/upgradescope/upgradescope/fleet/server/admission"
	"github.com/upgradescope/upgradescope/fleet/server/store"
	"github.com/upgradescope/upgradescope/inventory"
)

// fleetReads is the read side every read feature shares (the JSON API, the dashboard, the
// metrics, the re-evaluation's list of work): the clusters and cells a scope sees, and how
// the API shows them. A team-scoped reader's cells are its shares' (shareJudge).
type fleetReads struct {
	store      store.Store
	policy     *activePolicy
	shares     *shareJudge
	plan       targetPlan
	now        func() time.Time
	staleAfter time.Duration
	// cells are the fleet's cells by cluster as of cellsVersion (fleetCells); read-only
	// once stored, shared by concurrent reads.
	cellsMu      sync.Mutex
	cells        map[int64][]store.FleetRow
	cellsVersion string
	// sums are the summaries of the reports fleet cells point at (summaries), decoded
	// within admit's turns by snaps; log tells of a report that cannot be read.
	sums  summaryCache
	admit *admission.Turns
	snaps *snapshots
	log   *slog.Logger
}

// fleetView is one read of the store: every cluster and its fleet cells, with what the
// reader's scope lets it see: for a team-scoped reader its clusters and their shares' cells.
type fleetView struct {
	clusters []store.Cluster
	cells    map[int64][]store.FleetRow
	// version is the store's FleetVersion the fleet's cells were read at.
	version string
	// sums are the fleet's cells' summaries by evaluation id (withSummaries); shared, a
	// team-scoped reader's, by cluster id and target: its shares' cells have no id.
	sums   map[int64]*evalSummary
	shared map[int64]map[string]*evalSummary
}

// summary is the report summary of one of v's cells, nil when there is none.
func (v fleetView) summary(cell store.FleetRow) *evalSummary {
	if v.shared != nil {
		return v.shared[cell.ClusterID][cell.Target]
	}
	return v.sums[cell.EvaluationID]
}

// withSummaries adds the summaries of v's cells (a team-scoped view has them already).
func (fr *fleetReads) withSummaries(ctx context.Context, v *fleetView) error {
	if v.shared != nil {
		return nil
	}
	// v's cells are the fleet's at v.version (loadFleet): their summaries are what this
	// read shows, without asking the store for its version a second time.
	var err error
	v.sums, err = fr.summaries(ctx, v.cells, v.version)
	return err
}

func (fr *fleetReads) loadFleet(ctx context.Context, sc scope) (fleetView, error) {
	clusters, err := fr.store.Clusters(ctx)
	if err != nil {
		return fleetView{}, err
	}
	cells, version, err := fr.fleetCellsAt(ctx)
	if err != nil {
		return fleetView{}, err
	}
	v := fleetView{cells: cells, version: version}
	for _, c := range clusters {
		if inScope(sc, c, v.cells[c.ID]) {
			v.clusters = append(v.clusters, c)
		}
	}
	if sc.fleet {
		return v, nil
	}
	// A team-scoped reader sees its shares' cells, never the stored ones (which fr.cells
	// keeps for every reader: it is not written to).
	v.cells = make(map[int64][]store.FleetRow, len(v.clusters))
	v.shared = make(map[int64]map[string]*evalSummary, len(v.clusters))
	for _, c := range v.clusters {
		judged, err := fr.shares.judged(ctx, c, sc, nil)
		if err != nil {
			return fleetView{}, err
		}
		v.cells[c.ID], v.shared[c.ID] = judged.rows, judged.sums
	}
	return v, nil
}

// fleetCells answers every cluster's cells by cluster id. The rows are kept while the
// store's fleet version is unchanged: a cheap query in place of reading every cell, checked
// on every call, so each replica serves what the database holds.
func (fr *fleetReads) fleetCells(ctx context.Context) (map[int64][]store.FleetRow, error) {
	cells, _, err := fr.fleetCellsAt(ctx)
	return cells, err
}

// fleetCellsAt is fleetCells with the fleet version the cells were read at.
func (fr *fleetReads) fleetCellsAt(ctx context.Context) (map[int64][]store.FleetRow, string, error) {
	version, err := fr.store.FleetVersion(ctx)
	if err != nil {
		return nil, "", err
	}
	fr.cellsMu.Lock()
	defer fr.cellsMu.Unlock()
	if fr.cellsVersion == version && fr.cells != nil {
		return fr.cells, version, nil
	}
	rows, err := fr.store.Fleet(ctx)
	if err != nil {
		return nil, "", err
	}
	cells := map[int64][]store.FleetRow{}
	for _, r := range rows {
		cells[r.ClusterID] = append(cells[r.ClusterID], r)
	}
	fr.cells, fr.cellsVersion = cells, version
	return cells, version, nil
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

var errClusterNotFound = fail(http.StatusNotFound, "cluster not found")

// cluster answers the cluster {id} names and its cells, or the same 404 for an unknown id
// and one the reader's scope does not reach.
func (fr *fleetReads) cluster(r *http.Request, sc scope) (store.Cluster, []store.FleetRow, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id < 1 {
		return store.Cluster{}, nil, fail(http.StatusBadRequest, "cluster id must be a positive integer")
	}
	return fr.clusterByID(r, id, sc)
}

// clusterByID answers the cluster id names when the scope may read it.
func (fr *fleetReads) clusterByID(r *http.Request, id int64, sc scope) (store.Cluster, []store.FleetRow, error) {
	// The cells first: an unknown id and one out of a team's scope take the same path.
	cells, err := fr.store.ClusterCells(r.Context(), id)
	if err != nil {
		return store.Cluster{}, nil, err
	}
	c, err := fr.store.Cluster(r.Context(), id)
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

// cellsFor are the cells a reader sees of c: the stored ones for the fleet, the share's
// otherwise.
func (fr *fleetReads) cellsFor(ctx context.Context, c store.Cluster, stored []store.FleetRow, sc scope) ([]store.FleetRow, error) {
	if sc.fleet {
		return stored, nil
	}
	return fr.shares.cells(ctx, c, sc, nil)
}

// history is the reader's history of c at target, newest first as the store answers it.
func (fr *fleetReads) history(ctx context.Context, c store.Cluster, sc scope, target string, limit int) ([]store.HistoryPoint, error) {
	if !sc.fleet {
		return fr.shares.history(ctx, c, sc, target)
	}
	return fr.store.History(ctx, c.ID, target, limit)
}

// summary is evaluation row r of cluster c as the API shows it, outdated as fr.outdated says.
func (fr *fleetReads) summary(c store.Cluster, r store.FleetRow) *api.Evaluation {
	return &api.Evaluation{Target: r.Target, Verdict: r.Verdict, Score: r.Score, Ready: r.Verdict == "ready",
		Blockers: r.Blockers, Warnings: r.Warnings, EvaluatedAt: r.EvaluatedAt.UTC(), SnapshotID: r.SnapshotID,
		Outdated: fr.outdated(r.BundlesKey, r.SnapshotID, c.LatestSnapshotID, r.EvaluatedAt)}
}

// outdated says whether a stored evaluation is not the cluster's judgement now (current):
// another bundle set made it, a newer snapshot was not evaluated at its target, or it was
// made on an earlier UTC day, which the pass after midnight judges again.
func (fr *fleetReads) outdated(bundlesKey string, snapshot, latest int64, evaluatedAt time.Time) bool {
	return !current{latest, fr.policy.load().key, fr.now()}.holds(snapshot, bundlesKey, evaluatedAt)
}

func (fr *fleetReads) clusterSummary(c store.Cluster, cells []store.FleetRow) api.Cluster {
	out := api.Cluster{ID: c.ID, Name: c.Name, ClusterUID: c.UID, FirstSeen: c.FirstSeen.UTC(),
		LastSeen: c.LastSeen.UTC(), ServerVersion: c.ServerVersion, Stale: fr.stale(c),
		LatestSnapshotID: c.LatestSnapshotID, DefaultTarget: inventory.DefaultTarget(c.ServerVersion), Bundles: fr.agentBundles(c)}
	for _, r := range cells {
		if r.Target == out.DefaultTarget {
			out.Latest = fr.summary(c, r)
		}
	}
	return out
}

// stale answers whether the cluster has not pushed (duplicates count) for --stale-after.
func (fr *fleetReads) stale(c store.Cluster) bool { return fr.now().Sub(c.LastSeen) > fr.staleAfter }

// agentBundles shows a cluster's bundles beside the server's own.
func (fr *fleetReads) agentBundles(c store.Cluster) []api.AgentBundle {
	out := []api.AgentBundle{}
	for _, b := range c.AgentBundles {
		out = append(out, api.AgentBundle{Name: b.Name, Revision: b.Revision, Behind: fr.behind(b)})
	}
	return out
}

// behind answers whether the server evaluates with another revision of b's bundle.
func (fr *fleetReads) behind(b store.Bundle) bool {
	for _, own := range fr.policy.load().bundles {
		if own.Name == b.Name {
			return own.Revision != b.Revision
		}
	}
	return false
}

// fleetRow is cluster c's row at targets (parsed: the same minors, parsed once a request).
func (fr *fleetReads) fleetRow(c store.Cluster, cells []store.FleetRow, targets []string, parsed []inventory.Version) api.FleetRow {
	row := api.FleetRow{ClusterID: c.ID, Name: c.Name, LastSeen: c.LastSeen.UTC(), Stale: fr.stale(c),
		ServerVersion: c.ServerVersion, Cells: make(map[string]*api.Evaluation, len(targets)), NotApplicable: []string{},
		Bundles: fr.agentBundles(c)}
	current, vErr := inventory.ParseVersion(c.ServerVersion)
	for i, t := range targets {
		row.Cells[t] = nil
		if vErr == nil && !parsed[i].LaterMinor(current) {
			row.NotApplicable = append(row.NotApplicable, t)
			continue
		}
		for _, cell := range cells {
			if cell.Target == t {
				row.Cells[t] = fr.summary(c, cell)
			}
		}
	}
	return row
}
