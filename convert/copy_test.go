package convert

import (
	"fmt"
	"testing"
)

// An object is copied before a step edits it. Its aliases are expanded, so that a step reads
// the fields the API server reads; what cannot be expanded, or would be misread, is left to a
// person instead of crashing or converting wrongly.
func TestObjectsWithAliasesAndMergeKeysConvertOrAreLeftToAPerson(t *testing.T) {
	runStepCases(t, []stepCase{
		{
			name: "an alias is converted as the node it names, and the anchor is defined once",
			in: `
apiVersion: extensions/v1beta1
kind: Ingress
metadata: {name: a}
spec:
  backend: &web {serviceName: web, servicePort: 80}
  rules:
    - http:
        paths:
          - {path: /, pathType: Prefix, backend: *web}
`,
			want: `
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: a}
spec:
  defaultBackend: &web {service: {name: web, port: {number: 80}}}
  rules:
    - http:
        paths:
          - {path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}
`,
		},
		{
			name:   "an alias inside the node it names is left to a person",
			in:     "apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata: {name: a}\nspec: &s {rules: [*s]}\n",
			manual: []string{"line 4: the alias *s names a node that contains it"},
		},
		{
			name:   "aliases that expand past the bound are left to a person",
			in:     "apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata: {name: a}\n" + laughs(20),
			manual: []string{"nodes once its aliases are expanded"},
		},
		{
			name:   "a merge key is left to a person, since a step would not see the fields it brings",
			in:     "apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata: {name: a}\nspec:\n  backend:\n    <<: {serviceName: web, servicePort: 80}\n",
			manual: []string{"line 6: a merge key (<<)"},
		},
	})
}

// laughs is a spec whose last key names 2^levels nodes through aliases of aliases.
func laughs(levels int) string {
	s := "spec:\n  l0: &l0 [x, x]\n"
	for i := 1; i <= levels; i++ {
		s += fmt.Sprintf("  l%d: &l%d [*l%d, *l%d]\n", i, i, i-1, i-1)
	}
	return s
}

// A step that renames a field, or writes one, must not write a key twice: the API server
// refuses such a document, so the object is left to a person.
func TestAConversionThatWouldWriteAKeyTwiceIsLeftToAPerson(t *testing.T) {
	runStepCases(t, []stepCase{
		{
			name:   "an Ingress backend with both serviceName and service",
			in:     "apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata: {name: a}\nspec:\n  backend:\n    serviceName: web\n    servicePort: 80\n    service: {name: other}\n",
			manual: []string{`would write "service" twice`},
		},
		{
			name:   "a SubjectAccessReview with both group and groups",
			in:     "apiVersion: authorization.k8s.io/v1beta1\nkind: SubjectAccessReview\nspec: {user: a, group: [x], groups: [y]}\n",
			manual: []string{`would write "groups" twice`},
		},
	})
}
