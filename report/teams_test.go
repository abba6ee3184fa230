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
			if got := TeamVerdict(tt.blockers, tt.unowned, tt.gaps); got != tt.want {
				t.Errorf("TeamVerdict = %s, want %s", got, tt.want)
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
	if got := UnownedBlockers(fs); got != 1 {
		t.Errorf("UnownedBlockers = %d, want 1", got)
	}
}
