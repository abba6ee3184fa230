package audit_test

import (
	"strings"
	"testing"

	auditinternal "k8s.io/apiserver/pkg/apis/audit"
	"k8s.io/apiserver/pkg/audit/policy"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"

	"github.com/upgradescope/upgradescope/collectors/audit"
	"github.com/upgradescope/upgradescope/kb"
)

var lifecycle = []kb.APIEntry{
	{Group: "networking.k8s.io", Version: "v1beta1", Kind: "ServiceCIDR", Resource: "servicecidrs", Removed: "1.37"},
	{Group: "networking.k8s.io", Version: "v1beta1", Kind: "IPAddress", Resource: "ipaddresses", Removed: "1.37"},
	{Group: "networking.k8s.io", Version: "v1", Kind: "ServiceCIDR", Resource: "servicecidrs"},
	{Group: "flowcontrol.apiserver.k8s.io", Version: "v1beta3", Kind: "FlowSchema", Resource: "flowschemas", Removed: "1.32"},
	{Group: "policy", Version: "v1beta1", Kind: "PodDisruptionBudget", Resource: "poddisruptionbudgets", Removed: "1.25"},
	{Group: "", Version: "v1", Kind: "Endpoints", Resource: "endpoints", Deprecated: "1.33", Removed: "1.40"},
	{Group: "admission.k8s.io", Version: "v1beta1", Kind: "AdmissionReview", Removed: "1.40"}, // served by no resource
}

func TestThePolicyLogsTheResourcesOfAPIsRemovedAfterFrom(t *testing.T) {
	got, err := audit.Policy(lifecycle, "1.31")
	if err != nil {
		t.Fatal(err)
	}
	rules := string(got[strings.Index(string(got), "rules:"):])
	want := `rules:
  - level: Metadata
    resources:
      - group: ""
        resources: [endpoints, endpoints/*]
      - group: flowcontrol.apiserver.k8s.io
        resources: [flowschemas, flowschemas/*]
      - group: networking.k8s.io
        resources: [ipaddresses, ipaddresses/*, servicecidrs, servicecidrs/*]
  - level: None
`
	if rules != want {
		t.Errorf("rules:\n%s\nwant:\n%s", rules, want)
	}
}

func TestAPolicyWithNothingToLogIsRefusedNotWrittenAsLogEverything(t *testing.T) {
	for _, from := range []string{"1.40", "1.45"} {
		if _, err := audit.Policy(lifecycle, from); err == nil || !strings.Contains(err.Error(), "removed after "+from) {
			t.Errorf("Policy(%s) = %v, want an error saying nothing is removed after it", from, err)
		}
	}
	if _, err := audit.Policy(lifecycle, "latest"); err == nil {
		t.Error("Policy(latest) = nil error, want the version refused")
	}
}

// The API server's own policy reader loads the policy, and its evaluator logs a deprecated
// request's metadata, never a body, and nothing else.
func TestTheAPIServerLoadsThePolicyAndLogsOnlyTheListedResources(t *testing.T) {
	raw, err := audit.Policy(lifecycle, "1.31")
	if err != nil {
		t.Fatal(err)
	}
	p, err := policy.LoadPolicyFromBytes(raw)
	if err != nil {
		t.Fatalf("kube-apiserver would refuse the policy: %v\n%s", err, raw)
	}
	eval := policy.NewPolicyRuleEvaluator(p)
	tests := []struct {
		group, version, resource string
		subresource              string
		want                     auditinternal.Level
	}{
		{"networking.k8s.io", "v1beta1", "servicecidrs", "", auditinternal.LevelMetadata},
		{"networking.k8s.io", "v1beta1", "servicecidrs", "status", auditinternal.LevelMetadata}, // what a controller writes
		{"networking.k8s.io", "v1", "servicecidrs", "", auditinternal.LevelMetadata}, // a policy cannot select versions
		{"", "v1", "endpoints", "", auditinternal.LevelMetadata},
		{"", "v1", "secrets", "", auditinternal.LevelNone},
		{"policy", "v1beta1", "poddisruptionbudgets", "", auditinternal.LevelNone},
		{"networking.k8s.io", "v1", "ingresses", "", auditinternal.LevelNone},
		{"networking.k8s.io", "v1", "ingresses", "status", auditinternal.LevelNone},
	}
	for _, tt := range tests {
		attrs := authorizer.AttributesRecord{User: &user.DefaultInfo{Name: "alice"}, Verb: "list", APIGroup: tt.group,
			APIVersion: tt.version, Resource: tt.resource, Subresource: tt.subresource, ResourceRequest: true}
		if got := eval.EvaluatePolicyRule(attrs).Level; got != tt.want {
			t.Errorf("%s/%s %s/%s: level %s, want %s", tt.group, tt.version, tt.resource, tt.subresource, got, tt.want)
		}
	}
	if got := eval.EvaluatePolicyRule(authorizer.AttributesRecord{User: &user.DefaultInfo{Name: "alice"}, Verb: "get", Path: "/healthz"}).Level; got != auditinternal.LevelNone {
		t.Errorf("/healthz: level %s, want None", got)
	}
}
