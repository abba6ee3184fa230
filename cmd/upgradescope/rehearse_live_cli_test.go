package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	helmaction "helm.sh/helm/v4/pkg/action"
	chartcommon "helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	"helm.sh/helm/v4/pkg/kube"
	"helm.sh/helm/v4/pkg/release/common"
	releasev1 "helm.sh/helm/v4/pkg/release/v1"
	"helm.sh/helm/v4/pkg/storage/driver"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/yaml"

	"github.com/upgradescope/upgradescope/collectors/cluster"
	"github.com/upgradescope/upgradescope/internal/testenv/kbtest"
	"github.com/upgradescope/upgradescope/internal/testenv/kubetest"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/report"
)

// liveApp is an application as users' clusters hold it, each object written by the manager
// that writes it there: "csa" is kubectl's client-side apply (the object created with its
// last-applied-configuration, as manager kubectl-client-side-apply), "ssa" server-side apply
// (kubectl apply --server-side). NS is the test's namespace, and the prefix of every
// cluster-scoped name. Status and what controllers would write (none runs on the test
// server) are written as those controllers would: the bare Pod's node, the claim's binding.
var liveApp = []struct{ how, yaml string }{
	{"csa", `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, labels: {app: web}}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      serviceAccountName: web
      containers: [{name: web, image: registry.example.com/web:1.4, ports: [{containerPort: 8080}],
        envFrom: [{configMapRef: {name: web-config}}, {secretRef: {name: web-secret}}]}]
      imagePullSecrets: [{name: registry}]`},
	{"csa", `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  serviceName: db
  replicas: 1
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers: [{name: db, image: registry.example.com/postgres:16, volumeMounts: [{name: data, mountPath: /var/lib/postgresql}]}]
  volumeClaimTemplates:
  - metadata: {name: data}
    spec: {accessModes: [ReadWriteOnce], storageClassName: NS-fast, resources: {requests: {storage: 1Gi}}}`},
	{"ssa", `apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      tolerations: [{operator: Exists}]
      containers: [{name: agent, image: registry.example.com/agent:2}]`},
	{"ssa", `apiVersion: batch/v1
kind: Job
metadata: {name: migrate}
spec:
  backoffLimit: 2
  template:
    metadata: {labels: {app: migrate}}
    spec:
      restartPolicy: Never
      containers: [{name: migrate, image: registry.example.com/web:1.4, args: [migrate]}]`},
	{"ssa", `apiVersion: batch/v1
kind: CronJob
metadata: {name: report}
spec:
  schedule: "0 3 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers: [{name: report, image: registry.example.com/report:1}]`},
	{"csa", `apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: 8080}]`},
	{"ssa", `apiVersion: v1
kind: Service
metadata: {name: db}
spec:
  clusterIP: None
  selector: {app: db}
  ports: [{port: 5432}]`},
	{"csa", `apiVersion: v1
kind: Service
metadata: {name: web-nodeport}
spec:
  type: NodePort
  selector: {app: web}
  ports: [{port: 80, targetPort: 8080}]`},
	{"ssa", `apiVersion: v1
kind: Service
metadata: {name: web-public}
spec:
  type: LoadBalancer
  externalTrafficPolicy: Local
  selector: {app: web}
  ports: [{port: 443, targetPort: 8080}]`},
	{"csa", `apiVersion: v1
kind: ConfigMap
metadata: {name: web-config}
data: {LOG_LEVEL: info}`},
	{"csa", `apiVersion: v1
kind: Secret
metadata: {name: web-secret}
type: Opaque
stringData: {password: hunter2}`},
	{"csa", `apiVersion: v1
kind: Secret
metadata: {name: registry}
type: kubernetes.io/dockerconfigjson
data: {.dockerconfigjson: eyJhdXRocyI6eyJyZWdpc3RyeS5leGFtcGxlLmNvbSI6eyJhdXRoIjoiZFhObGNqcHdZWE56In19fQ==}`},
	{"ssa", `apiVersion: v1
kind: ServiceAccount
metadata: {name: web}
imagePullSecrets: [{name: registry}]`},
	{"csa", `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: web}
rules: [{apiGroups: [""], resources: [configmaps], verbs: [get, list, watch]}]`},
	{"csa", `apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: web}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: web}
subjects: [{kind: ServiceAccount, name: web, namespace: NS}]`},
	{"ssa", `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: NS-reader}
rules: [{apiGroups: [""], resources: [nodes], verbs: [get, list]}]`},
	{"ssa", `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: NS-reader}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: NS-reader}
subjects: [{kind: ServiceAccount, name: web, namespace: NS}]`},
	{"ssa", `apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: NS-fast}
provisioner: fast.example.com
reclaimPolicy: Retain
volumeBindingMode: WaitForFirstConsumer
allowVolumeExpansion: true`},
	// A claim bound to a volume, as the volume binder leaves both.
	{"csa", `apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: uploads
  annotations: {pv.kubernetes.io/bind-completed: "yes", pv.kubernetes.io/bound-by-controller: "yes"}
spec:
  accessModes: [ReadWriteOnce]
  storageClassName: NS-fast
  resources: {requests: {storage: 2Gi}}
  volumeName: NS-uploads`},
	{"ssa", `apiVersion: v1
kind: PersistentVolume
metadata:
  name: NS-uploads
  annotations: {pv.kubernetes.io/bound-by-controller: "yes", pv.kubernetes.io/provisioned-by: fast.example.com}
spec:
  capacity: {storage: 2Gi}
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: Retain
  storageClassName: NS-fast
  csi: {driver: fast.example.com, volumeHandle: vol-0123}
  claimRef: {apiVersion: v1, kind: PersistentVolumeClaim, namespace: NS, name: uploads, uid: 6b0c1f6e-0000-4000-8000-000000000001, resourceVersion: "4242"}`},
	{"ssa", `apiVersion: networking.k8s.io/v1
kind: IngressClass
metadata: {name: NS-nginx}
spec: {controller: k8s.io/ingress-nginx}`},
	{"csa", `apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: web}
spec:
  ingressClassName: NS-nginx
  tls: [{hosts: [shop.example.com], secretName: web-secret}]
  rules:
  - host: shop.example.com
    http: {paths: [{path: /, pathType: Prefix, backend: {service: {name: web, port: {number: 80}}}}]}`},
	{"csa", `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: db}
spec:
  podSelector: {matchLabels: {app: db}}
  policyTypes: [Ingress]
  ingress: [{from: [{podSelector: {matchLabels: {app: web}}}], ports: [{port: 5432}]}]`},
	{"ssa", `apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web}
spec: {minAvailable: 1, selector: {matchLabels: {app: web}}}`},
	{"ssa", `apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 2
  maxReplicas: 10
  metrics: [{type: Resource, resource: {name: cpu, target: {type: Utilization, averageUtilization: 70}}}]`},
	{"ssa", `apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: NS-high}
value: 100000
description: shop's critical pods`},
	{"ssa", `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.NS.example.com}
spec:
  group: NS.example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, properties: {size: {type: integer, minimum: 1}, color: {type: string}}}`},
	{"ssa", `apiVersion: NS.example.com/v1
kind: Widget
metadata: {name: blue}
spec: {size: 3, color: blue}`},
	// It judges only the test's own custom resources, and fails open: the shared server
	// serves other tests.
	{"ssa", `apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: NS-widgets}
webhooks:
- name: widgets.NS.example.com
  admissionReviewVersions: [v1]
  sideEffects: None
  failurePolicy: Ignore
  timeoutSeconds: 2
  clientConfig:
    service: {namespace: NS, name: web, path: /validate, port: 443}
    caBundle: LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJrVENCK3dJSkFLSGRmTHdhYkxiMU1BMEdDU3FHU0liM0RRRUJDd1VBTUJFeER6QU5CZ05WQkFNTUJuUmxjM1JqWVRBZUZ3MHlOREF4TURFd01EQXdNREJhRncwek5EQXhNREV3TURBd01EQmFNQkV4RHpBTkJnTlZCQU1NQm5SbGMzUmpZVEJjTUEwR0NTcUdTSWIzRFFFQkFRVUFBMHNBTUVnQ1FRQ3kKLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo=
  rules: [{apiGroups: [NS.example.com], apiVersions: ["*"], operations: [CREATE, UPDATE], resources: [widgets]}]`},
	{"csa", `apiVersion: v1
kind: ResourceQuota
metadata: {name: compute}
spec: {hard: {requests.cpu: "8", requests.memory: 16Gi, pods: "50"}}`},
	{"csa", `apiVersion: v1
kind: LimitRange
metadata: {name: defaults}
spec: {limits: [{type: Container, default: {cpu: 500m, memory: 256Mi}, defaultRequest: {cpu: 100m, memory: 128Mi}}]}`},
	// A bare Pod, its node written as the scheduler writes it (no scheduler runs here).
	{"csa", `apiVersion: v1
kind: Pod
metadata: {name: debug, labels: {app: debug}}
spec:
  nodeName: node-1
  priorityClassName: NS-high
  containers: [{name: debug, image: registry.example.com/toolbox:1, command: [sleep, infinity]}]`},
}

// chartTemplates are a chart the Helm SDK installs, as `helm install` does.
var chartTemplates = map[string]string{
	"templates/deployment.yaml": `apiVersion: apps/v1
kind: Deployment
metadata: {name: {{ .Release.Name }}-api, labels: {app.kubernetes.io/instance: {{ .Release.Name }}}}
spec:
  selector: {matchLabels: {app.kubernetes.io/name: api}}
  template:
    metadata: {labels: {app.kubernetes.io/name: api}}
    spec: {containers: [{name: api, image: registry.example.com/api:3}]}`,
	"templates/service.yaml": `apiVersion: v1
kind: Service
metadata: {name: {{ .Release.Name }}-api}
spec: {selector: {app.kubernetes.io/name: api}, ports: [{port: 80}]}`,
	"templates/configmap.yaml": `apiVersion: v1
kind: ConfigMap
metadata: {name: {{ .Release.Name }}-api}
data: {mode: production}`,
}

// legacyReleaseManifest is a release installed before 1.22, its stored Ingress at an API the
// target no longer serves.
const legacyReleaseManifest = `---
# Source: legacy/templates/ingress.yaml
apiVersion: extensions/v1beta1
kind: Ingress
metadata:
  name: legacy
spec:
  rules:
  - host: legacy.example.com
    http:
      paths:
      - path: /
        backend: {serviceName: web, servicePort: 80}
`

// liveFixture is what one test made on the shared server.
type liveFixture struct {
	ns   string
	keys []string // "Kind/namespace/name" of every object the rehearsal must replay
}

func TestRehearseLiveReplaysAClustersApplicationAndTheTargetAcceptsAllOfIt(t *testing.T) {
	kubeconfig := kubetest.Kubeconfig(t, kubetest.EnvServer)
	bins := kubetest.Binaries(t)
	fx := seedLiveApp(t, kubeconfig)

	t.Run("every object of the application is collected for the replay", func(t *testing.T) {
		lf := &liveFlags{kubeconfig: kubeconfig, context: "admin", requestTimeout: cluster.DefaultRequestTimeout, timeout: time.Minute}
		objs, skipped, err := lf.collectRehearsal(context.Background(), rehearseLiveFlags{maxObjects: cluster.DefaultRehearsalMaxObjects}, kbtest.Builtin(t), "1.35")
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]bool{}
		for _, o := range objs {
			got[o.Obj.GetKind()+"/"+o.Obj.GetNamespace()+"/"+o.Obj.GetName()] = true
		}
		for _, k := range fx.keys {
			if !got[k] {
				t.Errorf("%s not collected", k)
			}
		}
		for _, s := range skipped {
			if fx.mine(s.Namespace, s.Name) {
				t.Errorf("%s %s/%s skipped: %s: %s", s.Kind, s.Namespace, s.Name, s.Reason, s.Message)
			}
		}
	})

	t.Run("the 1.35 API server accepts every object: no rehearsal finding names one", func(t *testing.T) {
		res := runCLI(t, "rehearse", "--kubeconfig", kubeconfig, "--target", "1.35", "--kube-binaries", bins, "-o", "json", "-q")
		if res.code != exitOK && res.code != exitGate {
			t.Fatalf("exit %d; stderr:\n%s", res.code, res.stderr)
		}
		var rep report.Report
		if err := json.Unmarshal([]byte(res.stdout), &rep); err != nil {
			t.Fatalf("%v\n%s", err, res.stdout)
		}
		for _, f := range rep.Targets[0].Findings {
			for _, o := range f.Objects {
				if f.Category == "rehearsal" && fx.mine(o.Namespace, o.Name) {
					t.Errorf("false blocker: %s", f.Title)
				}
			}
		}
	})

	t.Run("the rehearsal section lists none of them as refused or not replayed", func(t *testing.T) {
		sec := rehearsalSection(t, kubeconfig, bins)
		if sec.Target != "1.35" || sec.Objects < len(fx.keys) || sec.Accepted+len(sec.Rejections)+sec.RejectionsOmitted+len(sec.NotReplayed)+sec.NotReplayedOmitted != sec.Objects {
			t.Errorf("section counts %d objects, %d accepted, %d refused, %d not replayed; want at least the application's %d, every one answered",
				sec.Objects, sec.Accepted, len(sec.Rejections), len(sec.NotReplayed), len(fx.keys))
		}
		if sec.RejectionsOmitted+sec.NotReplayedOmitted > 0 {
			t.Fatalf("the section's lists are cut (%d, %d omitted): the test cannot see every object", sec.RejectionsOmitted, sec.NotReplayedOmitted)
		}
		for _, o := range append(sec.Rejections, sec.NotReplayed...) {
			if fx.mine(o.Namespace, o.Name) {
				t.Errorf("%s %s/%s (%s, as %s): %s: %s", o.Kind, o.Namespace, o.Name, o.APIVersion, o.FieldManager, o.Reason, o.Message)
			}
		}
	})

	t.Run("the cluster being scanned is refused as the rehearsal's test cluster", func(t *testing.T) {
		res := runCLI(t, "rehearse", "--kubeconfig", kubeconfig, "--target", "1.35", "--rehearse-kubeconfig", kubeconfig, "-o", "json", "-q")
		if res.code != exitErr || !strings.Contains(res.stderr, "--rehearse-kubeconfig "+kubeconfig) || !strings.Contains(res.stderr, "scanned") {
			t.Errorf("exit %d, stderr %q; want 1 and a message that the scanned cluster is never the rehearsal's", res.code, res.stderr)
		}
	})
}

// rehearsalSection runs rehearse --print-input and reads the rehearsal section it judges.
func rehearsalSection(t *testing.T, kubeconfig, bins string) *inventory.Rehearsal {
	t.Helper()
	res := runCLI(t, "rehearse", "--kubeconfig", kubeconfig, "--target", "1.35", "--kube-binaries", bins, "--print-input", "-q")
	if res.code != exitOK {
		t.Fatalf("exit %d; stderr:\n%s", res.code, res.stderr)
	}
	var in struct {
		Inventory struct {
			Rehearsal *inventory.Rehearsal `json:"rehearsal"`
		} `json:"inventory"`
	}
	if err := json.Unmarshal([]byte(res.stdout), &in); err != nil || in.Inventory.Rehearsal == nil {
		t.Fatalf("no rehearsal section in the input (%v):\n%.2000s", err, res.stdout)
	}
	return in.Inventory.Rehearsal
}

// mine says whether an object is one the test made: in its namespace, or cluster-scoped and
// named after it.
func (fx liveFixture) mine(namespace, name string) bool {
	return namespace == fx.ns || namespace == "" && (name == fx.ns || strings.HasPrefix(name, fx.ns+"-") || strings.Contains(name, "."+fx.ns+"."))
}

// seedLiveApp makes the application in a new namespace, installs a chart with the Helm SDK,
// stores a release from before 1.22, and removes all of it when the test ends.
func seedLiveApp(t *testing.T, kubeconfig string) liveFixture {
	t.Helper()
	cfg := kubetest.Config(t, kubetest.EnvServer, "admin")
	cfg.WarningHandler = rest.NoWarnings{} // the cleanup's deletes of deprecated resources
	c := kubernetes.NewForConfigOrDie(cfg)
	dyn := dynamic.NewForConfigOrDie(cfg)
	ns := fmt.Sprintf("livetest-%d", time.Now().UnixNano()%1e6)
	fx := liveFixture{ns: ns}
	ctx := context.Background()
	nsObj := decodeLive(t, "apiVersion: v1\nkind: Namespace\nmetadata: {name: NS}", ns)
	if _, err := dyn.Resource(namespacesResource).Create(ctx, nsObj, metav1.CreateOptions{FieldManager: "kubectl-create"}); err != nil {
		t.Fatal(err)
	}
	fx.keys = append(fx.keys, "Namespace//"+ns)
	var clusterScoped []*unstructured.Unstructured
	t.Cleanup(func() { cleanLiveApp(c, dyn, ns, clusterScoped) })
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(c.Discovery()))
	for _, o := range liveApp {
		obj := decodeLive(t, o.yaml, ns)
		m := mappingOf(t, mapper, obj)
		res := dyn.Resource(m.Resource)
		var ri dynamic.ResourceInterface = res
		if m.Scope.Name() == meta.RESTScopeNameNamespace {
			obj.SetNamespace(ns)
			ri = res.Namespace(ns)
		} else {
			clusterScoped = append(clusterScoped, obj)
		}
		writeLive(t, ri, o.how, obj)
		if obj.GetKind() == "CustomResourceDefinition" {
			waitEstablished(t, dyn, obj.GetName())
			mapper.Reset()
		}
		fx.keys = append(fx.keys, obj.GetKind()+"/"+obj.GetNamespace()+"/"+obj.GetName())
	}
	fx.keys = append(fx.keys, installChart(t, kubeconfig, ns)...)
	legacy := &releasev1.Release{Name: "legacy", Namespace: ns, Version: 3, Info: &releasev1.Info{Status: common.StatusDeployed},
		Chart: &chart.Chart{Metadata: &chart.Metadata{APIVersion: "v2", Name: "legacy", Version: "0.9.0"}}, Manifest: legacyReleaseManifest}
	if err := driver.NewSecrets(c.CoreV1().Secrets(ns)).Create("sh.helm.release.v1.legacy.v3", legacy); err != nil {
		t.Fatal(err)
	}
	fx.keys = append(fx.keys, "Ingress/"+ns+"/legacy")
	return fx
}

var (
	namespacesResource = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	crdResource        = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
)

func decodeLive(t *testing.T, text, ns string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(strings.ReplaceAll(text, "NS", ns)), &u.Object); err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	return u
}

func mappingOf(t *testing.T, mapper meta.RESTMapper, obj *unstructured.Unstructured) *meta.RESTMapping {
	t.Helper()
	gvk := obj.GroupVersionKind()
	m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		t.Fatalf("%s: %v", gvk, err)
	}
	return m
}

// writeLive writes obj as its manager does: kubectl's client-side apply creates it with the
// configuration it sent in the last-applied annotation; server-side apply applies it.
func writeLive(t *testing.T, ri dynamic.ResourceInterface, how string, obj *unstructured.Unstructured) {
	t.Helper()
	var err error
	switch how {
	case "csa":
		applied, jerr := obj.MarshalJSON()
		if jerr != nil {
			t.Fatal(jerr)
		}
		ann := obj.GetAnnotations()
		if ann == nil {
			ann = map[string]string{}
		}
		ann["kubectl.kubernetes.io/last-applied-configuration"] = string(applied) + "\n"
		obj.SetAnnotations(ann)
		_, err = ri.Create(context.Background(), obj, metav1.CreateOptions{FieldManager: "kubectl-client-side-apply"})
	case "ssa":
		_, err = ri.Apply(context.Background(), obj.GetName(), obj, metav1.ApplyOptions{FieldManager: "kubectl", Force: true})
	}
	if err != nil {
		t.Fatalf("%s %s/%s: %v", obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
	}
}

func waitEstablished(t *testing.T, dyn dynamic.Interface, name string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	res := dyn.Resource(crdResource)
	for time.Now().Before(deadline) {
		u, err := res.Get(context.Background(), name, metav1.GetOptions{})
		if err == nil {
			conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
			for _, c := range conds {
				if m, ok := c.(map[string]any); ok && m["type"] == "Established" && m["status"] == "True" {
					return
				}
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("CRD %s not established", name)
}

// installChart installs a chart of chartTemplates with the Helm SDK's install action, as
// `helm install` does (server-side apply, Helm's default), and names the objects it made.
func installChart(t *testing.T, kubeconfig, ns string) []string {
	t.Helper()
	flags := genericclioptions.NewConfigFlags(false)
	kubeContext := "admin"
	flags.KubeConfig, flags.Context, flags.Namespace = &kubeconfig, &kubeContext, &ns
	cfg := helmaction.NewConfiguration()
	if err := cfg.Init(flags, ns, "secret"); err != nil {
		t.Fatal(err)
	}
	ch := &chart.Chart{Metadata: &chart.Metadata{APIVersion: "v2", Name: "api", Version: "3.1.0", AppVersion: "3"}}
	for name, text := range chartTemplates {
		ch.Templates = append(ch.Templates, &chartcommon.File{Name: name, Data: []byte(text)})
	}
	inst := helmaction.NewInstall(cfg)
	inst.ReleaseName, inst.Namespace = "shop", ns
	inst.WaitStrategy = kube.HookOnlyStrategy
	inst.Timeout = time.Minute
	inst.ServerSideApply = true
	if _, err := inst.RunWithContext(context.Background(), ch, nil); err != nil {
		t.Fatalf("helm install: %v", err)
	}
	return []string{"Deployment/" + ns + "/shop-api", "Service/" + ns + "/shop-api", "ConfigMap/" + ns + "/shop-api"}
}

// cleanLiveApp deletes what the test made. The shared server runs no controllers: the
// protection finalizers of the claim and volume are cleared, the namespace's objects deleted
// one by one and its finalizer cleared, or they stay Terminating.
func cleanLiveApp(c kubernetes.Interface, dyn dynamic.Interface, ns string, clusterScoped []*unstructured.Unstructured) {
	ctx := context.Background()
	noFinalizers := []byte(`{"metadata":{"finalizers":null}}`)
	_, _ = c.CoreV1().PersistentVolumeClaims(ns).Patch(ctx, "uploads", types.MergePatchType, noFinalizers, metav1.PatchOptions{})
	_, _ = c.CoreV1().PersistentVolumes().Patch(ctx, ns+"-uploads", types.MergePatchType, noFinalizers, metav1.PatchOptions{})
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(c.Discovery()))
	for _, o := range clusterScoped {
		if m, err := mapper.RESTMapping(o.GroupVersionKind().GroupKind(), o.GroupVersionKind().Version); err == nil {
			_ = dyn.Resource(m.Resource).Delete(ctx, o.GetName(), metav1.DeleteOptions{})
		}
	}
	lists, _ := c.Discovery().ServerPreferredNamespacedResources()
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		for _, r := range l.APIResources {
			if !strings.Contains(r.Name, "/") && slices.Contains(r.Verbs, "deletecollection") {
				_ = dyn.Resource(gv.WithResource(r.Name)).Namespace(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
			}
		}
	}
	_ = c.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{})
	if got, err := c.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{}); err == nil {
		got.Spec.Finalizers = nil
		_, _ = c.CoreV1().Namespaces().Finalize(ctx, got, metav1.UpdateOptions{})
	}
}
