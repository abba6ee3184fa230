package report

import (
	"fmt"
	"testing"
)

func TestGapsGroupByFamilyAndReasonRequiredFirst(t *testing.T) {
	notCollected := "not collected: the inventory holds no observation of this probe; collect it again with the loaded bundles"
	probe := func(id, reason string) Gap {
		return Gap{Capability: "probes/" + id, Required: true, Reason: reason}
	}
	var fifty []Gap
	for i := range 50 {
		fifty = append(fifty, probe(fmt.Sprintf("kb/p%02d", i), notCollected))
	}
	for _, tc := range []struct {
		name string
		gaps []Gap
		want string
	}{
		{"fifty kb probes not collected are one group", fifty, "probes/kb×50 required"},
		{"a different reason is another group",
			[]Gap{probe("kb/a", notCollected), probe("kb/b", "not observed: forbidden"), probe("kb/c", notCollected)},
			"probes/kb×2 required; probes/kb×1 required"},
		{"another bundle's probes are another group",
			[]Gap{probe("kb/a", notCollected), probe("custom/acme/x", notCollected), probe("custom/acme/y", notCollected)},
			"probes/kb×1 required; probes/custom/acme×2 required"},
		{"capabilities are never merged, and optional ones follow the required",
			[]Gap{{Capability: "helm", Reason: "forbidden"}, {Capability: "api-usage", Required: true, Reason: "forbidden"}, {Capability: "crds", Required: true, Reason: "forbidden"}},
			"api-usage×1 required; crds×1 required; helm×1 optional"},
		{"a partial gap stays apart from a missing one",
			[]Gap{{Capability: "probes/kb/a", Reason: "r", Partial: true}, {Capability: "probes/kb/b", Reason: "r"}},
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

func TestAProbeGroupsFixNamesTheRevisionThatJudgedAndWhatTheAgentSaid(t *testing.T) {
	notCollected := "not collected: the inventory holds no observation of this probe; collect it again with the loaded bundles"
	redeclared := "collected for another declaration of this probe; collect it again with the loaded bundles"
	group := func(family, reason string, n int) GapGroup {
		g := GapGroup{Family: family, Reason: reason, Required: true}
		for i := range n {
			g.Capabilities = append(g.Capabilities, fmt.Sprintf("%s/p%d", family, i))
		}
		return g
	}
	judged := []BundleInfo{{Name: "rules", Revision: "r9"}, {Name: "kb", Revision: "k9"}}
	for _, tc := range []struct {
		name   string
		g      GapGroup
		judged []BundleInfo
		by     Collector
		want   string
	}{
		{"kb probes not collected, the agent named its kb", group("probes/kb", notCollected, 60), judged, Collector{Version: "v0.8.0", KB: "k1"},
			"This inventory was collected without the probes of kb k9: the agent (upgradescope v0.8.0, kb k1) predates them. Fix: upgrade the agent to a release whose kb is k9 or later, or let it fetch this server's bundles (--bundle-url …/bundles/kb); its next push is then judged in full. Until then the checks that read these 60 probes cannot run."},
		{"the agent's own bundle revision wins over its kb version", group("probes/kb", notCollected, 1), judged, Collector{KB: "k1", Bundles: map[string]string{"kb": "k2"}},
			"This inventory was collected without the probes of kb k9: the agent (kb k2) predates them. Fix: upgrade the agent to a release whose kb is k9 or later, or let it fetch this server's bundles (--bundle-url …/bundles/kb); its next push is then judged in full. Until then the checks that read this probe cannot run."},
		{"a bundle that did not judge is named without a revision", group("probes/custom/acme", notCollected, 2), judged, Collector{Version: "v0.9.0"},
			"This inventory was collected without the probes of custom/acme: the agent (upgradescope v0.9.0) predates them. Fix: upgrade the agent to a release whose custom/acme is – or later, or let it fetch this server's bundles (--bundle-url …/bundles/custom/acme); its next push is then judged in full. Until then the checks that read these 2 probes cannot run."},
		{"an inventory whose collector is unknown (push) is to be collected again", group("probes/kb", notCollected, 60), judged, Collector{Bundles: map[string]string{}},
			"This inventory was collected without the probes of kb k9. Fix: collect the inventory again with a release whose kb is k9 or later (an agent: upgrade it, or let it fetch this server's bundles with --bundle-url …/bundles/kb); its next push is then judged in full. Until then the checks that read these 60 probes cannot run."},
		{"probes of another declaration by an unknown collector", group("probes/kb", redeclared, 3), judged, Collector{},
			"These probes were collected as another revision of kb declares them. Fix: collect the inventory again with kb k9 (an agent: upgrade it or let it fetch this server's bundles)."},
		{"probes collected for another declaration", group("probes/kb", redeclared, 3), judged, Collector{Version: "v0.9.0"},
			"The agent collected these probes as another revision of kb declares them: the agent (upgradescope v0.9.0) predates them. Fix: give the agent kb k9 (upgrade it or let it fetch this server's bundles)."},
		{"another reason has no fix", group("probes/kb", "not observed: forbidden", 3), judged, Collector{}, ""},
		{"a capability is no probe", group("helm", notCollected, 1), judged, Collector{}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ProbeFix(tc.g, tc.judged, tc.by); got != tc.want {
				t.Errorf("fix\n%q, want\n%q", got, tc.want)
			}
		})
	}
}
