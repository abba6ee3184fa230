package audit

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/kb"
)

// policyHeader says what the policy is for; docs/audit-policy.yaml is Policy's output.
const policyHeader = `# The audit policy upgradescope needs: requests to the resources whose deprecated versions
# have an announced removal, and to their subresources (r/*: a controller writes status), at
# Metadata level (who, what, when; never a body), and nothing else. The API server adds
# k8s.io/deprecated and k8s.io/removed-release to the events of requests at a deprecated
# version; a policy can only select by group and resource, so the current versions of these
# resources are logged too (a small volume: these are rarely written). Generated from the
# knowledge base by ` + "`upgradescope audit-policy`" + `; see docs/audit.md.
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages:
  - RequestReceived
rules:
  - level: Metadata
    resources:
`

// Policy is the audit policy (audit.k8s.io/v1) the collector needs to name the callers of
// the APIs a cluster at from or later still loses: the REST resources of every API in apis
// removed after from, at Metadata level, and nothing else. Groups and resources are sorted,
// so the same table gives the same bytes. A table with no such API is an error: a rule
// without resources would log every request.
func Policy(apis []kb.APIEntry, from string) ([]byte, error) {
	after, err := inventory.ParseVersion(from)
	if err != nil {
		return nil, err
	}
	groups := map[string]map[string]bool{}
	for _, a := range apis {
		removed, err := inventory.ParseVersion(a.Removed)
		if err != nil || a.Resource == "" || !removed.LaterMinor(after) {
			continue
		}
		if groups[a.Group] == nil {
			groups[a.Group] = map[string]bool{}
		}
		groups[a.Group][a.Resource] = true
	}
	if len(groups) == 0 {
		return nil, fmt.Errorf("the knowledge base knows no API removed after %s: there is nothing to log", after.MinorString())
	}
	var b bytes.Buffer
	b.WriteString(policyHeader)
	for _, g := range slices.Sorted(maps.Keys(groups)) {
		name := g
		if name == "" {
			name = `""` // the core group
		}
		fmt.Fprintf(&b, "      - group: %s\n", name)
		fmt.Fprintf(&b, "        resources: [%s]\n", strings.Join(withSubresources(slices.Sorted(maps.Keys(groups[g]))), ", "))
	}
	b.WriteString("  - level: None\n")
	return b.Bytes(), nil
}

// withSubresources adds "r/*" after each resource r: a policy's "ingresses" does not select
// "ingresses/status", the subresource an ingress controller writes at the removed version.
func withSubresources(resources []string) []string {
	out := make([]string, 0, 2*len(resources))
	for _, r := range resources {
		out = append(out, r, r+"/*")
	}
	return out
}
