package server

import (
	"fmt"
	"maps"
	"net/http"
	"regexp"
	"slices"
	"strings"

	"github.com/upgradescope/upgradescope/fleet/api"
	"github.com/upgradescope/upgradescope/fleet/server/store"
	"github.com/upgradescope/upgradescope/fleet/server/web"
	"github.com/upgradescope/upgradescope/inventory"
)

// The dashboard (docs/dashboard.md): a shell per page that anyone may load, and HTML
// fragments of the read side behind the read API's credentials. The fragments are built
// from the same reads as the JSON API (loadFleet, fleetRow, serve, rollTeams), so a page
// and the API never disagree about a verdict, staleness or a bundle behind.

// fragmentCache keeps a fragment, which holds what a credential may read, out of every cache.
const fragmentCache = "private, no-store"

// dashboardRoutes adds the pages, assets and fragments to mux.
func (s *Server) dashboardRoutes(handle func(pattern, route string, h http.HandlerFunc)) {
	for _, p := range []string{"GET /{$}", "GET /clusters/{id}", "GET /teams", "GET /knowledge"} {
		handle(p, "dashboard", s.page)
	}
	handle("GET /assets/{file}", "dashboard-assets", func(w http.ResponseWriter, r *http.Request) {
		web.ServeAsset(w, r.PathValue("file"))
	})
	handle("GET /ui/fleet", "ui-fleet", s.fragment(s.uiFleet))
	handle("GET /ui/clusters/{id}", "ui-cluster", s.fragment(s.uiCluster))
	handle("GET /ui/teams", "ui-teams", s.fragment(s.uiTeams))
	handle("GET /ui/knowledge", "ui-knowledge", s.fragment(s.uiKnowledge))
}

// page answers a dashboard page: the shell, the same for every URL and reader.
func (s *Server) page(w http.ResponseWriter, _ *http.Request) {
	web.WriteHTML(w, "no-cache", s.shell)
}

// fragment is a read route answering HTML: the security headers go on before the
// credential is checked, so a 401 or 403 carries them too.
func (s *Server) fragment(h func(r *http.Request, sc scope) ([]byte, error)) http.HandlerFunc {
	inner := s.read(func(w http.ResponseWriter, r *http.Request, sc scope) error {
		body, err := h(r, sc)
		if err != nil {
			return err
		}
		web.WriteHTML(w, fragmentCache, body)
		return nil
	})
	return func(w http.ResponseWriter, r *http.Request) {
		web.SecurityHeaders(w.Header())
		w.Header().Set("Cache-Control", fragmentCache)
		w.Header().Add("Vary", "Authorization")
		inner(w, r)
	}
}

// frame is what every fragment carries: the prefix, and the teams of a scoped reader.
func (s *Server) frame(sc scope) web.Frame {
	f := web.Frame{Prefix: s.cfg.PathPrefix}
	if !sc.fleet {
		f.Teams = append([]string{}, sc.teams...)
	}
	return f
}

func badQuery(err error) error { return fail(http.StatusUnprocessableEntity, err.Error()) }

// uiFleet is the fleet matrix of every cluster the reader sees, as GET /api/v1/fleet
// builds it; the fragment filters, sorts and pages it.
func (s *Server) uiFleet(r *http.Request, sc scope) ([]byte, error) {
	q, err := web.ParseFleetQuery(r.URL.Query())
	if err != nil {
		return nil, badQuery(err)
	}
	v, err := s.loadFleet(r.Context(), sc)
	if err != nil {
		return nil, err
	}
	targets := s.defaultColumns(v.clusters)
	parsed := parseMinors(targets)
	rows := make([]web.FleetRow, 0, len(v.clusters))
	for _, c := range v.clusters {
		rows = append(rows, dashRow(s.fleetRow(c, v.cells[c.ID], targets, parsed), targets))
	}
	f := &web.Fleet{Frame: s.frame(sc), Targets: targets, Rows: rows, Query: q}
	if err := f.CheckTarget(); err != nil {
		return nil, badQuery(err)
	}
	return web.RenderFleet(f), nil
}

// dashRow is an API fleet row as the page shows it.
func dashRow(row api.FleetRow, targets []string) web.FleetRow {
	out := web.FleetRow{ID: row.ClusterID, Name: row.Name, ServerVersion: row.ServerVersion, LastSeen: row.LastSeen,
		Stale: row.Stale, Next: inventory.DefaultTarget(row.ServerVersion), Cells: make([]web.FleetCell, len(targets))}
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

// uiCluster is one cluster at ?target= (its next minor by default): the served report (a
// team-scoped reader's share), its history and bundles.
func (s *Server) uiCluster(r *http.Request, sc scope) ([]byte, error) {
	q, err := web.ParseClusterQuery(r.URL.Query())
	if err != nil {
		return nil, badQuery(err)
	}
	c, cells, err := s.cluster(r, sc)
	if err != nil {
		return nil, err
	}
	if cells, err = s.cellsFor(r.Context(), c, cells, sc); err != nil {
		return nil, err
	}
	view := &web.Cluster{Frame: s.frame(sc), ID: c.ID, Name: c.Name, ServerVersion: c.ServerVersion,
		LastSeen: c.LastSeen, Stale: s.stale(c), Query: q}
	// Without ?target= and a known version there is no default: the page shows the cluster
	// and its planned targets, not an error.
	if view.Target, err = targetParam(r, c); err != nil && q.Target != "" {
		return nil, err
	}
	view.Query.Target = view.Target
	view.Targets = s.clusterTargets(c, cells, view.Target)
	if err := s.fillReport(r, sc, c, view); err != nil {
		return nil, err
	}
	if view.Target != "" {
		points, err := s.history(r.Context(), c, sc, view.Target, defaultHistory)
		if err != nil {
			return nil, err
		}
		for _, p := range slices.Backward(points) { // the store answers newest first
			view.History = append(view.History, web.HistoryPoint{At: p.EvaluatedAt, Score: p.Score, Verdict: p.Verdict})
		}
	}
	for _, b := range sortedBundles(s.policy().bundles) {
		view.ServerBundles = append(view.ServerBundles, web.Bundle{Name: b.Name, Revision: b.Revision})
	}
	for _, b := range s.agentBundles(c) {
		view.AgentBundles = append(view.AgentBundles, web.Bundle{Name: b.Name, Revision: b.Revision, Behind: b.Behind})
	}
	return web.RenderCluster(view), nil
}

// fillReport adds the served report at the view's target, when there is one to serve: a
// target and a snapshot to judge.
func (s *Server) fillReport(r *http.Request, sc scope, c store.Cluster, view *web.Cluster) error {
	if view.Target == "" || c.LatestSnapshotID == 0 {
		return nil
	}
	sv, err := s.serve(r, sc)
	if err != nil {
		return err
	}
	tr := sv.result()
	view.Result, view.Source, view.EvaluatedAt, view.Outdated = tr, sv.source, sv.evaluatedAt, sv.outdated
	view.ReportBundles = sv.report.Bundles
	return nil
}

// clusterTargets are the cluster's planned targets (and the one asked for) with their cells.
func (s *Server) clusterTargets(c store.Cluster, cells []store.FleetRow, asked string) []web.FleetCell {
	targets := s.planTargets(c.ServerVersion)
	if asked != "" && !slices.Contains(targets, asked) {
		targets = inventory.SortMinors(append(targets, asked))
	}
	out := make([]web.FleetCell, 0, len(targets))
	for _, t := range targets {
		cell := web.FleetCell{Target: t}
		for _, row := range cells {
			if row.Target == t {
				sum := s.summary(c, row)
				cell.Verdict, cell.Score, cell.Outdated = sum.Verdict, sum.Score, sum.Outdated
			}
		}
		out = append(out, cell)
	}
	return out
}

// uiTeams is each team's worst verdict across the clusters the reader sees, at ?target=
// (each cluster's next minor when absent).
func (s *Server) uiTeams(r *http.Request, sc scope) ([]byte, error) {
	target := r.URL.Query().Get("target")
	if target != "" {
		minor, err := inventory.ParseTarget(target)
		if err != nil || minor != target {
			return nil, fail(http.StatusUnprocessableEntity, fmt.Sprintf("target %q: write a minor as 1.NN", target))
		}
	}
	v, err := s.loadFleet(r.Context(), sc)
	if err != nil {
		return nil, err
	}
	rolled, missing := rollTeams(v, sc, target)
	ids := map[string]int64{}
	for _, c := range v.clusters {
		ids[c.Name] = c.ID
	}
	t := &web.Teams{Frame: s.frame(sc), Target: target, Targets: s.defaultColumns(v.clusters)}
	for _, name := range slices.Sorted(maps.Keys(rolled)) {
		roll := rolled[name]
		row := web.TeamRow{Team: name, Verdict: roll.Verdict, WorstScore: roll.WorstScore, Blockers: roll.Blockers}
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

// uiKnowledge is the active bundle set's knowledge base: the data the engine was built
// from, not an evaluation.
func (s *Server) uiKnowledge(r *http.Request, sc scope) ([]byte, error) {
	pol := s.policy()
	k := &web.Knowledge{Frame: s.frame(sc), Q: web.ParseKnowledgeQuery(r.URL.Query()), KB: pol.eng.KB()}
	for _, b := range sortedBundles(pol.bundles) {
		k.Bundles = append(k.Bundles, web.Bundle{Name: b.Name, Revision: b.Revision})
	}
	return web.RenderKnowledge(k), nil
}

// prefixSegment is one segment a path prefix may have.
var prefixSegment = regexp.MustCompile(`^[A-Za-z0-9._~-]+$`)

// NormalPathPrefix checks a path prefix ("/upgradescope") and writes it without a
// trailing slash; "" and "/" are no prefix.
func NormalPathPrefix(p string) (string, error) {
	p = strings.TrimSuffix(p, "/")
	if p == "" {
		return "", nil
	}
	if !strings.HasPrefix(p, "/") {
		return "", fmt.Errorf("path prefix %q: start it with /, as /upgradescope", p)
	}
	for _, seg := range strings.Split(p[1:], "/") {
		if !prefixSegment.MatchString(seg) || seg == "." || seg == ".." {
			return "", fmt.Errorf("path prefix %q: each segment may hold letters, digits and . _ ~ - only", p)
		}
	}
	return p, nil
}

// underPrefix serves h under the prefix only: the prefix itself redirects to prefix/ with
// its query (a shared link keeps its filters), and every path outside it is 404, so
// nothing answers where an Ingress does not route.
func underPrefix(prefix string, h http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.Handle(prefix+"/", http.StripPrefix(prefix, h))
	mux.HandleFunc(prefix, func(w http.ResponseWriter, r *http.Request) {
		to := prefix + "/"
		if r.URL.RawQuery != "" {
			to += "?" + r.URL.RawQuery
		}
		web.SecurityHeaders(w.Header())
		http.Redirect(w, r, to, http.StatusMovedPermanently)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		web.SecurityHeaders(w.Header())
		writeError(w, http.StatusNotFound, "not found: this server answers under "+prefix+"/")
	})
	return mux
}
