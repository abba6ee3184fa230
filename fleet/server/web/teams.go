package web

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/upgradescope/upgradescope/report"
)

// ClusterRef is a cluster a page links to.
type ClusterRef struct {
	ID   int64
	Name string
}

// TeamRow is one team across the fleet: its worst verdict and score, its blockers summed,
// and the clusters it has namespaces in.
type TeamRow struct {
	Team       string
	Verdict    string
	WorstScore int
	Blockers   int
	Clusters   []ClusterRef
	// Why are the clusters that make the verdict what it is.
	Why []TeamWhy
}

// Kinds of TeamWhy.
const (
	// WhyOwn: the team's own blockers (Blockers of them).
	WhyOwn = "own"
	// WhyUnowned: blockers no team owns block every team on the cluster (Blockers of them,
	// -1 when the reader may not count them).
	WhyUnowned = "unowned"
	// WhyOthers: other teams' blockers (Teams, Blockers in all) block the cluster, not the
	// team.
	WhyOthers = "others"
	// WhyUnknown: a required capability of the cluster was not assessed.
	WhyUnknown = "unknown"
)

// TeamWhy is one cluster's part in a team's verdict.
type TeamWhy struct {
	Cluster  ClusterRef
	Kind     string
	Blockers int
	Teams    []string
}

// Teams is the teams page's data. Target "" means each cluster at its next minor.
type Teams struct {
	Frame
	Target  string
	Targets []string
	Rows    []TeamRow
	// Missing are clusters with no stored evaluation at the target: their teams are not
	// in the rollup.
	Missing []ClusterRef
}

// RenderTeams writes the teams fragment.
func RenderTeams(t *Teams) []byte {
	var d doc
	d.banner(t.Frame)
	d.w("<h1>Teams</h1>\n")
	at := "each cluster's next minor"
	if t.Target != "" {
		at = "Kubernetes " + esc(t.Target)
	}
	d.w(`<form id="teams-controls" class="controls" method="get" action="%s/teams" aria-label="Choose a target">`, esc(t.Prefix))
	d.w(`<label for="teams-target">Judge at<select id="teams-target" name="target"><option value=""%s>each cluster's next minor</option>`, selectedAttr(t.Target == ""))
	for _, tg := range t.Targets {
		d.w(`<option value="%s"%s>Kubernetes %s</option>`, esc(tg), selectedAttr(tg == t.Target), esc(tg))
	}
	d.w(`</select></label><button type="submit">Apply</button></form>` + "\n")
	d.w(`<p class="muted">Each team's worst verdict across the clusters it has namespaces in, at %s.</p>`+"\n", at)
	d.w(`<div class="table-wrap" tabindex="0"><table id="teams"><thead><tr><th scope="col">Team</th><th scope="col">Worst verdict</th>` +
		`<th scope="col">Worst score</th><th scope="col">Own blockers</th><th scope="col">Why</th><th scope="col">Clusters</th></tr></thead><tbody>` + "\n")
	for _, r := range t.Rows {
		d.w(`<tr data-team="%s" data-verdict="%s"><th scope="row">%s</th><td data-label="Worst verdict">%s</td><td data-label="Worst score">%s</td><td data-label="Own blockers">%d</td><td data-label="Why">`,
			esc(r.Team), esc(r.Verdict), esc(r.Team), verdict(r.Verdict), scoreText(r.Verdict, r.WorstScore), r.Blockers)
		t.why(&d, r)
		d.w(`</td><td data-label="Clusters">`)
		for i, c := range r.Clusters {
			if i > 0 {
				d.w(", ")
			}
			q := ClusterQuery{Target: t.Target, Team: r.Team}
			d.w(`<a href="%s">%s</a>`, href(t.Prefix, "/clusters/"+strconv.FormatInt(c.ID, 10), q.values()), esc(c.Name))
		}
		d.w("</td></tr>\n")
	}
	d.w("</tbody></table></div>\n")
	if len(t.Rows) == 0 {
		d.w(`<p class="muted">No team has a stored evaluation here.</p>` + "\n")
	}
	if len(t.Missing) > 0 {
		d.w(`<p class="muted">%s without a stored evaluation at this target, so not in the rollup: `, plural(len(t.Missing), "cluster"))
		for i, c := range t.Missing {
			if i > 0 {
				d.w(", ")
			}
			d.w(`<a href="%s/clusters/%d">%s</a>`, esc(t.Prefix), c.ID, esc(c.Name))
		}
		d.w("</p>\n")
	}
	return []byte(d.String())
}

// why lists the clusters behind a team's verdict, each a link to the cluster at the target:
// above all, why a team with no blocker of its own reads blocked.
func (t *Teams) why(d *doc, r TeamRow) {
	if len(r.Why) == 0 {
		d.w(`<span class="muted">ready everywhere</span>`)
		return
	}
	d.w(`<ul class="why">`)
	for _, w := range r.Why {
		link := href(t.Prefix, "/clusters/"+strconv.FormatInt(w.Cluster.ID, 10), ClusterQuery{Target: t.Target}.values())
		d.w(`<li data-why="%s" data-cluster="%s"><a href="%s">%s</a>: %s</li>`, w.Kind, esc(w.Cluster.Name), link, esc(w.Cluster.Name), whyText(r.Team, w))
	}
	d.w(`</ul>`)
}

// whyText says one cluster's part in team's verdict.
func whyText(team string, w TeamWhy) string {
	switch {
	case w.Kind == WhyOwn && team == report.Unattributed:
		return plural(w.Blockers, "blocker") + " no team owns"
	case w.Kind == WhyOwn:
		return plural(w.Blockers, "blocker") + " of its own"
	case w.Kind == WhyUnowned:
		n, they := "blockers", "they block"
		if w.Blockers > 0 {
			n = plural(w.Blockers, "blocker")
		}
		if w.Blockers == 1 {
			they = "it blocks"
		}
		return "blocked by " + n + " no team owns (cluster-scoped or in unlabelled namespaces); " + they + " every team on the cluster"
	case w.Kind == WhyOthers:
		owners := make([]string, len(w.Teams))
		for i, o := range w.Teams {
			owners[i] = "<strong>" + esc(o) + "</strong>"
		}
		return "the cluster is blocked by " + strings.Join(owners, ", ") + " (" + plural(w.Blockers, "blocker") + "), none of them " + esc(team) + "'s"
	case w.Kind == WhyUnknown:
		return "unknown: a required input was not assessed"
	}
	return esc(w.Kind)
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%s %ss", thousands(n), noun)
}
