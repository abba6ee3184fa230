package server_test

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/upgradescope/upgradescope/fleet/server"
	"github.com/upgradescope/upgradescope/inventory"
)

// unownedFleet is the reviewer's fleet in small (issue 34, review defect 1), three clusters
// at 1.32 with namespaces of payments and data, judged at 1.33:
//   - only-unowned: a PodSecurityPolicy (cluster-scoped, no team) is its only blocker, so no
//     finding names a team and its report has no team rollup at all;
//   - others-only: payments' Ingress blocks it, and an Endpoints in a namespace no team owns
//     makes the report's (unattributed) team, with no blocker;
//   - mixed: payments' Ingress and the PodSecurityPolicy block it, data owns an info.
func unownedFleet(t *testing.T) *testServer {
	t.Helper()
	ts := pushed(t, nil)
	for name, edit := range map[string]func(*inventory.Document){
		"only-unowned": func(doc *inventory.Document) { doc.APIUsage = doc.APIUsage[2:] },
		"others-only": func(doc *inventory.Document) {
			doc.APIUsage = doc.APIUsage[:2]
			doc.APIUsage[1].Namespaces = map[string]int{"default": 1}
			doc.APIUsage[1].Objects[0].Namespace = "default"
		},
		"mixed": func(*inventory.Document) {},
	} {
		doc := teamsInventory(t)
		doc.ClusterID = name + "-uid"
		edit(doc)
		if r := ts.push("shared", envelope(t, name, doc)); r.status != 202 {
			t.Fatalf("push %s: %d %s", name, r.status, r.body)
		}
	}
	return ts
}

// The (unattributed) row is the blockers no team owns: on the clusters having them, summed,
// blocked; never a cluster where the report's (unattributed) team holds only an info.
func TestTheUnattributedTeamIsTheBlockersNoTeamOwns(t *testing.T) {
	ts := unownedFleet(t)
	teams := ts.get("/api/v1/fleet/teams?target=1.33", "").json(t)["teams"].(map[string]any)
	for _, tc := range []struct {
		team, verdict string
		blockers      float64
		clusters      []any
	}{
		{"(unattributed)", "blocked", 3, []any{"mixed", "only-unowned", "prod"}},
		{"payments", "blocked", 3, []any{"mixed", "only-unowned", "others-only", "prod"}},
		{"data", "blocked", 0, []any{"mixed", "only-unowned", "others-only", "prod"}},
	} {
		got, _ := teams[tc.team].(map[string]any)
		if got == nil {
			t.Errorf("%s is not rolled up: %v", tc.team, teams)
			continue
		}
		if got["verdict"] != tc.verdict || got["blockers"] != tc.blockers || !slices.Equal(got["clusters"].([]any), tc.clusters) {
			t.Errorf("%s = %v, want %s with %v blockers on %v", tc.team, got, tc.verdict, tc.blockers, tc.clusters)
		}
	}

	page := string(ts.get("/ui/teams?target=1.33", "").body)
	row := regexp.MustCompile(`(?s)<tr data-team="\(unattributed\)" data-verdict="blocked">.*?</tr>`).FindString(page)
	for _, cluster := range []string{"mixed", "only-unowned", "prod"} {
		if !strings.Contains(row, `<li data-why="own" data-cluster="`+cluster+`">`) {
			t.Errorf("(unattributed)'s why lacks %s: %s", cluster, row)
		}
	}
	if strings.Contains(row, "others-only") || strings.Contains(page, "(unattributed)'s") {
		t.Errorf("(unattributed) is said to be blocked by another team's blockers: %s", row)
	}
	data := regexp.MustCompile(`(?s)<tr data-team="data" .*?</tr>`).FindString(page)
	for _, want := range []string{
		`<li data-why="unowned" data-cluster="only-unowned">`,
		"blocked by 1 blocker no team owns (cluster-scoped or in unlabelled namespaces); it blocks every team on the cluster",
		`<li data-why="others" data-cluster="others-only">`,
	} {
		if !strings.Contains(data, want) {
			t.Errorf("data's row lacks %q: %s", want, data)
		}
	}
}

// A team-scoped reader's share holds what no team owns, so its Teams page counts it.
func TestATeamScopedReaderIsToldHowManyBlockersNoTeamOwns(t *testing.T) {
	ts := unownedFleet(t)
	tok := ts.mintRead("data")
	page := string(ts.get("/ui/teams?target=1.33", tok).body)
	if strings.Contains(page, `data-team="(unattributed)"`) {
		t.Errorf("a team-scoped reader sees the fleet's (unattributed) row")
	}
	want := regexp.MustCompile(`<li data-why="unowned" data-cluster="only-unowned"><a [^>]+>only-unowned</a>: blocked by 1 blocker no team owns`)
	if !want.MatchString(page) {
		t.Errorf("the scoped teams page does not count the unowned blocker: %s", page)
	}
}

// A cluster whose report names no team still lists the teams with namespaces there, each
// blocked by what no team owns, in its page's Teams table and its teams API.
func TestAClusterWithoutANamedFindingListsItsTeamsBlockedByWhatNoTeamOwns(t *testing.T) {
	ts := unownedFleet(t)
	id := ts.idOf("only-unowned")
	got := ts.get(fmt.Sprintf("/api/v1/clusters/%d/teams?target=1.33", id), "").json(t)
	teams := got["teams"].(map[string]any)
	for _, team := range []string{"payments", "data"} {
		cell, _ := teams[team].(map[string]any)
		if cell == nil || cell["verdict"] != "blocked" || cell["blockers"] != 0.0 || cell["score"] != 100.0 {
			t.Errorf("%s on only-unowned = %v, want blocked, score 100, 0 blockers of its own", team, cell)
		}
	}
	if len(teams) != 2 || got["unownedBlockers"] != 1.0 {
		t.Errorf("teams = %v, unownedBlockers = %v; want payments and data, and 1", teams, got["unownedBlockers"])
	}

	page := string(ts.get(fmt.Sprintf("/ui/clusters/%d?target=1.33", id), "").body)
	section := regexp.MustCompile(`(?s)<section id="cluster-teams".*?</section>`).FindString(page)
	for _, want := range []string{
		`<tr data-team="data" data-verdict="blocked">`, `<tr data-team="payments" data-verdict="blocked">`,
		`<p id="teams-unowned" data-blockers="1">No finding names a team. 1 blocker no team owns (cluster-scoped objects, or namespaces without a team): that blocker blocks every team here`,
	} {
		if !strings.Contains(section, want) {
			t.Errorf("only-unowned's Teams section lacks %q: %s", want, section)
		}
	}

	mixed := string(ts.get(fmt.Sprintf("/ui/clusters/%d?target=1.33", ts.idOf("mixed")), "").body)
	section = regexp.MustCompile(`(?s)<section id="cluster-teams".*?</section>`).FindString(mixed)
	if strings.Contains(section, `data-team="(unattributed)"`) || strings.Contains(section, "No finding names a team") ||
		!strings.Contains(section, `<p id="teams-unowned" data-blockers="1">1 blocker no team owns`) {
		t.Errorf("mixed's Teams section does not count what no team owns apart from its teams: %s", section)
	}
}

// The teams page links (unattributed)'s clusters filtered to its team: the cluster page
// keeps the findings no team owns.
func TestTheClusterPagesUnattributedFilterKeepsWhatNoTeamOwns(t *testing.T) {
	ts := unownedFleet(t)
	page := string(ts.get(fmt.Sprintf("/ui/clusters/%d?target=1.33&team=(unattributed)", ts.idOf("mixed")), "").body)
	if !strings.Contains(page, `data-key="removed-api/policy/v1beta1/PodSecurityPolicy"`) ||
		strings.Contains(page, `data-key="removed-api/extensions/v1beta1/Ingress"`) {
		t.Errorf("team=(unattributed) does not keep exactly the findings no team owns: %s", page)
	}
}

// What no team owns is counted from the stored cells for the fleet (no report decoded) and
// from the reports' summaries where a view has them: both give every cluster's the same.
func TestTheStoredCellsAndTheReportsCountWhatNoTeamOwnsAlike(t *testing.T) {
	ts := unownedFleet(t)
	doc := teamsInventory(t)
	doc.ClusterID = "nothing-unowned-uid"
	doc.APIUsage = doc.APIUsage[:2] // payments' blocker and data's info: every finding named
	if r := ts.push("shared", envelope(t, "nothing-unowned", doc)); r.status != 202 {
		t.Fatalf("push: %d %s", r.status, r.body)
	}
	cells, sums, err := server.UnownedTwoWays(t.Context(), ts.srv, "1.33")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]int{"mixed": {1, 0}, "only-unowned": {1, 0}, "others-only": {0, 0}, "prod": {1, 0}, "nothing-unowned": {0, 0}}
	if !maps.Equal(sums, want) || !maps.Equal(cells, sums) {
		t.Errorf("unowned by the cells %v, by the summaries %v; want %v", cells, sums, want)
	}
}
