package preflight

import (
	"fmt"
	"testing"

	"github.com/upgradescope/upgradescope/inventory"
)

func TestPodsAreSortedAsKubectlDrainsFiltersSortThem(t *testing.T) {
	const (
		rsOwner   = "ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web-1, controller: true}]"
		dsOwner   = "ownerReferences: [{apiVersion: apps/v1, kind: DaemonSet, name: agent, controller: true}]"
		emptyDir  = "volumes: [{name: tmp, emptyDir: {}}]"
		configVol = "volumes: [{name: cfg, configMap: {name: c}}]"
	)
	for _, tc := range []struct {
		name                       string
		meta, spec, status         string
		unreplicated, localStorage bool
	}{
		{name: "a pod with no owner needs --force", unreplicated: true},
		{name: "a pod a ReplicaSet controls is evicted", meta: rsOwner},
		{name: "an owner that is no controller does not count", meta: "ownerReferences: [{apiVersion: v1, kind: ConfigMap, name: c}]", unreplicated: true},
		{name: "a DaemonSet's pod is never evicted, whatever its volumes", meta: dsOwner, spec: emptyDir},
		{name: "a pod of an extensions DaemonSet has a controller and is evicted as any other", meta: "ownerReferences: [{apiVersion: extensions/v1beta1, kind: DaemonSet, name: old, controller: true}]"},
		{name: "a mirror pod is skipped, controller or not", meta: "annotations: {kubernetes.io/config.mirror: abc}", spec: emptyDir},
		{name: "a controlled pod with an emptyDir needs --delete-emptydir-data", meta: rsOwner, spec: emptyDir, localStorage: true},
		{name: "a pod with an emptyDir and no controller needs both flags", spec: emptyDir, unreplicated: true, localStorage: true},
		{name: "a pod with only a configMap volume needs no flag", meta: rsOwner, spec: configVol},
		{name: "a pod that succeeded is deleted without a flag", spec: emptyDir, status: "phase: Succeeded"},
		{name: "a pod that failed is deleted without a flag", status: "phase: Failed"},
		{name: "a running pod is judged by its owner and volumes", spec: emptyDir, status: "phase: Running", unreplicated: true, localStorage: true},
		{name: "a finished DaemonSet pod passes the DaemonSet filter and is deleted", meta: dsOwner, spec: emptyDir, status: "phase: Succeeded"},
		{name: "a labelled control-plane pod outside kube-system is judged as any other", meta: "labels: {tier: control-plane}", unreplicated: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: shop, %s}\nspec: {containers: [{name: c}], %s}\nstatus: {%s}\n", tc.meta, tc.spec, tc.status)
			for _, opts := range [][]Option{nil, {FromManifests()}} {
				d := observeAll(t, []string{doc}, opts...).Drain
				if d == nil || d.Examined != 1 {
					t.Fatalf("drain %+v, want one pod examined", d)
				}
				if got := d.Unreplicated.Count == 1; got != tc.unreplicated {
					t.Errorf("unreplicated %+v, want %v", d.Unreplicated, tc.unreplicated)
				}
				if got := d.LocalStorage.Count == 1; got != tc.localStorage {
					t.Errorf("local storage %+v, want %v", d.LocalStorage, tc.localStorage)
				}
			}
		})
	}
}

func TestInFilesModeStaticPodManifestsAreSkippedAsTheirMirrorsWillBe(t *testing.T) {
	for _, doc := range []string{
		"apiVersion: v1\nkind: Pod\nmetadata: {name: etcd, namespace: kube-system, labels: {component: etcd, tier: control-plane}}\nspec: {containers: [{name: etcd, command: [etcd]}], volumes: [{name: d, emptyDir: {}}]}\n",
		"apiVersion: v1\nkind: Pod\nmetadata: {name: kube-scheduler}\nspec: {containers: [{name: s, command: [kube-scheduler, --v=2]}]}\n",
	} {
		files := observeAll(t, []string{doc}, FromManifests()).Drain
		if files.Unreplicated.Count != 0 || files.LocalStorage.Count != 0 {
			t.Errorf("static pod manifest in the drain lists: %+v\n%s", files, doc)
		}
		if live := observeAll(t, []string{doc}).Drain; live.Unreplicated.Count != 1 {
			t.Errorf("live, a pod without the mirror annotation is no static pod's mirror: %+v\n%s", live, doc)
		}
	}
}

func TestInFilesModeWorkloadsWithAnEmptyDirCountForThePodsTheyWillRun(t *testing.T) {
	docs := []string{
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\nspec: {template: {spec: {volumes: [{name: tmp, emptyDir: {medium: Memory}}]}}}\n",
		"apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: nightly, namespace: shop}\nspec: {jobTemplate: {spec: {template: {spec: {volumes: [{name: scratch, emptyDir: {}}]}}}}}\n",
		"apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: agent, namespace: shop}\nspec: {template: {spec: {volumes: [{name: tmp, emptyDir: {}}]}}}\n",
		"apiVersion: apps/v1\nkind: StatefulSet\nmetadata: {name: db, namespace: shop}\nspec: {template: {spec: {volumes: [{name: data, persistentVolumeClaim: {claimName: d}}]}}}\n",
	}
	files := observeAll(t, docs, FromManifests()).Drain
	want := inventory.PodList{Count: 2, Objects: []inventory.ObjectRef{
		{Kind: "CronJob", Namespace: "shop", Name: "nightly", File: "m.yaml", Line: 1},
		{Kind: "Deployment", Namespace: "shop", Name: "web", File: "m.yaml", Line: 1},
	}}
	if files == nil || files.Examined != 4 || fmt.Sprint(files.LocalStorage) != fmt.Sprint(want) || files.Unreplicated.Count != 0 {
		t.Errorf("files drain %+v, want 4 examined, local storage %+v", files, want)
	}
	if live := observeAll(t, docs).Drain; live != nil {
		t.Errorf("live drain %+v from workloads, want none: live, the pods themselves are observed", live)
	}
}

func TestAPodListCountsEveryPodAndNamesItsBound(t *testing.T) {
	var docs []string
	for i := range inventory.MaxObjectRefs + 50 {
		docs = append(docs, fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata: {name: p%03d, namespace: shop}\n", i))
	}
	d := observeAll(t, docs).Drain
	u := d.Unreplicated
	if d.Examined != len(docs) || u.Count != len(docs) || len(u.Objects) != inventory.MaxObjectRefs || u.ObjectsOmitted != 50 || u.Objects[0].Name != "p000" {
		t.Errorf("examined %d, unreplicated %d naming %d from %s, %d omitted; want %d, %d, %d from p000, 50",
			d.Examined, u.Count, len(u.Objects), u.Objects[0].Name, u.ObjectsOmitted, len(docs), len(docs), inventory.MaxObjectRefs)
	}
}

func TestHelmHooksAreNoPodsADrainMeetsInFilesModeButLivePodsStay(t *testing.T) {
	const hook = "annotations: {helm.sh/hook: test}"
	pdb := "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: web, namespace: shop}\nspec: {minAvailable: 1, selector: {matchLabels: {app: web}}}\n"
	for _, tc := range []struct {
		name                       string
		doc                        string
		manifests                  bool
		examined                   int
		unreplicated, localStorage int
		budgetWorkloads            int
	}{
		{"a chart's test Pod is no unreplicated pod",
			"apiVersion: v1\nkind: Pod\nmetadata: {name: web-test, namespace: shop, labels: {app: web}, " + hook + "}\nspec: {containers: [{name: c}], volumes: [{name: v, emptyDir: {}}]}\n",
			true, 0, 0, 0, 0},
		{"a chart's hook Job with an emptyDir needs no --delete-emptydir-data",
			"apiVersion: batch/v1\nkind: Job\nmetadata: {name: migrate, namespace: shop, annotations: {helm.sh/hook: pre-upgrade}}\nspec: {template: {metadata: {labels: {app: web}}, spec: {containers: [{name: c}], volumes: [{name: v, emptyDir: {}}]}}}\n",
			true, 0, 0, 0, 0},
		{"a chart's hook Deployment is no replica a budget counts",
			"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: hooked, namespace: shop, " + hook + "}\nspec: {template: {metadata: {labels: {app: web}}, spec: {containers: [{name: c}]}}}\n",
			true, 0, 0, 0, 0},
		{"a Pod without the annotation is still unreplicated",
			"apiVersion: v1\nkind: Pod\nmetadata: {name: web-debug, namespace: shop, labels: {app: web}}\nspec: {containers: [{name: c}]}\n",
			true, 1, 1, 0, 1},
		{"a live pod with the annotation is a real pod",
			"apiVersion: v1\nkind: Pod\nmetadata: {name: web-test, namespace: shop, labels: {app: web}, " + hook + "}\nspec: {containers: [{name: c}], volumes: [{name: v, emptyDir: {}}]}\n",
			false, 1, 1, 1, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var opts []Option
			if tc.manifests {
				opts = append(opts, FromManifests())
			}
			p := observeAll(t, []string{tc.doc, pdb}, opts...)
			var examined, unreplicated, localStorage int
			if p.Drain != nil {
				examined, unreplicated, localStorage = p.Drain.Examined, p.Drain.Unreplicated.Count, p.Drain.LocalStorage.Count
			}
			if examined != tc.examined || unreplicated != tc.unreplicated || localStorage != tc.localStorage {
				t.Errorf("drain %+v, want %d examined, %d unreplicated, %d with local storage", p.Drain, tc.examined, tc.unreplicated, tc.localStorage)
			}
			if got := len(p.DisruptionBudgets[0].Workloads); got != tc.budgetWorkloads {
				t.Errorf("the budget selects %+v, want %d workload(s)", p.DisruptionBudgets[0].Workloads, tc.budgetWorkloads)
			}
		})
	}
}
