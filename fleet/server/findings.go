package server

import (
	"bytes"
	"cmp"
	"encoding/csv"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/upgradescope/upgradescope/fleet/api"
	"github.com/upgradescope/upgradescope/fleet/server/web"
	"github.com/upgradescope/upgradescope/output"
	"github.com/upgradescope/upgradescope/report"
)

// findingsQuery is what GET /api/v1/fleet/findings and the findings page filter by:
// target ("" each cluster's next minor), team (report.Unattributed: findings no team
// owns), category and severity ("" both blockers and warnings).
type findingsQuery struct {
	Target, Team, Category, Severity string
}

// parseFindingsQuery reads and checks the findings' parameters; the error names the one
// refused.
func parseFindingsQuery(r *http.Request) (findingsQuery, error) {
	q := r.URL.Query()
	target, err := targetQuery(r)
	if err != nil {
		return findingsQuery{}, err
	}
	fq := findingsQuery{Target: target, Team: q.Get("team"), Category: q.Get("category"), Severity: q.Get("severity")}
	if len(fq.Team) > 256 || len(fq.Category) > 256 {
		return fq, fail(http.StatusUnprocessableEntity, "team and category: at most 256 bytes each")
	}
	switch fq.Severity {
	case "", report.SeverityBlocker, report.SeverityWarning:
	case severityAll: // the findings page's word for both: its address works here too
		fq.Severity = ""
	default:
		return fq, fail(http.StatusUnprocessableEntity, fmt.Sprintf("severity %q: want blocker, warning or all (the same as leaving it out)", fq.Severity))
	}
	return fq, nil
}

// severityAll asks for blockers and warnings both, as an absent severity does.
const severityAll = web.SeverityAll

// fleetFindings gathers each finding key once across the standings' evaluated cells, with
// the clusters it affects, as q filters them: most clusters blocked first, then key; in a
// finding, the clusters it blocks first, then by name. Its title is its first cluster's by
// name without that cluster's count (fleetTitle). A team-scoped view's summaries are its
// shares', so it sees its teams' objects and what no team owns, never another team's.
func fleetFindings(v fleetView, ss []standing, q findingsQuery, sc scope) (findings []api.FleetFinding, unreadable []string) {
	byKey := map[string]*api.FleetFinding{}
	// By name: a finding's title is its first cluster's.
	ss = slices.SortedFunc(slices.Values(ss), func(a, b standing) int { return strings.Compare(a.cluster.Name, b.cluster.Name) })
	for _, s := range ss {
		if s.cell == nil {
			continue
		}
		sum := v.summary(*s.cell)
		if sum == nil {
			continue
		}
		if sum.unreadable {
			unreadable = append(unreadable, s.cluster.Name)
			continue
		}
		for _, f := range sum.findings {
			teams := visibleTeams(f.Teams, sc)
			if !q.keeps(f, teams) {
				continue
			}
			ff := byKey[f.Key]
			if ff == nil {
				ff = &api.FleetFinding{Key: f.Key, Title: fleetTitle(f.Title), Category: f.Category, Severity: f.Severity, Teams: []string{}}
				byKey[f.Key] = ff
			}
			addCluster(ff, s, f, teams)
		}
	}
	findings = make([]api.FleetFinding, 0, len(byKey))
	for _, ff := range byKey {
		slices.SortFunc(ff.Clusters, func(a, b api.FindingCluster) int {
			return cmp.Or(cmp.Compare(severityRank[a.Severity], severityRank[b.Severity]), strings.Compare(a.Name, b.Name))
		})
		ff.Teams = ownerOrder(ff.Teams)
		findings = append(findings, *ff)
	}
	slices.SortFunc(findings, func(a, b api.FleetFinding) int {
		return cmp.Or(cmp.Compare(b.ClustersBlocked, a.ClustersBlocked), strings.Compare(a.Key, b.Key))
	})
	slices.Sort(unreadable)
	return findings, unreadable
}

// addCluster adds cluster s's finding f (teams: those the reader sees) to ff.
func addCluster(ff *api.FleetFinding, s standing, f findingSum, teams []string) {
	c := s.cluster
	ff.Clusters = append(ff.Clusters, api.FindingCluster{ClusterID: c.ID, Name: c.Name, ServerVersion: c.ServerVersion,
		Target: s.target, Severity: f.Severity, Objects: f.Objects, Teams: ownerOrder(teams)})
	ff.Objects += f.Objects
	ff.Teams = append(ff.Teams, teams...)
	if f.Severity == report.SeverityBlocker {
		ff.ClustersBlocked++
	}
	if severityRank[f.Severity] < severityRank[ff.Severity] {
		ff.Severity = f.Severity
	}
}

// visibleTeams are the teams of teams the scope sees (and report.Unattributed: what no
// team owns is every share's), never nil.
func visibleTeams(teams []string, sc scope) []string {
	out := make([]string, 0, len(teams))
	for _, t := range teams {
		if t == report.Unattributed || sc.sees(t) {
			out = append(out, t)
		}
	}
	return out
}

// keeps answers whether q keeps a finding owned by teams.
func (q findingsQuery) keeps(f findingSum, teams []string) bool {
	switch {
	case q.Category != "" && f.Category != q.Category:
		return false
	case q.Severity != "" && f.Severity != q.Severity:
		return false
	case q.Team == "":
		return true
	case q.Team == report.Unattributed:
		return len(f.Teams) == 0
	}
	return slices.Contains(teams, q.Team)
}

// findings is GET /api/v1/fleet/findings: the fleet's findings at ?target= as JSON, or as
// CSV for ?format=csv or Accept: text/csv.
func (h *fleetHandler) findings(w http.ResponseWriter, r *http.Request, sc scope) error {
	q, err := parseFindingsQuery(r)
	if err != nil {
		return err
	}
	format := r.URL.Query().Get("format")
	if format == "" && strings.Contains(r.Header.Get("Accept"), "text/csv") {
		format = "csv"
	}
	if format != "" && format != "csv" && format != "json" {
		return fail(http.StatusUnprocessableEntity, fmt.Sprintf("format %q: want json or csv", format))
	}
	ans, err := h.reads.findings(r, sc, q)
	if err != nil {
		return err
	}
	ans.GeneratedAt = h.now().UTC()
	if format != "csv" {
		writeJSON(w, http.StatusOK, ans)
		return nil
	}
	body, err := findingsCSV(ans.Findings)
	if err != nil {
		return fmt.Errorf("render the fleet's findings as CSV: %w", err)
	}
	name := "next-minor"
	if q.Target != "" {
		name = q.Target
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="upgradescope-fleet-findings-%s.csv"`, name))
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	_, err = w.Write(body)
	return err
}

// findings is the fleet's findings answer for the scope, q applied, before generatedAt.
func (fr *fleetReads) findings(r *http.Request, sc scope, q findingsQuery) (api.FleetFindings, error) {
	bundles := wireBundles(fr.policy.load().bundles)
	v, err := fr.loadFleet(r.Context(), sc)
	if err != nil {
		return api.FleetFindings{}, err
	}
	if err := fr.withSummaries(r.Context(), &v); err != nil {
		return api.FleetFindings{}, err
	}
	ss := v.standings(q.Target)
	findings, unreadable := fleetFindings(v, ss, q, sc)
	return api.FleetFindings{Target: q.Target, Counts: countStandings(q.Target, ss), Findings: findings,
		Unreadable: append([]string{}, unreadable...), Bundles: bundles}, nil
}

// findingsCSVHeader are the CSV's columns: one row per finding and cluster.
var findingsCSVHeader = []string{"key", "title", "category", "severity", "clusters_blocked", "objects_total",
	"cluster", "cluster_version", "target", "cluster_severity", "cluster_objects", "teams"}

// findingsCSV is findings as CSV, one row per finding and cluster it affects, every cell
// defused as the exports' are (output.CSVCell): titles quote manifests anyone may write.
func findingsCSV(findings []api.FleetFinding) ([]byte, error) {
	var buf bytes.Buffer
	cw := csv.NewWriter(&buf)
	if err := cw.Write(findingsCSVHeader); err != nil {
		return nil, err
	}
	for _, f := range findings {
		for _, c := range f.Clusters {
			row := []string{f.Key, f.Title, f.Category, f.Severity, strconv.Itoa(f.ClustersBlocked), strconv.Itoa(f.Objects),
				c.Name, c.ServerVersion, c.Target, c.Severity, strconv.Itoa(c.Objects), strings.Join(c.Teams, ";")}
			for i := range row {
				row[i] = output.CSVCell(row[i])
			}
			if err := cw.Write(row); err != nil {
				return nil, err
			}
		}
	}
	cw.Flush()
	return buf.Bytes(), cw.Error()
}

// findings is the dashboard's findings page: GET /api/v1/fleet/findings's answer with the
// filters' choices (the teams the reader sees, the categories at the target before
// filtering) and, for a team, the clusters it is blocked on by blockers no team owns.
func (h *dashboardHandler) findings(r *http.Request, sc scope) ([]byte, error) {
	pq, err := web.ParseFindingsQuery(r.URL.Query())
	if err != nil {
		return nil, badQuery(err)
	}
	target, err := targetQuery(r)
	if err != nil {
		return nil, err
	}
	v, err := h.reads.loadFleet(r.Context(), sc)
	if err != nil {
		return nil, err
	}
	if err := h.reads.withSummaries(r.Context(), &v); err != nil {
		return nil, err
	}
	ss := v.standings(target)
	kept, unreadable := fleetFindings(v, ss, findingsQuery{Target: target, Team: pq.Team, Category: pq.Category, Severity: pq.APISeverity()}, sc)
	counts := countStandings(target, ss)
	page := &web.Findings{Frame: h.frame(sc), Query: pq, Targets: h.plan.columns(v.clusters), Clusters: counts.Clusters,
		Counts: map[string]int{web.StatusReady: counts.Ready, web.StatusBlocked: counts.Blocked, web.StatusUnknown: counts.Unknown,
			web.StatusAlready: counts.AlreadyThere, web.StatusNone: counts.NotEvaluated},
		Unreadable: unreadable}
	page.Teams, page.Categories = findingChoices(v, ss, sc, fleetTeams(v, sc))
	if pq.Team != "" && pq.Team != report.Unattributed {
		page.BlockedByUnowned = blockedByUnowned(v, sc, target, pq.Team)
	}
	for _, f := range kept {
		row := web.FindingRow{Key: f.Key, Title: f.Title, Category: f.Category, Severity: f.Severity,
			ClustersBlocked: f.ClustersBlocked, Objects: f.Objects, Teams: f.Teams}
		for _, c := range f.Clusters {
			row.Clusters = append(row.Clusters, web.FindingCluster{ID: c.ClusterID, Name: c.Name, Target: c.Target,
				Severity: c.Severity, Objects: c.Objects, Teams: c.Teams})
		}
		page.Rows = append(page.Rows, row)
	}
	return web.RenderFindings(page), nil
}

// findingChoices are the teams a findings page offers (every team of teams, and
// report.Unattributed when some cluster's objects of a finding have none) and the
// categories of the findings at the standings' cells, each sorted: what the unfiltered
// findings hold, read from the summaries without gathering them by key.
func findingChoices(v fleetView, ss []standing, sc scope, teams []string) (choices, categories []string) {
	owners, cats := map[string]bool{}, map[string]bool{}
	for _, t := range teams {
		owners[t] = true
	}
	for _, s := range ss {
		if s.cell == nil {
			continue
		}
		sum := v.summary(*s.cell)
		if sum == nil || sum.unreadable {
			continue
		}
		for _, f := range sum.findings {
			cats[f.Category] = true
			visible := visibleTeams(f.Teams, sc)
			if len(visible) == 0 {
				owners[report.Unattributed] = true
			}
			for _, t := range visible {
				owners[t] = true
			}
		}
	}
	return ownerOrder(slices.Collect(maps.Keys(owners))), slices.Sorted(maps.Keys(cats))
}

// fleetTeams are the teams the reader sees with namespaces in the fleet: those its
// clusters' evaluations of their latest snapshots name (as inScope reads them), sorted. A
// team owning no finding is one of them: blockers no team owns may block it still.
func fleetTeams(v fleetView, sc scope) []string {
	var out []string
	for _, c := range v.clusters {
		for _, cell := range v.cells[c.ID] {
			if cell.SnapshotID != c.LatestSnapshotID {
				continue
			}
			for team := range cell.Teams {
				if team != report.Unattributed && sc.sees(team) {
					out = append(out, team)
				}
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// blockedByUnowned are the clusters where team is blocked at target by blockers no team
// owns (none of its own): the Teams page's reason (explainTeams, web.WhyUnowned), which
// the team's filter alone would hide, since those findings are no team's.
func blockedByUnowned(v fleetView, sc scope, target, team string) []web.ClusterRef {
	var out []web.ClusterRef
	for _, why := range explainTeams(v, sc, target)[team] {
		if why.Kind == web.WhyUnowned {
			out = append(out, why.Cluster)
		}
	}
	return out
}
