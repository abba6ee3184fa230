package chart

import (
	"bytes"
	"os"
	"slices"
	"strings"
	"testing"
)

func TestKBRulesAreCurrent(t *testing.T) {
	rules, err := KBRules()
	if err != nil {
		t.Fatal(err)
	}
	want := RenderRules(rules)
	got, err := os.ReadFile(KBRulesFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s drifted from the built-in bundles: run `go generate ./deploy/chart` (make chart-rbac) and read the diff", KBRulesFile)
	}
	got, err = os.ReadFile(KubeSystemRulesFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, RenderKubeSystemRules()) {
		t.Errorf("%s drifted from the collector's reads: run `go generate ./deploy/chart` (make chart-rbac) and read the diff", KubeSystemRulesFile)
	}
}

func TestKBRulesGrantWhatTheKnowledgeBaseFlagsAndProbes(t *testing.T) {
	rules, err := KBRules()
	if err != nil {
		t.Fatal(err)
	}
	granted := map[string]bool{}
	for _, r := range rules {
		for _, res := range r.Resources {
			granted[r.APIGroups[0]+"/"+res] = true
		}
	}
	// A flagged API (flowcontrol v1beta3), a probed kind (Service, for externalIPs), a pod
	// template kind (CronJob) and the collector's own reads.
	for _, want := range []string{"flowcontrol.apiserver.k8s.io/flowschemas", "/services", "batch/cronjobs", "/pods", "/nodes",
		"apiextensions.k8s.io/customresourcedefinitions", "networking.k8s.io/ingressclasses",
		// the pre-flight reads
		"policy/poddisruptionbudgets", "admissionregistration.k8s.io/validatingwebhookconfigurations",
		"admissionregistration.k8s.io/mutatingwebhookconfigurations", "apiregistration.k8s.io/apiservices", "discovery.k8s.io/endpointslices"} {
		if !granted[want] {
			t.Errorf("the generated rules do not grant %s", want)
		}
	}
	for _, never := range []string{"/secrets", "/configmaps"} {
		if granted[never] {
			t.Errorf("the generated rules grant %s, which only rbac.helmStorage may", never)
		}
	}
}

// Every ClusterRole and Role the chart can render: no wildcard, no watch, no write but the
// agent's own object and CRD, no subresource but its status and, with rbac.kubeletConfigz
// only, nodes/proxy; the Role in kube-system reads by name only.
func TestTheClusterRoleHasNoWildcardsNoWatchAndWritesOnlyItsOwnObject(t *testing.T) {
	for _, v := range []string{``, `rbac: {helmStorage: true, gitops: {argocd: true, flux: true}}`, `agent: {manageCRD: false}`, `rbac: {kubeletConfigz: true}`} {
		proxy := strings.Contains(v, "kubeletConfigz")
		for _, obj := range objects(t, render(t, values(t, v))) {
			if obj["kind"] == "Role" {
				for _, raw := range obj["rules"].([]any) {
					rule := raw.(map[string]any)
					if len(strs(rule["resourceNames"])) == 0 || !slices.Equal(strs(rule["verbs"]), []string{"get"}) {
						t.Errorf("values %q: the Role's rule %v reads more than named objects", v, rule)
					}
				}
				continue
			}
			if obj["kind"] != "ClusterRole" {
				continue
			}
			for _, raw := range obj["rules"].([]any) {
				rule := raw.(map[string]any)
				own := false
				for _, g := range strs(rule["apiGroups"]) {
					own = own || g == "upgradescope.basit.engineer" || len(strs(rule["resourceNames"])) > 0
				}
				for _, field := range []string{"apiGroups", "resources", "verbs", "nonResourceURLs"} {
					for _, s := range strs(rule[field]) {
						if strings.Contains(s, "*") {
							t.Errorf("values %q: rule %v has a wildcard", v, rule)
						}
						if field == "resources" && strings.Contains(s, "/") && s != "clusterreadinesses/status" && !(proxy && s == "nodes/proxy") {
							t.Errorf("values %q: rule %v reads a subresource", v, rule)
						}
					}
				}
				for _, verb := range strs(rule["verbs"]) {
					if verb == "watch" || (verb != "get" && verb != "list" && !own) {
						t.Errorf("values %q: rule %v may %s", v, rule, verb)
					}
				}
			}
		}
	}
}

func strs(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, s := range list {
		out = append(out, s.(string))
	}
	return out
}
