package server

import (
	"fmt"
	"net/http"

	"github.com/upgradescope/upgradescope/fleet/api"
	"github.com/upgradescope/upgradescope/fleet/server/store"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/report"
)

// Where a cluster stands at a target: exactly one of these, so the fleet's counts add up
// to the clusters the reader sees (issue 34: clusters already there used to go uncounted).
const (
	standReady        = api.StandingReady
	standBlocked      = api.StandingBlocked
	standUnknown      = api.StandingUnknown
	standAlreadyThere = api.StandingAlreadyThere
	standNotEvaluated = api.StandingNotEvaluated
)

// standing is one cluster at one target: where it stands and, when evaluated, its cell.
type standing struct {
	cluster store.Cluster
	// target is the minor judged: the one asked for, or the cluster's next minor ("" when
	// its version is unknown).
	target string
	status string
	cell   *store.FleetRow
}

// standAt is where cluster c stands at target ("" is its next minor) given its cells. A
// verdict the server does not know counts as unknown: never as ready.
func standAt(c store.Cluster, cells []store.FleetRow, target string) standing {
	s := standing{cluster: c, target: target, status: standNotEvaluated}
	if s.target == "" {
		if s.target = inventory.DefaultTarget(c.ServerVersion); s.target == "" {
			return s
		}
	}
	if !applicable(c, s.target) {
		s.status = standAlreadyThere
		return s
	}
	for i := range cells {
		if cells[i].Target != s.target {
			continue
		}
		s.cell = &cells[i]
		switch cells[i].Verdict {
		case report.VerdictReady, report.VerdictBlocked:
			s.status = cells[i].Verdict
		default:
			s.status = standUnknown
		}
	}
	return s
}

// standings are where each of v's clusters stands at target, in v's order.
func (v fleetView) standings(target string) []standing {
	out := make([]standing, len(v.clusters))
	for i, c := range v.clusters {
		out[i] = standAt(c, v.cells[c.ID], target)
	}
	return out
}

// countStandings counts standings into the five buckets.
func countStandings(target string, ss []standing) api.FleetCounts {
	n := api.FleetCounts{Target: target, Clusters: len(ss)}
	for _, s := range ss {
		switch s.status {
		case standReady:
			n.Ready++
		case standBlocked:
			n.Blocked++
		case standUnknown:
			n.Unknown++
		case standAlreadyThere:
			n.AlreadyThere++
		default:
			n.NotEvaluated++
		}
	}
	return n
}

// targetQuery is ?target= as a minor, "" (each cluster's next minor) when absent; the
// error names the parameter.
func targetQuery(r *http.Request) (string, error) {
	raw := r.URL.Query().Get("target")
	if raw == "" {
		return "", nil
	}
	minor, err := inventory.ParseTarget(raw)
	if err != nil || minor != raw {
		return "", fail(http.StatusUnprocessableEntity, fmt.Sprintf("target %q: write a minor as 1.NN, or leave it out for each cluster's next minor", raw))
	}
	return minor, nil
}
