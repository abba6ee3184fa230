package server

import (
	"maps"
	"net/http"
	"slices"

	"github.com/upgradescope/upgradescope/fleet/api"
	"github.com/upgradescope/upgradescope/fleet/server/store"
	"github.com/upgradescope/upgradescope/fleet/server/web"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/report"
)

// The dashboard (docs/dashboard.md): a shell per page that anyone may load, and HTML
// fragments of the read side behind the read API's credentials. The fragments are built
// from the same reads as the JSON API (loadFleet, fleetRow, serve, rollTeams), so a page
// and the API never disagree about a verdict, staleness or a bundle behind.

// fragmentCache keeps a fragment, which holds what a credential may read, out of every cache.
const fragmentCache = "private, no-store"

// dashboardHandler is the dashboard's pages and fragments.
type dashboardHandler struct {
	reads  *fleetReads
	served *servedReports
	policy *activePolicy
	plan   targetPlan
	// shell is the dashboard's page, the same for every URL and reader.
	shell  []byte
	prefix string
}

// page answers a dashboard page: the shell, the same for every URL and reader.
func (h *dashboardHandler) page(w http.ResponseWriter, _ *http.Request) {
	web.WriteHTML(w, "no-cache", h.shell)
}

// fragmentFunc is a fragment: the HTML of a read the scope may see.
type fragmentFunc func(r *http.Request, sc scope) ([]byte, error)

// html adapts a fragment to a read route.
func (f fragmentFunc) html(w http.ResponseWriter, r *http.Request, sc scope) error {
	body, err := f(r, sc)
	if err != nil {
		return err
	}
	web.WriteHTML(w, fragmentCache, body)
	return nil
}

// fragmentHeaders puts the security and cache headers of a fragment on before the
// credential is checked, so a 401 or 403 carries them too.
func fragmentHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		web.SecurityHeaders(w.Header())
		w.Header().Set("Cache-Control", fragmentCache)
		w.Header().Add("Vary", "Authorization")
		next.ServeHTTP(w, r)
	})
}

// frame is what every fragment carries: the prefix, and the teams of a scoped reader.
func (h *dashboardHandler) frame(sc scope) web.Frame {
	f := web.Frame{Prefix: h.prefix}
	if !sc.fleet {
		f.Teams = append([]string{}, sc.teams...)
	}
	return f
}

func badQuery(err error) error { return fail(http.StatusUnprocessableEntity, err.Error()) }

// fleet is every cluster the reader sees where it stands at ?target= (standAt, as
// GET /api/v1/fleet counts it), with its top blocker and owners from the summaries of the
// stored reports, and its cells at the fleet's targets for the matrix view; the fragment
// filters, sorts and pages it.
func (h *dashboardHandler) fleet(r *http.Request, sc scope) ([]byte, error) {
	q, err := web.ParseFleetQuery(r.URL.Query())
	if err != nil {
		return nil, badQuery(err)
	}
	// Any minor is a target here, as in GET /api/v1/fleet and on the findings and teams
	// pages: one the fleet has no column for reads as not evaluated (web.TargetMenu).
	if q.Target, err = targetQuery(r); err != nil {
		return nil, err
	}
	v, err := h.reads.loadFleet(r.Context(), sc)
	if err != nil {
		return nil, err
	}
	targets := h.plan.columns(v.clusters)
	f := &web.Fleet{Frame: h.frame(sc), Targets: targets, Query: q}
	if err := h.reads.withSummaries(r.Context(), &v); err != nil {
		return nil, err
	}
	parsed := parseMinors(targets)
	f.Rows = make([]web.FleetRow, 0, len(v.clusters))
	for _, c := range v.clusters {
		row := dashRow(h.reads.fleetRow(c, v.cells[c.ID], targets, parsed), targets)
		row.At = h.reads.dashStanding(v, standAt(c, v.cells[c.ID], q.Target), sc)
		f.Rows = append(f.Rows, row)
	}
	return web.RenderFleet(f), nil
}

// standingOf is where s puts its cluster, as GET /api/v1/fleet's rows and the fleet page
// say it: its blockers, the top one and the teams that own them (with none, the teams with
// namespaces in the cluster), and for an unknown verdict its cause. v must hold its
// summaries (withSummaries).
func (fr *fleetReads) standingOf(v fleetView, s standing, sc scope) api.Standing {
	out := api.Standing{Target: s.target, Status: s.status}
	if s.cell == nil {
		return out
	}
	out.Blockers = s.cell.Blockers
	es := v.summary(*s.cell)
	if top := es.top(); top != nil {
		out.TopBlocker = &api.FindingRef{Key: top.Key, Title: top.Title}
	}
	if es != nil && s.status == standUnknown {
		out.Cause = es.cause
	}
	if out.Blockers > 0 {
		out.Teams = ownerOrder(visibleTeams(es.blockerTeams(), sc))
		return out
	}
	// No blocker: the teams with namespaces in the cluster. "(unattributed)" is the
	// report's row for what no team owns, not a namespace's team.
	for t := range s.cell.Teams {
		if t != report.Unattributed && sc.sees(t) {
			out.Teams = append(out.Teams, t)
		}
	}
	out.Teams = ownerOrder(out.Teams)
	return out
}

// dashStanding is a standing as the fleet page shows it: standingOf with the verdict's
// score.
func (fr *fleetReads) dashStanding(v fleetView, s standing, sc scope) web.Standing {
	a := fr.standingOf(v, s, sc)
	out := web.Standing{Target: a.Target, Status: a.Status, Blockers: a.Blockers, Cause: a.Cause, Teams: a.Teams}
	if out.Status == standNotEvaluated {
		out.Status = web.StatusNone
	}
	if a.TopBlocker != nil {
		out.Top = web.TopFinding{Key: a.TopBlocker.Key, Title: a.TopBlocker.Title}
	}
	if s.cell != nil {
		sum := fr.summary(s.cluster, *s.cell)
		out.Score, out.Outdated = sum.Score, sum.Outdated
	}
	return out
}

// dashRow is an API fleet row as the page's matrix shows it.
func dashRow(row api.FleetRow, targets []string) web.FleetRow {
	out := web.FleetRow{ID: row.ClusterID, Name: row.Name, ServerVersion: row.ServerVersion, LastSeen: row.LastSeen,
		Stale: row.Stale, Cells: make([]web.FleetCell, len(targets))}
	for i, t := range targets {
		cell := web.FleetCell{Target: t}
		if sum := row.Cells[t]; sum != nil {
			cell.Verdict, cell.Score, cell.Outdated = sum.Verdict, sum.Score, sum.Outdated
		} else if slices.Contains(row.NotApplicable, t) {
			cell.Verdict = "n/a"
		}
		out.Cells[i] = cell
	}
	for _, b := range row.Bundles {
		if b.Behind {
			out.Behind = append(out.Behind, b.Name+"@"+b.Revision)
		}
	}
	return out
}

// cluster is one cluster at ?target= (its next minor by default): the served report (a
// team-scoped reader's share), its history and bundles.
func (h *dashboardHandler) cluster(r *http.Request, sc scope) ([]byte, error) {
	q, err := web.ParseClusterQuery(r.URL.Query())
	if err != nil {
		return nil, badQuery(err)
	}
	c, cells, err := h.reads.cluster(r, sc)
	if err != nil {
		return nil, err
	}
	if cells, err = h.reads.cellsFor(r.Context(), c, cells, sc); err != nil {
		return nil, err
	}
	view := &web.Cluster{Frame: h.frame(sc), ID: c.ID, Name: c.Name, ServerVersion: c.ServerVersion,
		LastSeen: c.LastSeen, Stale: h.reads.stale(c), Query: q}
	// Without ?target= and a known version there is no default: the page shows the cluster
	// and its planned targets, not an error.
	if view.Target, err = targetParam(r, c); err != nil && q.Target != "" {
		return nil, err
	}
	view.Query.Target = view.Target
	view.Targets = h.clusterTargets(c, cells, view.Target)
	if err := h.fillReport(r, sc, c, view); err != nil {
		return nil, err
	}
	if err := h.fillExports(r.Context(), c, sc, view); err != nil {
		return nil, err
	}
	if err := h.fillAudit(r.Context(), c, sc, view); err != nil {
		return nil, err
	}
	if view.Target != "" {
		points, err := h.reads.history(r.Context(), c, sc, view.Target, defaultHistory)
		if err != nil {
			return nil, err
		}
		for _, p := range slices.Backward(points) { // the store answers newest first
			view.History = append(view.History, web.HistoryPoint{At: p.EvaluatedAt, Score: p.Score, Verdict: p.Verdict})
		}
	}
	for _, b := range sortedBundles(h.policy.load().bundles) {
		view.ServerBundles = append(view.ServerBundles, web.Bundle{Name: b.Name, Revision: b.Revision})
	}
	for _, b := range h.reads.agentBundles(c) {
		view.AgentBundles = append(view.AgentBundles, web.Bundle{Name: b.Name, Revision: b.Revision, Behind: b.Behind})
	}
	return web.RenderCluster(view), nil
}

// fillReport adds the served report at the view's target, when there is one to serve: a
// target and a snapshot to judge.
func (h *dashboardHandler) fillReport(r *http.Request, sc scope, c store.Cluster, view *web.Cluster) error {
	if view.Target == "" || c.LatestSnapshotID == 0 {
		return nil
	}
	sv, err := h.served.serve(r, sc)
	if err != nil {
		return err
	}
	tr := sv.result()
	view.Result, view.Source, view.EvaluatedAt, view.Outdated = tr, sv.source, sv.evaluatedAt, sv.outdated
	view.ReportBundles = sv.report.Bundles
	view.TeamVerdicts, view.Unowned = clusterTeams(sv, sc)
	view.Collector, err = probeCollector(r.Context(), h.reads.store, c, sv.snapshotID, tr.NotAssessed)
	return err
}

// clusterTeams are the served target's teams as the cluster page lists them: each team the
// reader sees with a namespace or a finding there, as GET /api/v1/clusters/{id}/teams
// answers them, and the findings no team owns, which the page counts apart.
func clusterTeams(sv *served, sc scope) ([]web.ClusterTeam, web.Unowned) {
	cells, tr := sv.teams(sc), sv.result()
	out := make([]web.ClusterTeam, 0, len(cells))
	for _, name := range slices.Sorted(maps.Keys(cells)) {
		if name == report.Unattributed {
			continue
		}
		c := cells[name]
		out = append(out, web.ClusterTeam{Team: name, Verdict: c.Verdict, Score: c.Score, Blockers: c.Blockers,
			Warnings: c.Warnings, Infos: tr.Teams[name].Infos})
	}
	b, w := summarize(tr).unowned()
	return out, web.Unowned{Blockers: b, Warnings: w}
}

// clusterTargets are the cluster's planned targets (and the one asked for) with their cells.
func (h *dashboardHandler) clusterTargets(c store.Cluster, cells []store.FleetRow, asked string) []web.FleetCell {
	targets := h.plan.plan(c.ServerVersion)
	if asked != "" && !slices.Contains(targets, asked) {
		targets = inventory.SortMinors(append(targets, asked))
	}
	out := make([]web.FleetCell, 0, len(targets))
	for _, t := range targets {
		cell := web.FleetCell{Target: t}
		for _, row := range cells {
			if row.Target == t {
				sum := h.reads.summary(c, row)
				cell.Verdict, cell.Score, cell.Outdated = sum.Verdict, sum.Score, sum.Outdated
			}
		}
		out = append(out, cell)
	}
	return out
}

// teams is each team's worst verdict across the clusters the reader sees, at ?target=
// (each cluster's next minor when absent).
func (h *dashboardHandler) teams(r *http.Request, sc scope) ([]byte, error) {
	target, err := targetQuery(r)
	if err != nil {
		return nil, err
	}
	v, err := h.reads.loadFleet(r.Context(), sc)
	if err != nil {
		return nil, err
	}
	rolled, missing := rollTeams(v, sc, target)
	whys := explainTeams(v, sc, target)
	ids := map[string]int64{}
	for _, c := range v.clusters {
		ids[c.Name] = c.ID
	}
	t := &web.Teams{Frame: h.frame(sc), Target: target, Targets: web.TargetMenu(h.plan.columns(v.clusters), target)}
	for _, name := range slices.Sorted(maps.Keys(rolled)) {
		roll := rolled[name]
		row := web.TeamRow{Team: name, Verdict: roll.Verdict, WorstScore: roll.WorstScore, Blockers: roll.Blockers, Why: whys[name]}
		for _, c := range roll.Clusters {
			row.Clusters = append(row.Clusters, web.ClusterRef{ID: ids[c], Name: c})
		}
		t.Rows = append(t.Rows, row)
	}
	slices.SortStableFunc(t.Rows, func(a, b web.TeamRow) int { return verdictRank[b.Verdict] - verdictRank[a.Verdict] })
	for _, c := range missing {
		t.Missing = append(t.Missing, web.ClusterRef{ID: c.ID, Name: c.Name})
	}
	return web.RenderTeams(t), nil
}

// knowledge is the active bundle set's knowledge base: the data the engine was built
// from, not an evaluation.
func (h *dashboardHandler) knowledge(r *http.Request, sc scope) ([]byte, error) {
	pol := h.policy.load()
	k := &web.Knowledge{Frame: h.frame(sc), Q: web.ParseKnowledgeQuery(r.URL.Query()), KB: pol.eng.KB(),
		Now: h.reads.now()}
	for _, b := range sortedBundles(pol.bundles) {
		k.Bundles = append(k.Bundles, web.Bundle{Name: b.Name, Revision: b.Revision})
	}
	return web.RenderKnowledge(k), nil
}
