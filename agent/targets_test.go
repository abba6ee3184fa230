package agent

import (
	"reflect"
	"strings"
	"testing"

	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/report"
)

func TestResolveTargets(t *testing.T) {
	tests := []struct {
		name      string
		spec      []string
		server    string
		emulated  string
		want      []string
		wantNotes string
	}{
		{name: "spec targets are judged in order, a repeat once", spec: []string{"1.37", "1.38", "1.37"}, server: "v1.36.1", want: []string{"1.37", "1.38"}},
		{name: "an invalid spec target is skipped and noted", spec: []string{"next", "1.37"}, server: "v1.36.1", want: []string{"1.37"}, wantNotes: `skipped invalid spec target "next"`},
		{name: "no spec targets means the next minor", server: "v1.35.4-eks-1", want: []string{"1.36"}},
		{name: "an emulated minor is the one the cluster behaves as", server: "v1.35.4", emulated: "1.32", want: []string{"1.33"}},
		{name: "only invalid spec targets fall back to the next minor", spec: []string{"latest"}, server: "v1.35.0", want: []string{"1.36"}, wantNotes: "latest"},
		{name: "no spec and no server version judges nothing", wantNotes: "server version is unknown"},
		{name: "more than eight spec targets are cut to eight", spec: []string{"1.30", "1.31", "1.32", "1.33", "1.34", "1.35", "1.36", "1.37", "1.38"},
			want: []string{"1.30", "1.31", "1.32", "1.33", "1.34", "1.35", "1.36", "1.37"}, wantNotes: "at most 8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, notes := resolveTargets(tt.spec, &inventory.Document{ServerVersion: tt.server, EmulatedVersion: tt.emulated})
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("targets = %v, want %v", got, tt.want)
			}
			if joined := strings.Join(notes, "; "); (tt.wantNotes == "") != (joined == "") || !strings.Contains(joined, tt.wantNotes) {
				t.Errorf("notes = %q, want them to say %q", joined, tt.wantNotes)
			}
		})
	}
}

func TestIgnoreRulesFromSpecSkipInvalidOnes(t *testing.T) {
	rules, notes := ignoreRules([]report.IgnoreRule{
		{Key: "eol-addon/ingress-nginx", Reason: "migrating", Expires: "2099-12-31"},
		{Reason: "neither key nor category"},
		{Category: "eol-addon", Reason: "x", Expires: "31/12/2099"},
	})
	if len(rules) != 1 || rules[0].Key != "eol-addon/ingress-nginx" || rules[0].Index != 0 {
		t.Errorf("rules = %+v, want the first one only", rules)
	}
	joined := strings.Join(notes, "\n")
	if !strings.Contains(joined, "spec.ignore[1]") || !strings.Contains(joined, "spec.ignore[2]: expires") {
		t.Errorf("notes = %q, want both invalid rules named", joined)
	}
}
