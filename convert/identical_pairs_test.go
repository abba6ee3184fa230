package convert

import (
	"fmt"
	"strings"
	"testing"

	"github.com/upgradescope/upgradescope/internal/testenv/kbtest"
	"github.com/upgradescope/upgradescope/inventory"
)

func TestEveryIdenticalPairChangesOnlyItsAPIVersion(t *testing.T) {
	var cases []stepCase
	for _, p := range identicalPairs {
		from, to := keyGVK(p[0]), keyGVK(p[1])
		target := lastServing(t, p[1])
		cases = append(cases, stepCase{name: p[0], target: target,
			in:   "apiVersion: " + from.APIVersion() + "\nkind: " + from.Kind + "\nmetadata:\n  name: convert-fixtures # kept\n",
			want: "apiVersion: " + finalVersion(t, from, target) + "\nkind: " + to.Kind + "\nmetadata:\n  name: convert-fixtures # kept\n"})
	}
	runStepCases(t, cases)
}

// lastServing is 1.40, or the last minor that serves the replacement when a later one removed
// it without a replacement of its own (policy/v1beta1 PodSecurityPolicy: 1.24).
func lastServing(t *testing.T, key string) string {
	e, ok := kbtest.Builtin(t).API(key)
	if !ok || e.Removed == "" || e.Replacement != "" {
		return "1.40"
	}
	v, err := inventory.ParseVersion(e.Removed)
	if err != nil {
		t.Fatalf("%s removed %q: %v", key, e.Removed, err)
	}
	return fmt.Sprintf("%d.%d", v.Major, v.Minor-1)
}

// finalVersion is the apiVersion the route from from ends at for target.
func finalVersion(t *testing.T, from GVK, target string) string {
	chain, err := Route(kbtest.Builtin(t), from, target)
	if err != nil || len(chain) == 0 {
		t.Fatalf("route of %s: %v %v", from, chain, err)
	}
	return chain[len(chain)-1].APIVersion()
}

// keyGVK parses a knowledge-base key ("core/v1/Pod").
func keyGVK(key string) GVK {
	parts := strings.Split(key, "/")
	return GVK{Group: strings.TrimPrefix(parts[0], "core"), Version: parts[1], Kind: parts[2]}
}

func TestASubjectAccessReviewsGroupsAreNamedGroupsInV1(t *testing.T) {
	runStepCases(t, []stepCase{{name: "group becomes groups", in: `
apiVersion: authorization.k8s.io/v1beta1
kind: SubjectAccessReview
spec:
  user: alice
  group: [developers] # her teams
  resourceAttributes: {verb: get, resource: pods}
`, want: `
apiVersion: authorization.k8s.io/v1
kind: SubjectAccessReview
spec:
  user: alice
  groups: [developers] # her teams
  resourceAttributes: {verb: get, resource: pods}
`}})
}
