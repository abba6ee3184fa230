package crd

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/report"
)

var tick = time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)

func target(name, verdict string, blockers int) report.TargetResult {
	return report.TargetResult{Target: name, Verdict: verdict, Blockers: blockers, Score: 100 - 25*blockers}
}

func condition(st Status, kind string) metav1.Condition {
	for _, c := range st.Conditions {
		if c.Type == kind {
			return c
		}
	}
	return metav1.Condition{}
}

func TestConditions(t *testing.T) {
	tests := []struct {
		name                 string
		targets              []report.TargetResult
		ready, all           metav1.ConditionStatus
		readyReason, allText string
	}{
		{"a ready target is Ready and AllTargetsReady", []report.TargetResult{target("1.37", "ready", 0)},
			metav1.ConditionTrue, metav1.ConditionTrue, "Ready", "1 target(s) ready"},
		{"a blocked target is False/Blocked on both", []report.TargetResult{target("1.37", "blocked", 3)},
			metav1.ConditionFalse, metav1.ConditionFalse, "Blocked", "1.37 blocked (3 blockers)"},
		{"an unassessed target is Unknown/NotAssessed", []report.TargetResult{target("1.37", "unknown", 0)},
			metav1.ConditionUnknown, metav1.ConditionUnknown, "NotAssessed", "1.37 not assessed"},
		{"no target is Unknown on both", nil,
			metav1.ConditionUnknown, metav1.ConditionUnknown, "NotAssessed", "no target was evaluated"},
		{"a ready first target and a blocked later one leave Ready True and AllTargetsReady False",
			[]report.TargetResult{target("1.37", "ready", 0), target("1.38", "blocked", 3)},
			metav1.ConditionTrue, metav1.ConditionFalse, "Ready", "1.38 blocked (3 blockers)"},
		{"a blocked target outweighs an unassessed one",
			[]report.TargetResult{target("1.37", "unknown", 0), target("1.38", "blocked", 1)},
			metav1.ConditionUnknown, metav1.ConditionFalse, "NotAssessed", "1.38 blocked (1 blockers)"},
		{"none blocked but one unassessed is AllTargetsReady Unknown",
			[]report.TargetResult{target("1.37", "ready", 0), target("1.38", "unknown", 0)},
			metav1.ConditionTrue, metav1.ConditionUnknown, "Ready", "1.38 not assessed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var rep *report.Report
			if tt.targets != nil {
				rep = &report.Report{Targets: tt.targets}
			}
			st := BuildStatus(Status{}, Evaluation{Report: rep, Generation: 4, Now: tick})
			ready, all := condition(st, ConditionReady), condition(st, ConditionAllTargetsReady)
			if ready.Status != tt.ready || ready.Reason != tt.readyReason || ready.ObservedGeneration != 4 {
				t.Errorf("Ready = %+v, want %s/%s at generation 4", ready, tt.ready, tt.readyReason)
			}
			if all.Status != tt.all || all.Message != tt.allText {
				t.Errorf("AllTargetsReady = %+v, want %s %q", all, tt.all, tt.allText)
			}
		})
	}
}

func TestLastTransitionTimeChangesOnlyWhenTheStatusDoes(t *testing.T) {
	blocked := &report.Report{Targets: []report.TargetResult{target("1.37", "blocked", 2)}}
	first := BuildStatus(Status{}, Evaluation{Report: blocked, Now: tick})
	moreBlockers := &report.Report{Targets: []report.TargetResult{target("1.37", "blocked", 3)}}
	second := BuildStatus(first, Evaluation{Report: moreBlockers, Now: tick.Add(10 * time.Minute)})
	if got := condition(second, ConditionReady); !got.LastTransitionTime.Equal(&metav1.Time{Time: tick}) || got.Message != "1.37: 3 blocker(s) (score 25)" {
		t.Errorf("Ready after a second blocked tick = %+v, want the first transition time and the new message", got)
	}
	ready := &report.Report{Targets: []report.TargetResult{target("1.37", "ready", 0)}}
	third := BuildStatus(second, Evaluation{Report: ready, Now: tick.Add(20 * time.Minute)})
	if got := condition(third, ConditionReady); got.Status != metav1.ConditionTrue || !got.LastTransitionTime.Equal(&metav1.Time{Time: tick.Add(20 * time.Minute)}) {
		t.Errorf("Ready after turning ready = %+v, want True at the third tick", got)
	}
}

func TestTopFindingsAreTheFirstTwentyWithTextClipped(t *testing.T) {
	var findings []report.Finding
	for i := range 25 {
		findings = append(findings, report.Finding{
			Key: "removed-api/x", Category: "removed-api", Severity: "blocker",
			Title: strings.Repeat("é", 400) + string(rune('a'+i)), Remediation: strings.Repeat("r", 2000),
		})
	}
	tr := target("1.37", "blocked", 25)
	tr.Findings = findings
	st := BuildStatus(Status{}, Evaluation{Report: &report.Report{Targets: []report.TargetResult{tr}}, Now: tick})
	ts := st.Targets[0]
	if len(ts.TopFindings) != MaxTopFindings || ts.ByCategory["removed-api"] != 25 {
		t.Fatalf("topFindings %d, byCategory %v; want 20 and 25", len(ts.TopFindings), ts.ByCategory)
	}
	f := ts.TopFindings[0]
	if len(f.Title) > MaxTitle || !strings.HasSuffix(f.Title, "…") || !utf8Valid(f.Title) || len(f.Remediation) > MaxRemediation {
		t.Errorf("title %d bytes (valid %v), remediation %d bytes; want ≤ %d and ≤ %d", len(f.Title), utf8Valid(f.Title), len(f.Remediation), MaxTitle, MaxRemediation)
	}
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }

// TestStatusValidatesAgainstTheCRD: the status a real evaluation produces, with the worst-case
// sizes, must satisfy the CRD's own schema (the manifest's openAPIV3Schema, compiled by
// santhosh-tekuri/jsonschema), so the Go types and the manifest cannot drift apart.
func TestStatusValidatesAgainstTheCRD(t *testing.T) {
	schema := compileCRDSchema(t)
	eng, err := engine.New(context.Background(), engine.WithToolVersion("test"))
	if err != nil {
		t.Fatal(err)
	}
	inv, err := inventory.ReadFile("../testdata/gitops-argocd-chart-without-release/inventory.json")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := eng.Evaluate(context.Background(), inv, []string{"1.35", "1.36"}, tick)
	if err != nil {
		t.Fatal(err)
	}
	st := BuildStatus(Status{}, Evaluation{Report: rep, Generation: 2, ServerVersion: "v1.34.2", AgentVersion: "test",
		Notes: []string{"targets: skipped invalid spec target \"next\""}, Now: tick})
	obj := ClusterReadiness{
		TypeMeta:   metav1.TypeMeta{APIVersion: Group + "/" + Version, Kind: Kind},
		ObjectMeta: metav1.ObjectMeta{Name: DefaultName},
		Spec:       Spec{Targets: []string{"1.35", "1.36"}, Ignore: []report.IgnoreRule{{Key: "eol-addon/ingress-nginx", Reason: "migrating", Expires: "2099-12-31"}}},
		Status:     st,
	}
	validate(t, schema, obj)
	if len(st.Targets) != 2 || st.Targets[0].Verdict != "blocked" || len(st.NotAssessed) < 2 {
		t.Errorf("status %+v does not carry both targets and the helm gap", st)
	}
}

func compileCRDSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	var m struct {
		Spec struct {
			Versions []struct {
				Schema struct {
					OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
				} `json:"schema"`
			} `json:"versions"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(Manifest, &m); err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(m.Spec.Versions[0].Schema.OpenAPIV3Schema)
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if err := c.AddResource("crd.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("crd.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func validate(t *testing.T, s *jsonschema.Schema, obj any) {
	t.Helper()
	raw, _ := json.Marshal(obj)
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(v); err != nil {
		t.Errorf("object does not validate against the CRD schema: %v\n%s", err, raw)
	}
}

func TestTheCRDSchemaRefusesWhatTheStatusMustNotHold(t *testing.T) {
	schema := compileCRDSchema(t)
	tests := []struct {
		name   string
		status Status
	}{
		{"a verdict outside ready, blocked, unknown", Status{Targets: []TargetStatus{{Target: "1.37", Verdict: "maybe"}}}},
		{"a title longer than 512 bytes", Status{Targets: []TargetStatus{{Target: "1.37", Verdict: "blocked",
			TopFindings: []TopFinding{{Key: "k", Category: "c", Severity: "blocker", Title: strings.Repeat("x", 513)}}}}}},
		{"a target that is no minor", Status{Targets: []TargetStatus{{Target: "latest", Verdict: "ready"}}}},
		{"a condition without a reason", Status{Conditions: []metav1.Condition{{Type: "Ready", Status: "True", LastTransitionTime: metav1.Time{Time: tick}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw, _ := json.Marshal(ClusterReadiness{Status: tt.status})
			v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
			if err != nil {
				t.Fatal(err)
			}
			if err := schema.Validate(v); err == nil {
				t.Errorf("the CRD schema accepted %s", raw)
			}
		})
	}
}
