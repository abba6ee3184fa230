package convert_test

import "testing"

func TestPodDisruptionBudgetsMoveToPolicyV1(t *testing.T) {
	pdb := "apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata: {name: a}\nspec:\n  minAvailable: 1\n"
	runSteps(t, []stepCase{
		{name: "a selector with labels is kept", in: pdb + "  selector: {matchLabels: {app: a}}", want: []string{"apiVersion: policy/v1\n", "matchLabels:\n      app: a"}},
		{name: "a missing selector means no pods in both versions", in: pdb, want: []string{"apiVersion: policy/v1\n"}},
		{name: "an empty selector is left to a person, who must know it would select every pod", in: pdb + "  selector: {}", manual: "every pod in the namespace in policy/v1"},
		{name: "empty matchLabels are an empty selector too", in: pdb + "  selector: {matchLabels: {}}", manual: "selects no pods in policy/v1beta1"},
		{name: "the server's own match label is left to a person", in: pdb + "  selector: {matchExpressions: [{key: pdb.kubernetes.io/deprecated-v1beta1-empty-selector-match, operator: DoesNotExist}]}", manual: "strips or rewrites"},
	})
}
