package engine_test

import (
	"context"
	"strings"
	"testing"

	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/internal/testenv/probetest"
	"github.com/upgradescope/upgradescope/inventory"
)

const probeRule = `package upgradescope.custom.lb

findings contains f if {
	obs := input.facts.probes["custom/lb/lb-ip"]
	some t in input.targets
	f := {"key": "lb/ip", "category": "lb", "severity": "warning", "target": t,
		"title": sprintf("%d Services pin a load balancer IP", [obs.count]), "objects": obs.objects}
}
`

func lbPack(t *testing.T, data string) string {
	return writePack(t, map[string]string{"upgradescope/custom/lb/rule.rego": probeRule, "upgradescope/custom/lb/data.json": data})
}

const lbProbe = `{"observe": {"probes": [{"id": "lb-ip", "kinds": ["core/Service"], "path": "spec.loadBalancerIP", "values": true}]}}`

func TestACustomPackDeclaresProbesBesideTheKnowledgeBase(t *testing.T) {
	eng := newEngine(t, engine.WithPolicy(lbPack(t, lbProbe)))
	var ids []string
	for _, d := range eng.Observe().Probes.Declared() {
		ids = append(ids, d.ID)
	}
	joined := strings.Join(ids, " ")
	if !strings.Contains(joined, "custom/lb/lb-ip") || !strings.Contains(joined, "kb/pod-docker-socket") {
		t.Errorf("declared probes %v: want the pack's custom/lb/lb-ip beside the kb's", ids)
	}
	for _, d := range eng.Observe().Probes.Declared() {
		if d.ID == "custom/lb/lb-ip" && d.Spec.Match != "present" {
			t.Errorf("custom/lb/lb-ip declared with match %q: want the default spelled out, present", d.Spec.Match)
		}
	}
}

func TestAMalformedProbeDeclarationIsRefusedWithItsPointer(t *testing.T) {
	tests := []struct{ name, data, says string }{
		{"a misspelt field", `{"observe": {"probes": [{"id": "x", "kinds": ["core/Service"], "path": "spec", "podTemplat": true}]}}`,
			`/upgradescope/custom/lb/observe/probes/0: json: unknown field "podTemplat"`},
		{"a path the language refuses", `{"observe": {"probes": [{"id": "x", "kinds": ["core/Service"], "path": "spec..x"}]}}`,
			"/upgradescope/custom/lb/observe/probes/0: probe x: path"},
		{"probes that are not a list", `{"observe": {"probes": {"id": "x"}}}`, "/upgradescope/custom/lb/observe/probes must be a list of probes"},
		{"a Secret", `{"observe": {"probes": [{"id": "x", "kinds": ["core/Secret"], "path": "data"}]}}`, "probes may not read Secrets"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := engine.New(context.Background(), engine.WithPolicy(lbPack(t, tt.data)))
			if err == nil || !strings.Contains(err.Error(), tt.says) {
				t.Errorf("New = %v; want an error saying %q", err, tt.says)
			}
		})
	}
}

func TestAProbeBackedRuleJudgesOnlyWhatWasObservedAsDeclared(t *testing.T) {
	eng := newEngine(t, engine.WithPolicy(lbPack(t, lbProbe)))
	declared := map[string]inventory.ProbeSpec{}
	for _, d := range eng.Observe().Probes.Declared() {
		declared[d.ID] = d.Spec
	}
	observed := func(edit func(*inventory.Probe)) *inventory.Document {
		doc := prodInventory()
		p := inventory.Probe{ID: "custom/lb/lb-ip", Probe: declared["custom/lb/lb-ip"], Available: true, Examined: 3, Count: 1,
			Objects: []inventory.ProbeObject{{Kind: "Service", Namespace: "web", Name: "front", Values: []string{"10.0.0.7"}}}}
		if edit != nil {
			edit(&p)
		}
		doc.Probes = []inventory.Probe{p}
		probetest.FoundNothing(doc, eng.Observe().Probes)
		return doc
	}
	tests := []struct {
		name    string
		doc     *inventory.Document
		verdict string
		gap     string
	}{
		{"an observation as declared is judged", observed(nil), "ready", ""},
		{"an inventory without the probe is a required gap", func() *inventory.Document {
			doc := prodInventory()
			probetest.FoundNothing(doc, eng.Observe().Probes)
			if doc.Probes[0].ID != "custom/lb/lb-ip" {
				t.Fatalf("the first observation is %s, want custom/lb/lb-ip", doc.Probes[0].ID)
			}
			doc.Probes = doc.Probes[1:]
			return doc
		}(), "unknown", "not collected"},
		{"an observation of another declaration is a required gap", observed(func(p *inventory.Probe) { p.Probe.Path = "spec.clusterIP" }),
			"unknown", "collected for another declaration"},
		{"an observation written twice is a required gap", func() *inventory.Document {
			doc := observed(nil)
			doc.Probes = append(doc.Probes, doc.Probes[0])
			inventory.SortProbes(doc.Probes)
			return doc
		}(), "unknown", "observed twice"},
		{"an unavailable observation is a required gap naming why", observed(func(p *inventory.Probe) {
			p.Available, p.Reason = false, "list core/Service: forbidden"
		}), "unknown", "not observed: list core/Service: forbidden"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := eng.Evaluate(context.Background(), tt.doc, []string{"1.37"}, now)
			if err != nil {
				t.Fatal(err)
			}
			tr := r.Targets[0]
			if tr.Verdict != tt.verdict {
				t.Errorf("verdict %s, want %s (gaps %+v)", tr.Verdict, tt.verdict, tr.NotAssessed)
			}
			var gaps []string
			for _, g := range tr.NotAssessed {
				if strings.HasPrefix(g.Capability, "probes/") {
					gaps = append(gaps, g.Capability+": "+g.Reason)
					if !g.Required {
						t.Errorf("gap %s is optional; a probe a rule reads is required", g.Capability)
					}
				}
			}
			if tt.gap == "" && len(gaps) > 0 || tt.gap != "" && (len(gaps) != 1 || !strings.Contains(gaps[0], tt.gap)) {
				t.Errorf("probe gaps %q; want one saying %q", gaps, tt.gap)
			}
			fired := false
			for _, f := range tr.Findings {
				fired = fired || f.Key == "lb/ip"
			}
			if fired != (tt.gap == "") {
				t.Errorf("the rule fired: %v; it must judge an observation as declared and nothing else", fired)
			}
		})
	}
}
