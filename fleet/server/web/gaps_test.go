package web

import (
	"fmt"
	"strings"
	"testing"

	"github.com/upgradescope/upgradescope/report"
)

func TestGapsGroupByFamilyAndReasonRequiredFirst(t *testing.T) {
	notCollected := "not collected: the inventory holds no observation of this probe; collect it again with the loaded bundles"
	probe := func(id, reason string) report.Gap {
		return report.Gap{Capability: "probes/" + id, Required: true, Reason: reason}
	}
	var fifty []report.Gap
	for i := range 50 {
		fifty = append(fifty, probe(fmt.Sprintf("kb/p%02d", i), notCollected))
	}
	for _, tc := range []struct {
		name string
		gaps []report.Gap
		want string
	}{
		{"fifty kb probes not collected are one group", fifty, "probes/kb×50 required"},
		{"a different reason is another group",
			[]report.Gap{probe("kb/a", notCollected), probe("kb/b", "not observed: forbidden"), probe("kb/c", notCollected)},
			"probes/kb×2 required; probes/kb×1 required"},
		{"another bundle's probes are another group",
			[]report.Gap{probe("kb/a", notCollected), probe("custom/acme/x", notCollected), probe("custom/acme/y", notCollected)},
			"probes/kb×1 required; probes/custom/acme×2 required"},
		{"capabilities are never merged, and optional ones follow the required",
			[]report.Gap{{Capability: "helm", Reason: "forbidden"}, {Capability: "api-usage", Required: true, Reason: "forbidden"}, {Capability: "crds", Required: true, Reason: "forbidden"}},
			"api-usage×1 required; crds×1 required; helm×1 optional"},
		{"a partial gap stays apart from a missing one",
			[]report.Gap{{Capability: "probes/kb/a", Reason: "r", Partial: true}, {Capability: "probes/kb/b", Reason: "r"}},
			"probes/kb×1 optional; probes/kb×1 optional"},
		{"no gaps are no groups", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got string
			for i, g := range GroupGaps(tc.gaps) {
				if i > 0 {
					got += "; "
				}
				kind := "optional"
				if g.Required {
					kind = "required"
				}
				got += fmt.Sprintf("%s×%d %s", g.Family, len(g.Capabilities), kind)
			}
			if got != tc.want {
				t.Errorf("groups %q, want %q", got, tc.want)
			}
		})
	}
}

func TestAnUnknownVerdictsScoreReadsNotAssessed(t *testing.T) {
	for v, want := range map[string]string{"unknown": ">n/a (not assessed)<", "ready": "100", "blocked": "100"} {
		if got := scoreText(v, 100); !strings.Contains(got, want) || v == "unknown" && strings.Contains(got, "100") {
			t.Errorf("a %s verdict's score reads %q, want %q", v, got, want)
		}
	}
}
