// Package chart holds what is generated into the Helm chart (deploy/chart/upgradescope) and
// the chart's tests, which lint, render and install it with the Helm 4 SDK.
package chart

//go:generate go run ./genrbac

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/upgradescope/upgradescope/bundles"
	"github.com/upgradescope/upgradescope/kb"
	"github.com/upgradescope/upgradescope/kb/probe"
	"github.com/upgradescope/upgradescope/policies"
)

// KBRulesFile is where the generated rules live in the chart; templates/rbac.yaml includes it.
const KBRulesFile = "upgradescope/files/kb-rbac-rules.yaml"

// KubeSystemRulesFile is where the rules of the agent's Role in kube-system live;
// templates/rbac.yaml includes it.
const KubeSystemRulesFile = "upgradescope/files/kube-system-rbac-rules.yaml"

// Rule is one RBAC policy rule of the agent's ClusterRole.
type Rule struct {
	APIGroups     []string
	Resources     []string
	ResourceNames []string
	Verbs         []string
}

// collectorReads are what the live collector (collectors/cluster) reads whatever the
// bundles say: they are named in its code, not in the knowledge base.
var collectorReads = []Rule{
	// versions.go reads the kube-system UID (the cluster's id) by name.
	{APIGroups: []string{""}, Resources: []string{"namespaces"}, ResourceNames: []string{"kube-system"}, Verbs: []string{"get"}},
	// evidence.go lists namespaces (teams) and pods (images); versions.go nodes (kubelets).
	{APIGroups: []string{""}, Resources: []string{"namespaces", "nodes", "pods"}, Verbs: []string{"list"}},
	// evidence.go lists IngressClasses (controllers) and CRDs (served and stored versions).
	{APIGroups: []string{"networking.k8s.io"}, Resources: []string{"ingressclasses"}, Verbs: []string{"list"}},
	{APIGroups: []string{"apiextensions.k8s.io"}, Resources: []string{"customresourcedefinitions"}, Verbs: []string{"list"}},
	// collectors/gitops looks for Argo CD and Flux tracking metadata on workloads; the
	// pre-flight pod pass reads Deployments and StatefulSets whole for their placements.
	{APIGroups: []string{"apps"}, Resources: []string{"daemonsets", "deployments", "statefulsets"}, Verbs: []string{"list"}},
	// The pre-flight reads (preflight.go, budgets.go, endpoints.go): disruption budgets,
	// admission webhooks, aggregated APIServices, and the services they call with their
	// EndpointSlices (each named service by a list with a field selector).
	{APIGroups: []string{"policy"}, Resources: []string{"poddisruptionbudgets"}, Verbs: []string{"list"}},
	{APIGroups: []string{"admissionregistration.k8s.io"}, Resources: []string{"mutatingwebhookconfigurations", "validatingwebhookconfigurations"}, Verbs: []string{"list"}},
	{APIGroups: []string{"apiregistration.k8s.io"}, Resources: []string{"apiservices"}, Verbs: []string{"list"}},
	{APIGroups: []string{""}, Resources: []string{"services"}, Verbs: []string{"list"}},
	{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"list"}},
}

// KubeSystemRules are the reads of the agent's Role in kube-system: kube-proxy's DaemonSet
// and ConfigMap, by name (preflight.go's kubeProxy). A Role with resourceNames grants
// exactly these two objects, where a ClusterRole would grant every ConfigMap of the cluster
// (a ConfigMap may hold credentials).
var KubeSystemRules = []Rule{
	{APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"kube-proxy"}, Verbs: []string{"get"}},
	{APIGroups: []string{"apps"}, Resources: []string{"daemonsets"}, ResourceNames: []string{"kube-proxy"}, Verbs: []string{"get"}},
}

// KBRules are the reads a live collection makes with the built-in bundles: the fixed reads of
// the collector, and a list of every resource the knowledge base flags (api-usage lists it,
// metadata only) or a probe looks at (listed whole). RBAC grants by group and resource, not
// version, so a kind flagged at several versions is one grant. Resources of one group are
// merged into one rule, sorted: the output is deterministic.
func KBRules() ([]Rule, error) {
	b, err := bundles.ReadFS(policies.KB)
	if err != nil {
		return nil, fmt.Errorf("read the built-in kb bundle: %w", err)
	}
	k, err := kb.FromData("built-in", b.Data)
	if err != nil {
		return nil, fmt.Errorf("load the built-in kb: %w", err)
	}
	// With the built-in bundles only, what collectors observe is the knowledge base's own:
	// no custom pack declares more.
	observe, err := k.Observe(nil, nil)
	if err != nil {
		return nil, fmt.Errorf("the built-in kb's probes: %w", err)
	}
	resources := kbResources(k)
	listed := map[string]map[string]bool{}
	add := func(group, resource string) {
		if listed[group] == nil {
			listed[group] = map[string]bool{}
		}
		listed[group][resource] = true
	}
	for _, r := range collectorReads {
		if slices.Equal(r.Verbs, []string{"list"}) {
			for _, res := range r.Resources {
				add(r.APIGroups[0], res)
			}
		}
	}
	for _, a := range k.FlaggedAPIs() {
		res, ok := resources[a.Group+"/"+a.Kind]
		if !ok {
			return nil, fmt.Errorf("kb flags %s/%s %s but names no resource for it", a.Group, a.Version, a.Kind)
		}
		add(a.Group, res)
	}
	for _, key := range observe.Probes.Kinds() {
		group, kind, _ := probe.SplitKind(key)
		res, ok := resources[group+"/"+kind]
		if !ok {
			return nil, fmt.Errorf("a probe looks at %s, which the kb names no resource for", key)
		}
		add(group, res)
	}
	rules := []Rule{collectorReads[0]}
	for _, group := range sortedKeys(listed) {
		rules = append(rules, Rule{APIGroups: []string{group}, Resources: sortedKeys(listed[group]), Verbs: []string{"list"}})
	}
	return rules, nil
}

// kbResources maps "group/Kind" to its resource, from the kb's API lifecycle data.
func kbResources(k *kb.KB) map[string]string {
	out := map[string]string{}
	for _, a := range k.APIs() {
		if a.Resource != "" {
			out[a.Group+"/"+a.Kind] = a.Resource
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// RenderRules writes rules as the YAML list templates/rbac.yaml indents into the ClusterRole.
func RenderRules(rules []Rule) []byte {
	var b bytes.Buffer
	b.WriteString("# Code generated by `go generate ./deploy/chart` (make chart-rbac) from the built-in\n")
	b.WriteString("# bundles and the live collector's fixed reads. DO NOT EDIT.\n")
	b.WriteString("# What a scan lists: the kinds the knowledge base flags, the kinds its probes look at, and\n")
	b.WriteString("# what collectors/cluster reads whatever the bundles say. Never watch, never write.\n")
	writeRules(&b, rules)
	return b.Bytes()
}

// RenderKubeSystemRules writes KubeSystemRules as the YAML list templates/rbac.yaml indents
// into the agent's Role in kube-system.
func RenderKubeSystemRules() []byte {
	var b bytes.Buffer
	b.WriteString("# Code generated by `go generate ./deploy/chart` (make chart-rbac) from the live\n")
	b.WriteString("# collector's fixed reads in kube-system. DO NOT EDIT.\n")
	b.WriteString("# kube-proxy's DaemonSet and ConfigMap, by name: its mode and feature gates.\n")
	writeRules(&b, KubeSystemRules)
	return b.Bytes()
}

func writeRules(b *bytes.Buffer, rules []Rule) {
	for _, r := range rules {
		fmt.Fprintf(b, "- apiGroups: %s\n", flow(r.APIGroups))
		fmt.Fprintf(b, "  resources: %s\n", flow(r.Resources))
		if len(r.ResourceNames) > 0 {
			fmt.Fprintf(b, "  resourceNames: %s\n", flow(r.ResourceNames))
		}
		fmt.Fprintf(b, "  verbs: %s\n", flow(r.Verbs))
	}
}

// flow writes a YAML flow sequence of quoted strings.
func flow(items []string) string {
	quoted := make([]string, len(items))
	for i, s := range items {
		quoted[i] = fmt.Sprintf("%q", s)
	}
	return "[" + strings.Join(quoted, ", ") + "]"
}
