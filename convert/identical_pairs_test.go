package convert

import (
	"strings"
	"testing"
)

func TestEveryIdenticalPairChangesOnlyItsAPIVersion(t *testing.T) {
	var cases []stepCase
	for _, p := range identicalPairs {
		from, to := keyGVK(p[0]), keyGVK(p[1])
		cases = append(cases, stepCase{name: p[0], target: "1.40",
			in:   "apiVersion: " + from.APIVersion() + "\nkind: " + from.Kind + "\nmetadata:\n  name: convert-fixtures # kept\n",
			want: "apiVersion: " + finalVersion(t, from) + "\nkind: " + to.Kind + "\nmetadata:\n  name: convert-fixtures # kept\n"})
	}
	runStepCases(t, cases)
}

// finalVersion is the apiVersion the route from from ends at for 1.40.
func finalVersion(t *testing.T, from GVK) string {
	chain, err := Route(builtinKBForSteps(t), from, "1.40")
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
