package report

import "testing"

func TestATeamIsJudgedByItsBlockersThoseNoTeamOwnsAndRequiredGaps(t *testing.T) {
	required := []Gap{{Capability: "api-usage", Required: true}}
	optional := []Gap{{Capability: "helm"}}
	tests := []struct {
		name              string
		blockers, unowned int
		gaps              []Gap
		want              string
	}{
		{"its own blocker blocks it", 1, 0, nil, VerdictBlocked},
		{"a blocker no team owns blocks it", 0, 1, nil, VerdictBlocked},
		{"a blocker outweighs a required gap", 1, 0, required, VerdictBlocked},
		{"a required gap leaves it unknown", 0, 0, required, VerdictUnknown},
		{"an optional gap leaves it ready", 0, 0, optional, VerdictReady},
		{"nothing leaves it ready", 0, 0, nil, VerdictReady},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := JudgeTeam(TeamResult{Blockers: tt.blockers}, tt.unowned, tt.gaps).Verdict; got != tt.want {
				t.Errorf("JudgeTeam verdict = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestOnlyBlockersWithoutATeamAreUnowned(t *testing.T) {
	fs := []Finding{
		{Severity: SeverityBlocker},
		{Severity: SeverityBlocker, Teams: []string{"(unattributed)"}},
		{Severity: SeverityBlocker, Teams: []string{"data"}},
		{Severity: SeverityWarning},
	}
	if got := unownedBlockers(fs); got != 1 {
		t.Errorf("unownedBlockers = %d, want 1", got)
	}
}

func TestATeamWithoutFindingsIsJudgedByWhatNoTeamOwns(t *testing.T) {
	tr := TargetResult{
		Findings:    []Finding{{Severity: SeverityBlocker}, {Severity: SeverityWarning, Teams: []string{"data"}}},
		NotAssessed: []Gap{{Capability: "api-usage", Required: true}},
	}
	want := TeamResult{Score: 100, Verdict: VerdictBlocked}
	if got := tr.TeamWithoutFindings(); got != want {
		t.Errorf("TeamWithoutFindings = %+v, want %+v", got, want)
	}
	tr.Findings = tr.Findings[1:]
	want.Verdict = VerdictUnknown
	if got := tr.TeamWithoutFindings(); got != want {
		t.Errorf("without an unowned blocker, TeamWithoutFindings = %+v, want %+v", got, want)
	}
}
