package convert

import yaml "go.yaml.in/yaml/v3"

// policy/v1beta1 PodDisruptionBudget has policy/v1's fields, but an empty selector means the
// opposite: no pods in v1beta1, every pod of the namespace in v1
// (pkg/apis/policy/v1beta1/conversion.go). A missing selector means no pods in both.
func init() {
	register("policy/v1beta1/PodDisruptionBudget", "policy/v1/PodDisruptionBudget", pdb)
}

// pdbV1beta1Label is the label key the API server's match-all and match-none selectors use
// to carry the v1beta1 meaning through the other versions.
const pdbV1beta1Label = "pdb.kubernetes.io/deprecated-v1beta1-empty-selector-match"

func pdb(s *State) {
	spec := get(s.Obj, "spec")
	sel, k := get(spec, "selector"), keyNode(spec, "selector")
	switch {
	case sel == nil:
	case isEmptySelector(sel):
		s.Manual("/spec/selector", k, "an empty selector ({}) selects no pods in policy/v1beta1 but every pod in the namespace in policy/v1: "+
			"the budget would start to block evictions of all its pods. Write the selector of the pods it should protect, or delete the PodDisruptionBudget if it protects none")
	case mentionsV1beta1Label(sel):
		s.Manual("/spec/selector", k, "the selector uses %s, which the API server strips or rewrites: write the selector of the pods to protect", pdbV1beta1Label)
	}
}

// isEmptySelector is a selector with no requirement ({}, or empty matchLabels and
// matchExpressions), which the server's semantic equality takes for the empty selector.
func isEmptySelector(sel *yaml.Node) bool {
	if sel.Tag == "!!null" {
		return false // selector: null is a missing selector
	}
	return isEmpty(sel) || isEmpty(get(sel, "matchLabels")) && isEmpty(get(sel, "matchExpressions")) && len(sel.Content) <= 4
}

func mentionsV1beta1Label(sel *yaml.Node) bool {
	if get(get(sel, "matchLabels"), pdbV1beta1Label) != nil {
		return true
	}
	found := false
	each(get(sel, "matchExpressions"), func(_ int, e *yaml.Node) {
		found = found || scalarAt(e, "key") == pdbV1beta1Label
	})
	return found
}
