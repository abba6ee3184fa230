package files

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/inventory"
)

// A kubeadm control-plane manifest directory (testdata/manifests/control-plane, as
// /etc/kubernetes/manifests holds it) gives the kube-apiserver's feature gates with the file
// and line they are set on: StructuredAuthorizationConfiguration is a gate Kubernetes 1.36
// removed, so the component would not start at 1.36. k8s.io/apiserver v0.35.0 declares it,
// GA and locked since 1.32; v0.36.0 no longer does:
//
//	https://github.com/kubernetes/apiserver/blob/v0.35.0/pkg/features/kube_features.go
//	https://github.com/kubernetes/apiserver/blob/v0.36.0/pkg/features/kube_features.go
func TestAControlPlaneManifestDirectoryGivesTheGatesWithTheirFileAndLine(t *testing.T) {
	res, err := Collect("../../testdata/manifests/control-plane", testOptions())
	if err != nil {
		t.Fatal(err)
	}
	if res.Preflight == nil {
		t.Fatal("no pre-flight section")
	}
	var got []string
	for _, c := range res.Preflight.Components {
		for _, g := range c.FeatureGates {
			got = append(got, fmt.Sprintf("%s %s %s=%v %s:%d", c.Component, c.Source, g.Name, g.Value, c.Object.File, g.Line))
		}
	}
	want := []string{
		"kube-apiserver static-pod MutatingAdmissionPolicy=true kube-apiserver.yaml:25",
		"kube-apiserver static-pod StructuredAuthorizationConfiguration=true kube-apiserver.yaml:25",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("gates\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var components []string
	for _, c := range res.Preflight.Components {
		components = append(components, fmt.Sprintf("%s %s/%s %s:%d (%d flags)", c.Component, c.Object.Namespace, c.Object.Name, c.Object.File, c.Object.Line, len(c.Flags)))
	}
	wantComponents := []string{
		"kube-apiserver kube-system/kube-apiserver kube-apiserver.yaml:1 (29 flags)",
		"kube-controller-manager kube-system/kube-controller-manager kube-controller-manager.yaml:1 (17 flags)",
		"kube-scheduler kube-system/kube-scheduler kube-scheduler.yaml:1 (5 flags)",
	}
	if strings.Join(components, "\n") != strings.Join(wantComponents, "\n") {
		t.Errorf("components\n%s\nwant\n%s", strings.Join(components, "\n"), strings.Join(wantComponents, "\n"))
	}
	if d := res.Preflight.Drain; d == nil || d.Examined != 4 || d.Unreplicated.Count != 0 || d.LocalStorage.Count != 0 {
		t.Errorf("drain %+v, want the four static pods examined and skipped as their mirrors are", d)
	}
}

// What the files collector hands the Recorder: every decoded object with its ref and text,
// whichever path read it (a YAML document, a List item, a JSON value), and kube-proxy's
// ConfigMap found by name without parsing the others.
func TestEveryDecodedObjectGoesThroughTheRecorderWithItsLines(t *testing.T) {
	res := collect(t, map[string]string{
		"apps/web.yaml": "# Source: web/templates/pdb.yaml\napiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata:\n  name: web\n  namespace: shop\nspec:\n  maxUnavailable: 0\n  selector:\n    matchLabels: {app: web}\n---\n" +
			"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: shop\nspec:\n  replicas: 2\n  selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      containers:\n      - name: web\n        image: web:1\n        args: [--port=80]\n      volumes:\n      - name: cache\n        emptyDir: {}\n",
		"hooks.json": `{"apiVersion":"v1","kind":"List","items":[` +
			`{"apiVersion":"admissionregistration.k8s.io/v1","kind":"ValidatingWebhookConfiguration","metadata":{"name":"policy"},"webhooks":[{"name":"a.example.com","failurePolicy":"Fail","clientConfig":{"service":{"namespace":"sec","name":"policy"}}}]}` +
			"]}\n",
		"proxy/cm.yaml":    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kube-proxy\n  namespace: kube-system\ndata:\n  config.conf: |-\n    apiVersion: kubeproxy.config.k8s.io/v1alpha1\n    kind: KubeProxyConfiguration\n    mode: ipvs\n    featureGates:\n      NFTablesProxyMode: false\n",
		"proxy/other.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: coredns\n  namespace: kube-system\ndata:\n  note: \"kind: KubeProxyConfiguration\"\n",
		"proxy/cm.json":    `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"kube\u002dproxy","namespace":"kube-system"},"data":{"config.conf":"kind: KubeProxyConfiguration\nmode: nftables\n"}}`,
		"list.yaml":        "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: debug, namespace: shop, labels: {app: web}}\n  spec: {containers: [{name: sh, image: busybox}]}\n",
	})
	p := res.Preflight
	if p == nil {
		t.Fatal("no pre-flight section")
	}
	data, _ := json.MarshalIndent(p, "", "  ")
	budget := p.DisruptionBudgets[0]
	if budget.Object.File != "apps/web.yaml" || budget.Object.Line != 2 || budget.Object.RenderedFrom != "web/templates/pdb.yaml" ||
		budget.MaxUnavailable != "0" || len(budget.Workloads) != 2 {
		t.Errorf("budget %+v, want web at apps/web.yaml:2 rendered from its chart, maxUnavailable 0, the Deployment and the List's Pod", budget)
	}
	if w := p.Webhooks; len(w) != 1 || w[0].Configuration.File != "hooks.json" || w[0].Configuration.Line != 1 || w[0].FailurePolicy != "Fail" {
		t.Errorf("webhooks %+v, want a.example.com from hooks.json:1", w)
	}
	if d := p.Drain; d.Examined != 2 || d.LocalStorage.Count != 1 || d.Unreplicated.Count != 1 || d.Unreplicated.Objects[0].Line != 4 {
		t.Errorf("drain %+v, want the Deployment's emptyDir and the List's bare Pod at list.yaml:4", d)
	}
	var proxies []string
	for _, c := range p.Components {
		s := fmt.Sprintf("%s %s %s:%d mode=%s", c.Component, c.Source, c.Object.File, c.Object.Line, c.ProxyMode)
		for _, g := range c.FeatureGates {
			s += fmt.Sprintf(" %s=%v@%d", g.Name, g.Value, g.Line)
		}
		proxies = append(proxies, s)
	}
	want := []string{"kube-proxy configmap proxy/cm.json:1 mode=nftables", "kube-proxy configmap proxy/cm.yaml:1 mode=ipvs NFTablesProxyMode=false@12"}
	if strings.Join(proxies, "\n") != strings.Join(want, "\n") {
		t.Errorf("components\n%s\nwant\n%s\nsection: %s", strings.Join(proxies, "\n"), strings.Join(want, "\n"), data)
	}
}

// The line scan decides alone which ConfigMaps are parsed; it may only skip one that is not
// kube-proxy's.
func TestOnlyConfigMapsThatMayBeKubeProxysAreParsed(t *testing.T) {
	for _, tc := range []struct {
		name, doc string
		parsed    bool
	}{
		{"a plain name decides", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: coredns\ndata: {a: kube-proxy}\n", false},
		{"kube-proxy's is parsed", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kube-proxy\ndata: {a: b}\n", true},
		{"a flow mapping naming another ConfigMap is not parsed", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: coredns}\ndata: {a: b}\n", false},
		{"a flow mapping naming kube-proxy is parsed", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: kube-proxy}\ndata: {a: b}\n", true},
		{"an escape that may spell the name is parsed", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: \"kube\\x2dproxy\"}\n", true},
		{"another kind is not the Recorder's concern here", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: kube-proxy\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := kubeProxyConfigMap(scanned(tc.doc)); got != tc.parsed {
				t.Errorf("parsed %v, want %v", got, tc.parsed)
			}
		})
	}
}

// scanned is one document as the line scan reads it.
func scanned(text string) *yamlDoc {
	doc := &yamlDoc{startLine: 1}
	for n, line := range strings.SplitAfter(text, "\n") {
		if line != "" {
			doc.scanLine([]byte(line), n+1)
			doc.text.WriteString(line)
		}
	}
	return doc
}

// preflightOf decodes text as a YAML file, with the fast paths (the line scan skipping
// documents, narrowing) or parsing every document whole, and answers its pre-flight section
// and whether a document could not be read.
func preflightOf(text string, every bool) (string, bool) {
	d := newFileDecoder("f.yaml", testOptions())
	d.parseEvery = every
	d.decodeYAMLStream(bufio.NewReader(strings.NewReader(text)))
	data, _ := json.Marshal(d.res.preflight.Section())
	return string(data), len(d.res.warnings) > 0
}

// FuzzPreflightReadsWhatAFullParseReads holds the fast paths to the Recorder: wherever the
// text parses, the documents the line scan skips and the subtrees narrowing drops hold
// nothing the pre-flight section would have recorded. (Text the parser refuses is warned
// about, partial, whatever the fast paths make of it.)
func FuzzPreflightReadsWhatAFullParseReads(f *testing.F) {
	for _, seed := range []string{
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: kube-proxy\n  namespace: kube-system\ndata:\n  config.conf: |\n    kind: KubeProxyConfiguration\n    mode: ipvs\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: \"kube\\x2dproxy\"}\ndata: {config.conf: \"kind: KubeProxyConfiguration\\nmode: ipvs\"}\n",
		"apiVersion: v1\nkind: Pod\nmetadata: {name: s, namespace: kube-system}\nspec:\n  containers:\n  - name: s\n    command: [kube-scheduler, --feature-gates=A=true]\n    env: [{name: A, value: b}]\n",
		"apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: kube-proxy, namespace: kube-system}\nspec:\n  template:\n    spec:\n      containers:\n      - name: kube-proxy\n        command: [!!binary a3ViZS1wcm94eQ==, --proxy-mode=ipvs]\n",
		"apiVersion: policy/v1\nkind: PodDisruptionBudget\nmetadata: {name: p, namespace: s}\nspec: {minAvailable: 1, selector: {matchLabels: {a: b}}}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: w, namespace: s}\nspec: {template: {metadata: {labels: {a: b}}}}\n---\napiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata: {name: h, namespace: s}\nspec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: w}\n  minReplicas: 3\n---\napiVersion: keda.sh/v1alpha1\nkind: ScaledObject\nmetadata: {name: k, namespace: s}\nspec:\n  scaleTargetRef:\n    name: w\n",
		"apiVersion: v1\nkind: Pod\nmetadata:\n  name: t\n  annotations:\n    \"helm.sh/hook\": test\nspec: {containers: [{name: c}]}\n",
		"apiVersion: batch/v1\nkind: Job\nmetadata: {name: j, annotations: {helm.sh/hook: pre-install}}\nspec: {template: {spec: {volumes: [{name: v, emptyDir: {}}], containers: [{name: c, image: x}]}}}\n",
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: w, namespace: s}\nspec:\n  template:\n    metadata: {labels: {a: b}}\n    spec:\n      affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{topologyKey: kubernetes.io/hostname, labelSelector: {}}]}}\n      volumes: [{name: v, emptyDir: {}}]\n---\napiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata: {name: p, namespace: s}\nspec: {maxUnavailable: 0, selector: {matchLabels: {a: b}}}\n",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		whole, unread := preflightOf(text, true)
		if unread {
			return
		}
		if fast, _ := preflightOf(text, false); fast != whole {
			t.Errorf("the fast paths recorded\n%s\nparsing every document whole\n%s\nfrom %q", fast, whole, text)
		}
	})
}

func TestAFilesInventoryAssessesThePreflightPartsManifestsShow(t *testing.T) {
	doc := Inventory(collect(t, map[string]string{"a.yaml": "apiVersion: v1\nkind: Service\nmetadata: {name: s}\n"}), time.Unix(0, 0))
	if doc.Preflight != nil {
		t.Errorf("preflight %+v from a Service alone, want none", doc.Preflight)
	}
	for _, c := range []string{inventory.CapDisruptionBudgets, inventory.CapPods, inventory.CapWebhooks, inventory.CapComponentFlags, inventory.CapKubeletConfig} {
		if got := doc.Capabilities[c]; !got.Available || got.Partial {
			t.Errorf("%s = %+v, want available: the files were read", c, got)
		}
	}
	for c, reason := range map[string]string{
		inventory.CapEndpoints:   "live only: manifests show no ready endpoints",
		inventory.CapAPIServices: "live only: manifests show no APIService availability",
		inventory.CapNodeState:   "live only: manifests show no nodes",
	} {
		if got := doc.Capabilities[c]; got.Available || got.Reason != reason {
			t.Errorf("%s = %+v, want not available: %q", c, got, reason)
		}
	}
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	if err := inventory.Validate(data); err != nil {
		t.Errorf("the inventory is refused: %v", err)
	}
}

func TestWebhooksPastTheBoundMakeTheirCapabilityPartial(t *testing.T) {
	var b strings.Builder
	b.WriteString("apiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\nmetadata: {name: many}\nwebhooks:\n")
	for i := range inventory.MaxPreflightItems + 1 {
		fmt.Fprintf(&b, "- {name: w%04d.example.com, clientConfig: {service: {namespace: a, name: b}}}\n", i)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "hooks.yaml"), []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := Collect(dir, testOptions())
	if err != nil {
		t.Fatal(err)
	}
	doc := Inventory(res, time.Unix(0, 0))
	if len(doc.Preflight.Webhooks) != inventory.MaxPreflightItems || doc.Preflight.WebhooksOmitted != 1 {
		t.Errorf("%d webhooks, %d omitted", len(doc.Preflight.Webhooks), doc.Preflight.WebhooksOmitted)
	}
	if c := doc.Capabilities[inventory.CapWebhooks]; !c.Available || !c.Partial || !strings.Contains(c.Reason, "1 webhook(s) past the 1000") {
		t.Errorf("admission-webhooks = %+v, want partial naming the webhook left out", c)
	}
	data, _ := json.Marshal(doc)
	if err := inventory.Validate(data); err != nil {
		t.Errorf("the inventory is refused: %v", err)
	}
}

func TestAPIServicesAndConversionsPastTheBoundMakeTheirCapabilityPartial(t *testing.T) {
	for _, tc := range []struct {
		name, capability, doc, reason string
	}{
		{"APIServices past the bound make api-services partial", inventory.CapAPIServices,
			"apiVersion: apiregistration.k8s.io/v1\nkind: APIService\nmetadata: {name: v1.g%04d.example.com}\nspec: {group: g%04d.example.com, version: v1, service: {namespace: a, name: b}}\n",
			"1 APIService(s) past the 1000"},
		{"conversion webhooks past the bound make crds partial", inventory.CapCRDs,
			"apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: r%04d.example.com}\nspec:\n  group: g%04d.example.com\n  names: {kind: R, plural: r}\n  scope: Namespaced\n  versions: [{name: v1, served: true, storage: true}]\n  conversion: {strategy: Webhook, webhook: {conversionReviewVersions: [v1], clientConfig: {service: {namespace: a, name: b}}}}\n",
			"1 CRD conversion webhook(s) past the 1000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			for i := range inventory.MaxPreflightItems + 1 {
				fmt.Fprintf(&b, "---\n"+tc.doc, i, i)
			}
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "many.yaml"), []byte(b.String()), 0o600); err != nil {
				t.Fatal(err)
			}
			res, err := Collect(dir, testOptions())
			if err != nil {
				t.Fatal(err)
			}
			doc := Inventory(res, time.Unix(0, 0))
			if c := doc.Capabilities[tc.capability]; !c.Partial || !strings.Contains(c.Reason, tc.reason) {
				t.Errorf("%s = %+v, want partial naming %q", tc.capability, c, tc.reason)
			}
		})
	}
}

// autoscaledApp is a Deployment without replicas an HPA scales from 3, which a budget
// guards with minAvailable 1.
const autoscaledApp = `apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web, namespace: shop}
spec:
  minAvailable: 1
  selector: {matchLabels: {app: web}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: nginx}]
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web, namespace: shop}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 3
  maxReplicas: 10
`

// chartTestPod is a chart's test Pod, as `helm create` writes it.
const chartTestPod = `apiVersion: v1
kind: Pod
metadata:
  name: "web-test-connection"
  labels: {app.kubernetes.io/name: web}
  annotations:
    "helm.sh/hook": test
spec:
  containers:
    - name: wget
      image: busybox
      command: ['wget']
      args: ['web:80']
  restartPolicy: Never
`

func TestAFilesScanKnowsAutoscaledWorkloadsAndSkipsHelmHooks(t *testing.T) {
	for _, tc := range []struct {
		name, text string
		check      func(*inventory.Preflight) string
	}{
		{"a Deployment an HPA scales is autoscaled", autoscaledApp, func(p *inventory.Preflight) string {
			if len(p.DisruptionBudgets) != 1 || len(p.DisruptionBudgets[0].Workloads) != 1 || !p.DisruptionBudgets[0].Workloads[0].Autoscaled {
				return fmt.Sprintf("budgets %+v, want web's Deployment autoscaled", p.DisruptionBudgets)
			}
			return ""
		}},
		{"a chart's test Pod is no pod a drain meets", chartTestPod, func(p *inventory.Preflight) string {
			if p != nil && p.Drain != nil {
				return fmt.Sprintf("drain %+v, want none", p.Drain)
			}
			return ""
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := collect(t, map[string]string{"a.yaml": tc.text})
			if msg := tc.check(res.Preflight); msg != "" {
				t.Error(msg)
			}
		})
	}
}
