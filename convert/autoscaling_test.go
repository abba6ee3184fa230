package convert_test

import "testing"

func TestHorizontalPodAutoscalersMoveToAutoscalingV2(t *testing.T) {
	hpa := "apiVersion: autoscaling/v2beta1\nkind: HorizontalPodAutoscaler\nmetadata: {name: a}\nspec:\n  maxReplicas: 3\n  metrics:\n    - "
	runSteps(t, []stepCase{
		{
			name: "a resource utilization target becomes a Utilization target",
			in:   hpa + "type: Resource\n      resource: {name: cpu, targetAverageUtilization: 70}",
			want: []string{"target:\n          type: Utilization\n          averageUtilization: 70"}, absent: []string{"targetAverage"},
		},
		{
			name: "a resource average value becomes an AverageValue target",
			in:   hpa + "type: Resource\n      resource: {name: memory, targetAverageValue: 1Gi}",
			want: []string{"type: AverageValue\n          averageValue: 1Gi"},
		},
		{
			name: "a pods metric's name and selector become its metric identifier",
			in:   hpa + "type: Pods\n      pods: {metricName: rps, selector: {matchLabels: {a: b}}, targetAverageValue: 10}",
			want: []string{"metric:\n          name: rps\n          selector:\n            matchLabels:\n              a: b", "type: AverageValue\n          averageValue: 10"},
		},
		{
			name: "an object metric's target becomes describedObject and its value a Value target",
			in:   hpa + "type: Object\n      object: {target: {kind: Service, name: s}, metricName: q, targetValue: 5}",
			want: []string{"describedObject:\n          kind: Service\n          name: s", "type: Value\n          value: 5"},
		},
		{
			name: "an object metric with an average value keeps the value beside it, as the server does",
			in:   hpa + "type: Object\n      object: {target: {kind: Service, name: s}, metricName: q, targetValue: 5, averageValue: 2}",
			want: []string{"type: AverageValue\n          value: 5\n          averageValue: 2"},
		},
		{
			name: "an external metric with a value is a Value target, without one an AverageValue target",
			in:   hpa + "type: External\n      external: {metricName: m, metricSelector: {matchLabels: {q: x}}, targetValue: 7}\n    - type: External\n      external: {metricName: n, targetAverageValue: 3}",
			want: []string{"metric:\n          name: m\n          selector:\n            matchLabels:\n              q: x", "type: Value\n          value: 7", "type: AverageValue\n          averageValue: 3"},
		},
		{
			name:   "a null utilization is unset, so the average value sets the target's type",
			in:     hpa + "type: Resource\n      resource: {name: memory, targetAverageUtilization: null, targetAverageValue: 1Gi}",
			want:   []string{"target:\n          type: AverageValue\n          averageValue: 1Gi"},
			absent: []string{"Utilization", "null"},
		},
		{
			name: "a container metric keeps its container, which the server's conversion drops",
			in:   hpa + "type: ContainerResource\n      containerResource: {name: cpu, container: app, targetAverageUtilization: 50}",
			want: []string{"container: app"}, note: "drops containerResource.container",
		},
		{
			name:   "a v2beta2 HPA with a round-trip annotation is left to a person",
			in:     "apiVersion: autoscaling/v2beta2\nkind: HorizontalPodAutoscaler\nmetadata:\n  name: a\n  annotations: {autoscaling.alpha.kubernetes.io/behavior: '{}'}\nspec: {maxReplicas: 3}",
			manual: "autoscaling.alpha.kubernetes.io/behavior",
		},
		{
			name: "a v2beta2 HPA changes only its apiVersion",
			in:   "apiVersion: autoscaling/v2beta2\nkind: HorizontalPodAutoscaler\nmetadata: {name: a}\nspec: {maxReplicas: 3}",
			want: []string{"apiVersion: autoscaling/v2\n"},
		},
	})
}
