package preflight

import (
	"encoding/json"
	"strings"
	"testing"

	sigsyaml "sigs.k8s.io/yaml"

	"github.com/upgradescope/upgradescope/inventory"
)

// decode reads a YAML object as the API machinery does (sigs.k8s.io/yaml: numbers become
// float64), the shape a live collector's unstructured objects have.
func decode(t *testing.T, doc string) map[string]any {
	t.Helper()
	var obj map[string]any
	if err := sigsyaml.Unmarshal([]byte(doc), &obj); err != nil {
		t.Fatalf("decode %q: %v", doc, err)
	}
	return obj
}

// refOf names a decoded object as a collector would, at line 1 of file.
func refOf(obj map[string]any, file string) inventory.ObjectRef {
	return inventory.ObjectRef{
		Namespace: str(obj, "metadata", "namespace"), Name: str(obj, "metadata", "name"), File: file, Line: 1,
	}
}

// observeAll records each document, as a files collector would (text and line), into a
// Recorder made with opts.
func observeAll(t *testing.T, docs []string, opts ...Option) *inventory.Preflight {
	t.Helper()
	r := NewRecorder(opts...)
	for _, d := range docs {
		obj := decode(t, d)
		r.Observe(obj, refOf(obj, "m.yaml"), []byte(d))
	}
	return r.Section()
}

func TestObjectsOfKindsNotJudgedLeaveTheSectionEmpty(t *testing.T) {
	p := observeAll(t, []string{
		"apiVersion: v1\nkind: Service\nmetadata: {name: s}\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: other, namespace: kube-system}\ndata: {config.conf: 'kind: KubeProxyConfiguration'}\n",
		"apiVersion: policy/v2\nkind: PodDisruptionBudget\nmetadata: {name: future}\n",
		"apiVersion: example.com/v1\nkind: Pod\nmetadata: {name: custom}\n",
	}, FromManifests())
	if got, _ := json.Marshal(p); string(got) != "{}" {
		t.Errorf("section %s, want {}", got)
	}
}

func TestReadsNamesTheKindsObserveJudges(t *testing.T) {
	for _, tc := range []struct {
		apiVersion, kind string
		want             bool
	}{
		{"policy/v1", "PodDisruptionBudget", true},
		{"policy/v1beta1", "PodDisruptionBudget", true},
		{"v1", "Pod", true},
		{"apps/v1", "Deployment", true},
		{"batch/v1", "CronJob", true},
		{"admissionregistration.k8s.io/v1beta1", "MutatingWebhookConfiguration", true},
		{"apiregistration.k8s.io/v1", "APIService", true},
		{"apiextensions.k8s.io/v1", "CustomResourceDefinition", true},
		{"v1", "ConfigMap", true},
		{"kubelet.config.k8s.io/v1beta1", "KubeletConfiguration", true},
		{"kubeproxy.config.k8s.io/v1alpha1", "KubeProxyConfiguration", true},
		{"autoscaling/v1", "HorizontalPodAutoscaler", true},
		{"autoscaling/v2", "HorizontalPodAutoscaler", true},
		{"autoscaling/v2beta2", "HorizontalPodAutoscaler", true},
		{"keda.sh/v1alpha1", "ScaledObject", true},
		{"keda.sh/v1alpha1", "ScaledJob", false},
		{"v1", "Service", false},
		{"networking.k8s.io/v1", "Ingress", false},
		{"example.com/v1", "Deployment", false},
	} {
		if got := Reads(tc.apiVersion, tc.kind); got != tc.want {
			t.Errorf("Reads(%s, %s) = %v, want %v", tc.apiVersion, tc.kind, got, tc.want)
		}
	}
}

func TestMergingRecordersGivesWhatOneRecorderOfEveryObjectGives(t *testing.T) {
	docs := []string{
		"apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: web, namespace: shop}\nspec: {maxUnavailable: 0, selector: {matchLabels: {app: web}}}\n",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\nspec:\n  replicas: 2\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      volumes: [{name: tmp, emptyDir: {}}]\n",
		"apiVersion: v1\nkind: Pod\nmetadata: {name: debug, namespace: shop, labels: {app: web}}\nspec: {containers: [{name: c}]}\n",
		"apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata: {name: policy}\nwebhooks:\n- name: a.example.com\n  clientConfig: {service: {namespace: sec, name: policy}}\n",
	}
	one := observeAll(t, docs, FromManifests())
	merged := NewRecorder(FromManifests())
	for _, d := range docs {
		part := NewRecorder(FromManifests())
		obj := decode(t, d)
		part.Observe(obj, refOf(obj, "m.yaml"), []byte(d))
		merged.Merge(part)
	}
	want, _ := json.Marshal(one)
	got, _ := json.Marshal(merged.Section())
	if string(got) != string(want) {
		t.Errorf("merged:\n%s\nwant:\n%s", got, want)
	}
}

func TestEveryListIsCutToItsBoundAndCountsTheRest(t *testing.T) {
	r := NewRecorder(FromManifests())
	var webhooks strings.Builder
	webhooks.WriteString("apiVersion: admissionregistration.k8s.io/v1\nkind: MutatingWebhookConfiguration\nmetadata: {name: many}\nwebhooks:\n")
	for i := range inventory.MaxPreflightItems + 1 {
		webhooks.WriteString("- {name: w" + strings.Repeat("x", i%7) + ", clientConfig: {service: {namespace: a, name: b}}}\n")
	}
	obj := decode(t, webhooks.String())
	r.Observe(obj, refOf(obj, "m.yaml"), nil)
	for i := range inventory.MaxPreflightItems + 5 {
		doc := "apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: p" + strings.Repeat("0", i%3) + itoa(i) + "}\nspec: {minAvailable: 1}\n"
		obj := decode(t, doc)
		r.Observe(obj, refOf(obj, "m.yaml"), nil)
	}
	p := r.Section()
	if len(p.Webhooks) != inventory.MaxPreflightItems || p.WebhooksOmitted != 1 {
		t.Errorf("%d webhooks listed, %d omitted; want %d and 1", len(p.Webhooks), p.WebhooksOmitted, inventory.MaxPreflightItems)
	}
	if len(p.DisruptionBudgets) != inventory.MaxPreflightItems || p.DisruptionBudgetsOmitted != 5 {
		t.Errorf("%d budgets listed, %d omitted; want %d and 5", len(p.DisruptionBudgets), p.DisruptionBudgetsOmitted, inventory.MaxPreflightItems)
	}
	doc := &inventory.Document{
		SchemaVersion: inventory.SchemaVersion, Source: inventory.SourceFiles, ClusterID: "files",
		APIUsage: []inventory.APIUsage{}, Capabilities: map[string]inventory.Capability{}, Preflight: p,
	}
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := inventory.Validate(data); err != nil {
		t.Errorf("the bounded section is refused by the schema: %v", err)
	}
}

func itoa(i int) string {
	b, _ := json.Marshal(i)
	return string(b)
}

// FuzzObserveKeepsTheSectionWithinTheSchema feeds any YAML object, as a collector decodes it,
// with its text: Observe never panics and the section it makes is one the schema accepts.
func FuzzObserveKeepsTheSectionWithinTheSchema(f *testing.F) {
	for _, seed := range []string{
		apiserver,
		"apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata: {name: p}\nspec: {minAvailable: -3, selector: {matchExpressions: [{key: a, operator: In}]}}\n",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: d}\nspec: {replicas: -1, template: {spec: {affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: kubernetes.io/hostname, labelSelector: {}}]}}}}}\n",
		"apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata: {name: v}\nwebhooks: [{name: w, timeoutSeconds: -5, clientConfig: {service: {port: -1}}, rules: [{operations: [1, 2]}]}]\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: kube-proxy}\ndata: {config.conf: \"kind: KubeProxyConfiguration\\nfeatureGates: {A: yes, B: 1}\\nmode: [x]\"}\n",
		"apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nfeatureGates: [A]\nfailCgroupV1: 1\n",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		var obj map[string]any
		if sigsyaml.Unmarshal([]byte(doc), &obj) != nil || obj == nil {
			return
		}
		for _, opts := range [][]Option{nil, {FromManifests()}} {
			r := NewRecorder(opts...)
			r.Observe(obj, inventory.ObjectRef{Name: "x", File: "f.yaml", Line: 1}, []byte(doc))
			data, err := json.Marshal(&inventory.Document{
				SchemaVersion: inventory.SchemaVersion, Source: inventory.SourceFiles, ClusterID: "files",
				APIUsage: []inventory.APIUsage{}, Capabilities: map[string]inventory.Capability{}, Preflight: r.Section(),
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := inventory.Validate(data); err != nil {
				t.Errorf("the section is refused: %v\n%s", err, data)
			}
		}
	})
}

// project keeps of obj only the subtrees at paths, with its apiVersion and kind, as a
// collector converting no more than Subtrees would.
func project(obj map[string]any, paths [][]string) map[string]any {
	out := map[string]any{"apiVersion": obj["apiVersion"], "kind": obj["kind"]}
	for _, p := range paths {
		v, ok := any(obj), true
		for _, k := range p {
			m, isMap := v.(map[string]any)
			if v, ok = m[k]; !isMap || !ok {
				break
			}
		}
		if !ok {
			continue
		}
		into := out
		for _, k := range p[:len(p)-1] {
			next, ok := into[k].(map[string]any)
			if !ok {
				next = map[string]any{}
				into[k] = next
			}
			into = next
		}
		into[p[len(p)-1]] = v
	}
	return out
}

func TestObservingTheSubtreesRecordsWhatTheWholeObjectDoes(t *testing.T) {
	docs := []string{
		apiserver,
		"apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: kube-system, labels: {tier: control-plane, app: x}, annotations: {kubernetes.io/config.mirror: m}, ownerReferences: [{apiVersion: v1, kind: Node, name: n, controller: true}]}\nspec: {nodeName: n1, volumes: [{name: v, emptyDir: {}}], containers: [{name: kube-proxy, command: [kube-proxy, --proxy-mode=ipvs]}]}\nstatus: {phase: Running}\n",
		"apiVersion: v1\nkind: Pod\nmetadata: {name: bare, namespace: shop, labels: {app: web}}\nspec: {volumes: [{name: v, emptyDir: {}}]}\nstatus: {phase: Pending}\n",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\nspec:\n  replicas: 3\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      volumes: [{name: tmp, emptyDir: {}}]\n      affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: web}}}]}}\n      topologySpreadConstraints: [{maxSkew: 1, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: web}}}]\n",
		"apiVersion: batch/v1\nkind: CronJob\nmetadata: {name: nightly, namespace: shop}\nspec: {jobTemplate: {spec: {template: {metadata: {labels: {app: web}}, spec: {volumes: [{name: scratch, emptyDir: {}}]}}}}}\n",
		"apiVersion: v1\nkind: ReplicationController\nmetadata: {name: old, namespace: shop}\nspec: {replicas: 2, template: {metadata: {labels: {app: web}}}}\n",
		"apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: kube-proxy, namespace: kube-system}\nspec: {template: {metadata: {labels: {k8s-app: kube-proxy}}, spec: {containers: [{name: kube-proxy, args: [--proxy-mode=nftables]}], volumes: [{name: v, emptyDir: {}}]}}}\n",
		"apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: web, namespace: shop}\nspec: {maxUnavailable: 0, selector: {matchLabels: {app: web}}}\n",
	}
	for _, opts := range [][]Option{nil, {FromManifests()}} {
		whole, projected := NewRecorder(opts...), NewRecorder(opts...)
		for _, d := range docs {
			obj := decode(t, d)
			ref := refOf(obj, "m.yaml")
			whole.Observe(obj, ref, []byte(d))
			if paths := Subtrees(str(obj, "apiVersion"), str(obj, "kind")); paths != nil {
				obj = project(obj, paths)
			}
			projected.Observe(obj, ref, []byte(d))
		}
		w, _ := json.Marshal(whole.Section())
		p, _ := json.Marshal(projected.Section())
		if string(w) != string(p) {
			t.Errorf("from the subtrees:\n%s\nfrom the whole objects:\n%s", p, w)
		}
		if !strings.Contains(string(w), "anti-affinity") || !strings.Contains(string(w), "nftables") || !strings.Contains(string(w), `"localStorage":{"count":`) {
			t.Errorf("the documents did not exercise the readers: %s", w)
		}
	}
}
