package preflight

import (
	"fmt"
	"testing"
)

func TestWorkloadsThatNeedANodePerReplicaArePlacements(t *testing.T) {
	const head = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\nspec:\n  replicas: 3\n  template:\n    metadata: {labels: {app: web, tier: front}}\n    spec:\n"
	for _, tc := range []struct {
		name, spec string
		want       []string
	}{
		{
			name: "a required anti-affinity on the hostname against its own pods",
			spec: "      affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: web}}}]}}\n",
			want: []string{"anti-affinity ×3"},
		},
		{
			name: "a preferred anti-affinity leaves pods a node to go to",
			spec: "      affinity: {podAntiAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 100, podAffinityTerm: {topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: web}}}}]}}\n",
		},
		{
			name: "an anti-affinity over zones is not per node",
			spec: "      affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: topology.kubernetes.io/zone, labelSelector: {matchLabels: {app: web}}}]}}\n",
		},
		{
			name: "an anti-affinity against other pods is not against its own",
			spec: "      affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: db}}}]}}\n",
		},
		{
			name: "an anti-affinity in other namespaces only is not against its own pods",
			spec: "      affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: kubernetes.io/hostname, namespaces: [other], labelSelector: {matchLabels: {app: web}}}]}}\n",
		},
		{
			name: "an anti-affinity over every namespace includes its own",
			spec: "      affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: kubernetes.io/hostname, namespaceSelector: {}, labelSelector: {matchExpressions: [{key: app, operator: Exists}]}}]}}\n",
			want: []string{"anti-affinity ×3"},
		},
		{
			name: "mismatchLabelKeys on a label its pods carry exclude them",
			spec: "      affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: kubernetes.io/hostname, mismatchLabelKeys: [tier], labelSelector: {matchLabels: {app: web}}}]}}\n",
		},
		{
			name: "a DoNotSchedule spread with maxSkew 1 over the hostname",
			spec: "      topologySpreadConstraints: [{maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: web}}, matchLabelKeys: [pod-template-hash]}]\n",
			want: []string{"topology-spread ×3"},
		},
		{
			name: "a spread that only prefers is no placement",
			spec: "      topologySpreadConstraints: [{maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: ScheduleAnyway, labelSelector: {matchLabels: {app: web}}}]\n",
		},
		{
			name: "a spread with maxSkew 2 is no placement",
			spec: "      topologySpreadConstraints: [{maxSkew: 2, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: web}}}]\n",
		},
		{
			name: "a spread without a selector counts no pod",
			spec: "      topologySpreadConstraints: [{maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule}]\n",
		},
		{
			name: "both rules are both recorded",
			spec: "      affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: web}}}]}}\n" +
				"      topologySpreadConstraints: [{maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {tier: front}}}]\n",
			want: []string{"anti-affinity ×3", "topology-spread ×3"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, p := range observeAll(t, []string{head + tc.spec}, FromManifests()).Placements {
				got = append(got, fmt.Sprintf("%s ×%d", p.Rule, p.Replicas))
				if p.Object.Kind != "Deployment" || p.Object.Name != "web" {
					t.Errorf("placement of %+v, want the Deployment", p.Object)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("placements %v, want %v", got, tc.want)
			}
		})
	}
}

func TestAPlacementsReplicasDefaultToOne(t *testing.T) {
	doc := "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db, namespace: shop}\nspec:\n  template:\n    metadata: {labels: {app: db}}\n    spec:\n      affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: db}}}]}}\n"
	p := observeAll(t, []string{doc}).Placements
	if len(p) != 1 || p[0].Replicas != 1 || p[0].Object.Kind != "StatefulSet" {
		t.Errorf("placements %+v, want the StatefulSet with 1 replica", p)
	}
}
