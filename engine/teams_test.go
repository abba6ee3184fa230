package engine

import (
	"reflect"
	"testing"

	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/report"
)

func finding(key, severity string, namespaces ...string) report.Finding {
	return report.Finding{Key: key, Category: "removed-api", Severity: severity, Target: "1.37", Title: key, Namespaces: namespaces}
}

func withTeams(f report.Finding, teams ...string) report.Finding {
	f.Teams = teams
	return f
}

func teamInventory(namespaces ...inventory.Namespace) *inventory.Document {
	return &inventory.Document{Namespaces: namespaces}
}

var paymentsAndData = teamInventory(
	inventory.Namespace{Name: "web", Team: "payments"},
	inventory.Namespace{Name: "db", Team: "data"},
	inventory.Namespace{Name: "tmp"},
)

func TestEachTeamIsScoredByTheFindingsThatNameIt(t *testing.T) {
	tests := []struct {
		name     string
		inv      *inventory.Document
		findings []report.Finding
		gaps     []report.Gap
		want     map[string]report.TeamResult
	}{
		{
			name: "findings carry their teams and each team is scored by its own findings",
			inv:  paymentsAndData,
			findings: []report.Finding{
				finding("removed-api/x", "blocker", "web"),
				finding("deprecated-api/y", "warning", "db", "web"),
				finding("kb-stale", "warning", "db"),
			},
			want: map[string]report.TeamResult{
				"payments": {Score: 70, Verdict: "blocked", Blockers: 1, Warnings: 1},
				"data":     {Score: 90, Verdict: "ready", Warnings: 2},
			},
		},
		{
			name: "each team counts every finding that names it however findings interleave teams",
			inv: teamInventory(
				inventory.Namespace{Name: "a", Team: "alpha"},
				inventory.Namespace{Name: "b", Team: "beta"},
				inventory.Namespace{Name: "c", Team: "gamma"},
			),
			findings: []report.Finding{
				finding("removed-api/x", "blocker", "a", "c"),
				finding("deprecated-api/y", "warning", "b"),
				finding("deprecated-api/z", "info", "a", "b", "c"),
			},
			want: map[string]report.TeamResult{
				"alpha": {Score: 75, Verdict: "blocked", Blockers: 1, Infos: 1},
				"beta":  {Score: 95, Verdict: "ready", Warnings: 1, Infos: 1},
				"gamma": {Score: 75, Verdict: "blocked", Blockers: 1, Infos: 1},
			},
		},
		{
			name: "an unattributed blocker blocks every team",
			inv:  paymentsAndData,
			findings: []report.Finding{
				finding("removed-api/x", "blocker", "tmp"),
				finding("deprecated-api/y", "warning", "db"),
			},
			want: map[string]report.TeamResult{
				"data":           {Score: 95, Verdict: "blocked", Warnings: 1},
				"(unattributed)": {Score: 75, Verdict: "blocked", Blockers: 1},
			},
		},
		{
			name:     "a required gap makes a team without blockers unknown",
			inv:      paymentsAndData,
			findings: []report.Finding{finding("deprecated-api/y", "warning", "db")},
			gaps:     []report.Gap{{Capability: "api-usage", Required: true, Reason: "forbidden"}},
			want: map[string]report.TeamResult{
				"data": {Score: 95, Verdict: "unknown", Warnings: 1},
			},
		},
		{
			name:     "an optional gap leaves a team ready",
			inv:      paymentsAndData,
			findings: []report.Finding{finding("deprecated-api/y", "info", "db")},
			gaps:     []report.Gap{{Capability: "helm", Reason: "forbidden"}},
			want: map[string]report.TeamResult{
				"data": {Score: 100, Verdict: "ready", Infos: 1},
			},
		},
		{
			name: "a team labelled (unattributed) does not block the other teams",
			inv: teamInventory(
				inventory.Namespace{Name: "x", Team: report.Unattributed},
				inventory.Namespace{Name: "db", Team: "data"},
			),
			findings: []report.Finding{
				finding("removed-api/x", "blocker", "x"),
				finding("deprecated-api/y", "warning", "db"),
			},
			want: map[string]report.TeamResult{
				"data":              {Score: 95, Verdict: "ready", Warnings: 1},
				report.Unattributed: {Score: 75, Verdict: "blocked", Blockers: 1},
			},
		},
		{
			name: "a namespace listed twice takes its last team",
			inv: teamInventory(
				inventory.Namespace{Name: "web", Team: "payments"},
				inventory.Namespace{Name: "web", Team: "storefront"},
			),
			findings: []report.Finding{finding("deprecated-api/y", "warning", "web")},
			want: map[string]report.TeamResult{
				"storefront": {Score: 95, Verdict: "ready", Warnings: 1},
			},
		},
		{
			name:     "a pack's own teams are scored when no namespace has a team label",
			inv:      teamInventory(inventory.Namespace{Name: "web"}),
			findings: []report.Finding{withTeams(finding("acme/x", "blocker", "web"), "platform")},
			want: map[string]report.TeamResult{
				"platform": {Score: 75, Verdict: "blocked", Blockers: 1},
			},
		},
		{
			name:     "a pack's own teams give way to the namespace labels",
			inv:      paymentsAndData,
			findings: []report.Finding{withTeams(finding("acme/x", "warning", "db"), "platform")},
			want: map[string]report.TeamResult{
				"data": {Score: 95, Verdict: "ready", Warnings: 1},
			},
		},
		{
			name:     "there is no teams section without team labels",
			inv:      teamInventory(inventory.Namespace{Name: "web"}),
			findings: []report.Finding{finding("removed-api/x", "blocker", "web")},
		},
		{
			name:     "there is no teams section when no finding is in a team's namespace",
			inv:      paymentsAndData,
			findings: []report.Finding{finding("removed-api/x", "blocker", "tmp"), finding("kb-stale", "warning")},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			targets := []report.TargetResult{{Target: "1.37", Findings: tt.findings, NotAssessed: tt.gaps}}
			attributeTeams(targets, tt.inv)
			if got := targets[0].Teams; !reflect.DeepEqual(got, tt.want) {
				t.Errorf("teams = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestAFindingNamesEachOwningTeamOnceInOrder(t *testing.T) {
	inv := teamInventory(
		inventory.Namespace{Name: "web", Team: "payments"},
		inventory.Namespace{Name: "api", Team: "payments"},
		inventory.Namespace{Name: "db", Team: "data"},
		inventory.Namespace{Name: "tmp"},
	)
	suppressed := finding("deprecated-api/s", "warning", "db")
	suppressed.Suppression = &report.Suppression{Source: "config", Reason: "migrating"}
	targets := []report.TargetResult{{
		Findings:   []report.Finding{finding("removed-api/x", "blocker", "web", "tmp", "db", "api"), finding("kb-stale", "info")},
		Suppressed: []report.Finding{suppressed},
	}}
	attributeTeams(targets, inv)
	if got := targets[0].Findings[0].Teams; !reflect.DeepEqual(got, []string{"data", "payments"}) {
		t.Errorf("teams of a finding in web, tmp, db and api = %q, want [data payments]", got)
	}
	if got := targets[0].Findings[1].Teams; got != nil {
		t.Errorf("teams of a finding without namespaces = %q, want none", got)
	}
	if got := targets[0].Suppressed[0].Teams; !reflect.DeepEqual(got, []string{"data"}) {
		t.Errorf("teams of a suppressed finding in db = %q, want [data]", got)
	}
	if got := targets[0].Teams["data"]; got.Warnings != 0 || got.Blockers != 1 {
		t.Errorf("data = %+v, want its one blocker counted and the suppressed warning left out", got)
	}
}
