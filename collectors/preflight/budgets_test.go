package preflight

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/upgradescope/upgradescope/inventory"
)

func TestABudgetIsRecordedAsWritten(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		want      inventory.DisruptionBudget
	}{
		{
			name: "a policy/v1 budget keeps an integer minAvailable as written",
			doc:  "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: web, namespace: shop}\nspec: {minAvailable: 2, selector: {matchLabels: {app: web}}}\n",
			want: inventory.DisruptionBudget{APIVersion: "policy/v1", MinAvailable: "2"},
		},
		{
			name: "a percentage stays a string, and the eviction policy is kept",
			doc:  "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: web, namespace: shop}\nspec: {maxUnavailable: 50%, unhealthyPodEvictionPolicy: AlwaysAllow, selector: {matchLabels: {app: web}}}\n",
			want: inventory.DisruptionBudget{APIVersion: "policy/v1", MaxUnavailable: "50%", UnhealthyPodEvictionPolicy: "AlwaysAllow"},
		},
		{
			name: "maxUnavailable 0 is recorded, not dropped as a zero value",
			doc:  "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: web, namespace: shop}\nspec: {maxUnavailable: 0}\n",
			want: inventory.DisruptionBudget{APIVersion: "policy/v1", MaxUnavailable: "0"},
		},
		{
			name: "a policy/v1beta1 budget is recorded with its apiVersion",
			doc:  "apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata: {name: web, namespace: shop}\nspec: {minAvailable: 100%, selector: {}}\n",
			want: inventory.DisruptionBudget{APIVersion: "policy/v1beta1", MinAvailable: "100%", SelectorEmpty: true},
		},
		{
			name: "an empty selector is empty, an absent one is not",
			doc:  "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: web, namespace: shop}\nspec: {minAvailable: 1}\n",
			want: inventory.DisruptionBudget{APIVersion: "policy/v1", MinAvailable: "1"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := observeAll(t, []string{tc.doc}, FromManifests())
			if len(p.DisruptionBudgets) != 1 {
				t.Fatalf("budgets %+v, want one", p.DisruptionBudgets)
			}
			got := p.DisruptionBudgets[0]
			tc.want.Object = inventory.ObjectRef{Kind: "PodDisruptionBudget", Namespace: got.Object.Namespace, Name: "web", File: "m.yaml", Line: 1}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("budget %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestBudgetSelectorsSelectAsTheDisruptionControllerDoes(t *testing.T) {
	web := map[string]string{"app": "web", "tier": "front"}
	for _, tc := range []struct {
		name, apiVersion, selector string
		want                       bool
	}{
		{"an empty policy/v1 selector selects every pod", "policy/v1", "selector: {}", true},
		{"an empty policy/v1beta1 selector selects no pod", "policy/v1beta1", "selector: {}", false},
		{"an absent selector selects no pod", "policy/v1", "", false},
		{"matchLabels select the pods carrying them", "policy/v1", "selector: {matchLabels: {app: web}}", true},
		{"matchLabels select no pod missing one", "policy/v1", "selector: {matchLabels: {app: web, tier: back}}", false},
		{"In expressions select by value", "policy/v1", "selector: {matchExpressions: [{key: tier, operator: In, values: [front, back]}]}", true},
		{"NotIn expressions exclude by value", "policy/v1", "selector: {matchExpressions: [{key: tier, operator: NotIn, values: [front]}]}", false},
		{"DoesNotExist is v1beta1's way to select every pod", "policy/v1beta1", "selector: {matchExpressions: [{key: pdb.kubernetes.io/deprecated-v1beta1-empty-selector-match, operator: DoesNotExist}]}", true},
		{"a malformed selector, which the API server refuses, selects no pod", "policy/v1", "selector: {matchLabels: [app]}", false},
		{"an unknown operator selects no pod", "policy/v1", "selector: {matchExpressions: [{key: app, operator: Like, values: [web]}]}", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obj := decode(t, "apiVersion: "+tc.apiVersion+"\nkind: PodDisruptionBudget\nmetadata: {name: b}\nspec: {"+tc.selector+"}\n")
			if got := BudgetSelectorOf(obj).Matches(web); got != tc.want {
				t.Errorf("Matches = %v, want %v", got, tc.want)
			}
		})
	}
	if (BudgetSelector{}).Matches(web) {
		t.Error("the zero BudgetSelector matches a pod, want none")
	}
}

func TestInFilesModeABudgetNamesTheWorkloadsItsSelectorMatches(t *testing.T) {
	p := observeAll(t, []string{
		"apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: web, namespace: shop}\nspec: {minAvailable: 3, selector: {matchLabels: {app: web}}}\n",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\nspec: {replicas: 3, template: {metadata: {labels: {app: web}}}}\n",
		"apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: web-cache, namespace: shop}\nspec: {template: {metadata: {labels: {app: web, role: cache}}}}\n",
		"apiVersion: v1\nkind: ReplicationController\nmetadata: {name: web-old, namespace: shop}\nspec: {replicas: 0, template: {metadata: {labels: {app: web}}}}\n",
		"apiVersion: v1\nkind: Pod\nmetadata: {name: web-debug, namespace: shop, labels: {app: web}}\n",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: staging}\nspec: {replicas: 5, template: {metadata: {labels: {app: web}}}}\n",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: api, namespace: shop}\nspec: {replicas: 5, template: {metadata: {labels: {app: api}}}}\n",
		"apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: agent, namespace: shop}\nspec: {template: {metadata: {labels: {app: web}}}}\n",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: labels-on-object-only, namespace: shop, labels: {app: web}}\nspec: {replicas: 5, template: {metadata: {labels: {app: other}}}}\n",
	}, FromManifests())
	if len(p.DisruptionBudgets) != 1 {
		t.Fatalf("budgets %+v, want one", p.DisruptionBudgets)
	}
	var got []string
	for _, w := range p.DisruptionBudgets[0].Workloads {
		got = append(got, fmt.Sprintf("%s %s/%s ×%d", w.Object.Kind, w.Object.Namespace, w.Object.Name, w.Replicas))
	}
	want := []string{"Deployment shop/web ×3", "StatefulSet shop/web-cache ×1", "Pod shop/web-debug ×1", "ReplicationController shop/web-old ×0"}
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Errorf("workloads\n%v\nwant\n%v", got, want)
	}
}

func TestABudgetsStatusIsReadLiveButNotFromManifests(t *testing.T) {
	doc := "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: web, namespace: shop}\nspec: {maxUnavailable: 1}\nstatus: {disruptionsAllowed: 0, currentHealthy: 2, desiredHealthy: 2, expectedPods: 2, observedGeneration: 1}\n"
	live := observeAll(t, []string{doc})
	want := &inventory.BudgetStatus{DisruptionsAllowed: 0, CurrentHealthy: 2, DesiredHealthy: 2, ExpectedPods: 2}
	if got := live.DisruptionBudgets[0].Status; !reflect.DeepEqual(got, want) {
		t.Errorf("live status %+v, want %+v", got, want)
	}
	if live.DisruptionBudgets[0].Workloads != nil {
		t.Errorf("live budget names workloads %+v, want none (the live collector names pods)", live.DisruptionBudgets[0].Workloads)
	}
	if files := observeAll(t, []string{doc}, FromManifests()); files.DisruptionBudgets[0].Status != nil {
		t.Errorf("a manifest's status %+v was read, want none", files.DisruptionBudgets[0].Status)
	}
}

func TestABudgetNamesAtMostItsBoundOfWorkloads(t *testing.T) {
	docs := []string{"apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: all, namespace: shop}\nspec: {minAvailable: 1, selector: {}}\n"}
	for i := range inventory.MaxPreflightNames + 3 {
		docs = append(docs, fmt.Sprintf("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d%03d, namespace: shop}\nspec: {template: {metadata: {labels: {i: %q}}}}\n", i, fmt.Sprint(i)))
	}
	b := observeAll(t, docs, FromManifests()).DisruptionBudgets[0]
	if len(b.Workloads) != inventory.MaxPreflightNames || b.WorkloadsOmitted != 3 || b.Workloads[0].Object.Name != "d000" {
		t.Errorf("%d workloads from %s, %d omitted; want %d from d000 and 3", len(b.Workloads), b.Workloads[0].Object.Name, b.WorkloadsOmitted, inventory.MaxPreflightNames)
	}
}

func TestBudgetsPastTheBoundKeepThoseThatMayBlockADrain(t *testing.T) {
	budget := func(name string, spec, status map[string]any) map[string]any {
		obj := map[string]any{"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
			"metadata": map[string]any{"name": name, "namespace": "shop"}, "spec": spec}
		if status != nil {
			obj["status"] = status
		}
		return obj
	}
	allowing := map[string]any{"maxUnavailable": int64(1)}
	allowed := func(n int64) map[string]any {
		return map[string]any{"disruptionsAllowed": n, "currentHealthy": int64(3), "desiredHealthy": int64(2), "expectedPods": int64(3)}
	}
	for _, tc := range []struct {
		name      string
		manifests bool
		blocker   map[string]any
	}{
		{"a manifest with maxUnavailable 0", true, budget("zz", map[string]any{"maxUnavailable": int64(0)}, nil)},
		{"a manifest with maxUnavailable 0%", true, budget("zz", map[string]any{"maxUnavailable": "0%"}, nil)},
		{"a manifest with minAvailable", true, budget("zz", map[string]any{"minAvailable": int64(1)}, nil)},
		{"a live budget allowing no disruption", false, budget("zz", allowing, allowed(0))},
		{"a live budget without a status", false, budget("zz", allowing, nil)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var opts []Option
			if tc.manifests {
				opts = append(opts, FromManifests())
			}
			// Two recorders merged, as a files walk's workers are.
			r, other := NewRecorder(opts...), NewRecorder(opts...)
			for i := range inventory.MaxPreflightItems {
				var status map[string]any
				if !tc.manifests {
					status = allowed(1)
				}
				into := r
				if i%2 == 1 {
					into = other
				}
				obj := budget(fmt.Sprintf("a-%04d", i), allowing, status)
				into.Observe(obj, inventory.ObjectRef{Kind: "PodDisruptionBudget", Namespace: "shop", Name: fmt.Sprintf("a-%04d", i)}, nil)
			}
			other.Observe(tc.blocker, inventory.ObjectRef{Kind: "PodDisruptionBudget", Namespace: "shop", Name: "zz"}, nil)
			r.Merge(other)
			p := r.Section()
			if len(p.DisruptionBudgets) != inventory.MaxPreflightItems || p.DisruptionBudgetsOmitted != 1 {
				t.Fatalf("%d budgets, %d omitted; want %d and 1", len(p.DisruptionBudgets), p.DisruptionBudgetsOmitted, inventory.MaxPreflightItems)
			}
			last := p.DisruptionBudgets[len(p.DisruptionBudgets)-1].Object.Name
			if last != "zz" || p.DisruptionBudgets[0].Object.Name != "a-0000" {
				t.Errorf("budgets listed from %s to %s, want from a-0000 to zz: the one that may block kept, the list by reference",
					p.DisruptionBudgets[0].Object.Name, last)
			}
		})
	}
}

func TestAWorkloadAnAutoscalerOfTheManifestsScalesIsAutoscaled(t *testing.T) {
	const (
		pdb    = "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: web, namespace: shop}\nspec: {minAvailable: 1, selector: {matchLabels: {app: web}}}\n"
		deploy = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\nspec: {template: {metadata: {labels: {app: web}}, spec: {containers: [{name: c}]}}}\n"
		sts    = "apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: web, namespace: shop}\nspec: {template: {metadata: {labels: {app: web}}, spec: {containers: [{name: c}]}}}\n"
	)
	hpa := func(apiVersion, namespace, kind, name string) string {
		return fmt.Sprintf("apiVersion: %s\nkind: HorizontalPodAutoscaler\nmetadata: {name: h, namespace: %s}\nspec: {scaleTargetRef: {apiVersion: apps/v1, kind: %s, name: %s}, minReplicas: 3, maxReplicas: 10}\n", apiVersion, namespace, kind, name)
	}
	for _, tc := range []struct {
		name      string
		docs      []string
		manifests bool
		want      bool
	}{
		{"an autoscaling/v2 HPA scales its target", []string{pdb, deploy, hpa("autoscaling/v2", "shop", "Deployment", "web")}, true, true},
		{"an autoscaling/v1 HPA scales its target", []string{pdb, deploy, hpa("autoscaling/v1", "shop", "Deployment", "web")}, true, true},
		{"an autoscaling/v2beta1 HPA scales its target", []string{pdb, deploy, hpa("autoscaling/v2beta1", "shop", "Deployment", "web")}, true, true},
		{"an autoscaling/v2beta2 HPA scales its target", []string{pdb, deploy, hpa("autoscaling/v2beta2", "shop", "Deployment", "web")}, true, true},
		{"the HPA read before its target still counts", []string{hpa("autoscaling/v2", "shop", "Deployment", "web"), pdb, deploy}, true, true},
		{"an HPA of another namespace does not", []string{pdb, deploy, hpa("autoscaling/v2", "other", "Deployment", "web")}, true, false},
		{"an HPA of another workload does not", []string{pdb, deploy, hpa("autoscaling/v2", "shop", "Deployment", "api")}, true, false},
		{"an HPA of another kind of the same name does not", []string{pdb, deploy, hpa("autoscaling/v2", "shop", "StatefulSet", "web")}, true, false},
		{"an HPA of a StatefulSet scales it", []string{pdb, sts, hpa("autoscaling/v2", "shop", "StatefulSet", "web")}, true, true},
		{"a KEDA ScaledObject without a kind scales the Deployment", []string{pdb, deploy,
			"apiVersion: keda.sh/v1alpha1\nkind: ScaledObject\nmetadata: {name: s, namespace: shop}\nspec: {scaleTargetRef: {name: web}, minReplicaCount: 2}\n"}, true, true},
		{"a KEDA ScaledObject of a StatefulSet scales it", []string{pdb, sts,
			"apiVersion: keda.sh/v1alpha1\nkind: ScaledObject\nmetadata: {name: s, namespace: shop}\nspec: {scaleTargetRef: {kind: StatefulSet, name: web}}\n"}, true, true},
		{"no autoscaler, no autoscaling", []string{pdb, deploy}, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Each document in a recorder of its own, merged, as a files walk's workers are.
			r := NewRecorder(FromManifests())
			for _, d := range tc.docs {
				one := NewRecorder(FromManifests())
				obj := decode(t, d)
				one.Observe(obj, refOf(obj, "m.yaml"), []byte(d))
				r.Merge(one)
			}
			w := r.Section().DisruptionBudgets[0].Workloads
			if len(w) != 1 || w[0].Autoscaled != tc.want {
				t.Errorf("the budget's workloads %+v, want one autoscaled %v", w, tc.want)
			}
		})
	}
}
