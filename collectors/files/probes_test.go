package files

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	yamlv3 "go.yaml.in/yaml/v3"
	k8syaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/util/jsonpath"

	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/kb/probe"
)

func probeSet(t *testing.T, specs ...probe.Spec) *probe.Set {
	t.Helper()
	declared := make([]probe.Declared, len(specs))
	for i, s := range specs {
		declared[i] = probe.Declared{ID: "kb/" + s.ID, Spec: s}
	}
	s, err := probe.NewSet(declared)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// heldOut is a manifest set with workloads of every template kind, Services with and without
// spec.loadBalancerIP, StorageClasses, Ingresses of both groups, numbers and booleans (YAML
// 1.1's yes and leading-zero octal among them, as Kubernetes' decoder reads them), an anchor
// with its alias and a merge key, across YAML streams, a List and a JSON file.
var heldOut = map[string]string{
	"workloads.yaml": `apiVersion: v1
kind: Pod
metadata: {name: pod, namespace: shop, labels: {app: pod, env: prod}}
spec:
  hostNetwork: true
  containers:
  - name: a
    image: shop/pod:1
    env: [{name: A, value: "1"}, {name: B}]
    ports: [{containerPort: 8080}]
---
apiVersion: v1
kind: ReplicationController
metadata: {name: rc}
spec:
  template:
    metadata:
      labels: {app: rc}
    spec:
      containers:
      - {name: a, image: "rc:1"}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  replicas: 3
  template:
    metadata:
      labels:
        app: web
        ports: "80"
    spec:
      containers:
      - &app
        name: app
        image: shop/web:1.2
        stdin: yes
        env:
        - &envA {name: A, value: "from-anchor"}
        ports:
        - containerPort: 80
        - containerPort: 443
      - <<: *app
        name: sidecar
        image: envoy:1.30
      volumes:
      - name: sock
        hostPath: {path: /var/run/docker.sock}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: ds}
spec:
  template:
    spec:
      hostNetwork: false
      containers:
      - name: agent
        image: agent:2
        env:
        - name: X
          value: "yes"
        - name: Y
          value: 'true'
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  template:
    spec:
      hostNetwork: yes
      containers: [{name: db, image: "postgres:16", ports: [{containerPort: 5432}]}]
`,
	"more/jobs.yaml": `apiVersion: batch/v1
kind: Job
metadata: {name: once}
spec:
  template:
    spec:
      containers:
      - name: j
        image: job:1
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly}
spec:
  schedule: "0 3 * * *"
  jobTemplate:
    spec:
      template:
        metadata: {labels: {app: nightly}}
        spec:
          hostNetwork: true
          containers:
          - name: c
            image: cron:1
            env: [{name: N, value: "3"}]
---
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: rs}
spec:
  template:
    spec:
      containers: [{name: r, image: "rs:1"}]
---
apiVersion: extensions/v1beta1
kind: ReplicaSet
metadata: {name: old-rs}
spec:
  template:
    spec:
      containers: [{name: r, image: "old-rs:1"}]
---
apiVersion: extensions/v1beta1
kind: Deployment
metadata: {name: old-web}
spec:
  template:
    spec:
      containers: [{name: r, image: "old-web:1"}]
---
apiVersion: extensions/v1beta1
kind: DaemonSet
metadata: {name: old-ds}
spec:
  template:
    spec:
      containers: [{name: r, image: "old-ds:1"}]
`,
	"network.yaml": `apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Service
  metadata: {name: lb, namespace: shop}
  spec:
    type: LoadBalancer
    loadBalancerIP: 10.0.0.1
    ports: [{port: 80, name: http}, {port: 443, name: tls}]
- apiVersion: v1
  kind: Service
  metadata: {name: plain, namespace: shop}
  spec:
    ports: [{port: 8080}, {port: 0443}]
---
apiVersion: v1
kind: Service
metadata: {name: yaml-lb}
spec: {type: LoadBalancer, loadBalancerIP: 10.0.0.9}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata:
  name: shop
  annotations:
    kubernetes.io/ingress.class: nginx
---
apiVersion: extensions/v1beta1
kind: Ingress
metadata:
  name: legacy
  annotations: {kubernetes.io/ingress.class: "traefik", other: x}
---
apiVersion: networking.k8s.io/v1
kind: Ingress
metadata: {name: classless}
spec: {ingressClassName: nginx}
`,
	"storage.json": `{"apiVersion": "v1", "kind": "List", "items": [
  {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
   "metadata": {"name": "gp2", "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
   "provisioner": "kubernetes.io/aws-ebs", "allowVolumeExpansion": true},
  {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "csi"},
   "provisioner": "ebs.csi.aws.com", "parameters": {"iops": "3000", "type": "io2"}}
]}
`,
	"svc.json": `{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "json-lb"},
 "spec": {"type": "LoadBalancer", "loadBalancerIP": "10.0.0.2", "ports": [{"port": 53, "protocol": "UDP"}]}}
`,
}

// heldOutProbes are the probes checked against client-go's JSONPath, each beside the same
// path written as JSONPath by hand (relative to the pod template for a template probe).
var heldOutProbes = []struct {
	spec     probe.Spec
	jsonPath string
}{
	{probe.Spec{ID: "images", PodTemplate: true, Path: "spec.containers[*].image", Values: true}, "{.spec.containers[*].image}"},
	{probe.Spec{ID: "env", PodTemplate: true, Path: "spec.containers[*].env[*].value", Values: true}, "{.spec.containers[*].env[*].value}"},
	{probe.Spec{ID: "ports", PodTemplate: true, Path: "spec.containers[*].ports[*].containerPort", Values: true}, "{.spec.containers[*].ports[*].containerPort}"},
	{probe.Spec{ID: "host-network", PodTemplate: true, Path: "spec.hostNetwork", Values: true}, "{.spec.hostNetwork}"},
	{probe.Spec{ID: "stdin", PodTemplate: true, Path: "spec.containers[*].stdin", Values: true}, "{.spec.containers[*].stdin}"},
	{probe.Spec{ID: "host-path", PodTemplate: true, Path: "spec.volumes[*].hostPath.path", Values: true}, "{.spec.volumes[*].hostPath.path}"},
	{probe.Spec{ID: "pod-labels", PodTemplate: true, Path: "metadata.labels[*]", Values: true}, "{.metadata.labels.*}"},
	{probe.Spec{ID: "lb-ip", Kinds: []string{"core/Service"}, Path: "spec.loadBalancerIP", Values: true}, "{.spec.loadBalancerIP}"},
	{probe.Spec{ID: "svc-ports", Kinds: []string{"core/Service"}, Path: "spec.ports[*].port", Values: true}, "{.spec.ports[*].port}"},
	{probe.Spec{ID: "sc", Kinds: []string{"storage.k8s.io/StorageClass"}, Path: "provisioner", Values: true}, "{.provisioner}"},
	{probe.Spec{ID: "sc-default", Kinds: []string{"storage.k8s.io/StorageClass"},
		Path: `metadata.annotations["storageclass.kubernetes.io/is-default-class"]`, Values: true},
		`{.metadata.annotations.storageclass\.kubernetes\.io/is-default-class}`},
	{probe.Spec{ID: "sc-expand", Kinds: []string{"storage.k8s.io/StorageClass"}, Path: "allowVolumeExpansion", Values: true}, "{.allowVolumeExpansion}"},
	{probe.Spec{ID: "sc-params", Kinds: []string{"storage.k8s.io/StorageClass"}, Path: "parameters[*]", Values: true}, "{.parameters.*}"},
	{probe.Spec{ID: "ingress-class", Kinds: []string{"networking.k8s.io/Ingress", "extensions/Ingress"},
		Path: `metadata.annotations["kubernetes.io/ingress.class"]`, Values: true},
		`{.metadata.annotations.kubernetes\.io/ingress\.class}`},
	{probe.Spec{ID: "replicas", Kinds: []string{"apps/Deployment"}, Path: "spec.replicas", Values: true}, "{.spec.replicas}"},
}

// templateJSONPath is where each workload kind keeps its pod template, written for this test
// rather than read from the probe package.
var templateJSONPath = map[string]string{
	"Pod": "", "ReplicationController": ".spec.template", "Deployment": ".spec.template", "DaemonSet": ".spec.template",
	"StatefulSet": ".spec.template", "ReplicaSet": ".spec.template", "Job": ".spec.template",
	"CronJob": ".spec.jobTemplate.spec.template",
}

// The held-out check: what the files collector observes equals what client-go's JSONPath
// finds in the same objects decoded by apimachinery's YAML-or-JSON decoder.
func TestProbesObserveWhatJSONPathFindsInTheManifests(t *testing.T) {
	var specs []probe.Spec
	for _, p := range heldOutProbes {
		specs = append(specs, p.spec)
	}
	opts := testOptions()
	opts.Probes = probeSet(t, specs...)
	res := collectWith(t, opts, heldOut)
	objs := decodeIndependently(t, heldOut)
	got := map[string]inventory.Probe{}
	for _, p := range res.Probes {
		got[p.ID] = p
	}
	for _, hp := range heldOutProbes {
		t.Run(hp.spec.ID, func(t *testing.T) {
			want := expectedObservation(t, hp.spec, hp.jsonPath, objs)
			p := got["kb/"+hp.spec.ID]
			if p.Count == 0 {
				t.Fatalf("matches nothing: the comparison says nothing about it")
			}
			if p.Examined != want.examined || p.Count != len(want.objects) {
				t.Errorf("examined %d, matched %d; JSONPath: %d, %d", p.Examined, p.Count, want.examined, len(want.objects))
			}
			matched := map[string][]string{}
			for _, o := range p.Objects {
				vs := slices.Clone(o.Values)
				slices.Sort(vs)
				matched[o.Kind+" "+o.Name] = vs
			}
			if !reflect.DeepEqual(matched, want.objects) {
				t.Errorf("objects and their values:\n%v\nJSONPath:\n%v", matched, want.objects)
			}
			values := map[string]int{}
			for _, v := range p.Values {
				values[v.Value] = v.Count
			}
			if !reflect.DeepEqual(values, want.values) {
				t.Errorf("values %v, JSONPath %v", values, want.values)
			}
		})
	}
}

type decodedObject struct {
	group, kind, name string
	obj               map[string]any
}

// decodeIndependently reads every object of the files with apimachinery's decoder, Lists
// expanded.
func decodeIndependently(t *testing.T, files map[string]string) []decodedObject {
	t.Helper()
	var out []decodedObject
	for name, text := range files {
		dec := k8syaml.NewYAMLOrJSONDecoder(strings.NewReader(text), 4096)
		for {
			var obj map[string]any
			err := dec.Decode(&obj)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			items := []any{obj}
			if strings.HasSuffix(obj["kind"].(string), "List") {
				items = obj["items"].([]any)
			}
			for _, it := range items {
				o := it.(map[string]any)
				group, _, _ := strings.Cut(o["apiVersion"].(string), "/")
				if !strings.Contains(o["apiVersion"].(string), "/") {
					group = ""
				}
				out = append(out, decodedObject{group, o["kind"].(string), o["metadata"].(map[string]any)["name"].(string), o})
			}
		}
	}
	return out
}

type expected struct {
	examined int
	objects  map[string][]string // "Kind name" → its distinct values, sorted
	values   map[string]int      // value → objects holding it
}

func expectedObservation(t *testing.T, spec probe.Spec, expr string, objs []decodedObject) expected {
	t.Helper()
	want := expected{objects: map[string][]string{}, values: map[string]int{}}
	for _, o := range objs {
		key := o.group + "/" + o.kind
		if o.group == "" {
			key = "core/" + o.kind
		}
		full := expr
		if spec.PodTemplate {
			prefix, workload := templateJSONPath[o.kind]
			if !workload || !(o.group == "" || o.group == "apps" || o.group == "batch" || o.group == "extensions") {
				continue
			}
			full = "{" + prefix + expr[1:]
		} else if !slices.Contains(spec.Kinds, key) {
			continue
		}
		want.examined++
		found := jsonPathFind(t, full, o.obj)
		if len(found) == 0 {
			continue
		}
		slices.Sort(found)
		found = slices.Compact(found)
		want.objects[o.kind+" "+o.name] = found
		for _, v := range found {
			want.values[v]++
		}
	}
	if len(want.values) == 0 {
		want.values = map[string]int{}
	}
	return want
}

// jsonPathFind answers what expr finds in obj, each value as an observation lists it: a
// string as it is, anything else as JSON.
func jsonPathFind(t *testing.T, expr string, obj any) []string {
	t.Helper()
	jp := jsonpath.New("held-out").AllowMissingKeys(true)
	if err := jp.Parse(expr); err != nil {
		t.Fatalf("jsonpath %s: %v", expr, err)
	}
	results, err := jp.FindResults(obj)
	if err != nil {
		t.Fatalf("jsonpath %s: %v", expr, err)
	}
	var out []string
	for _, r := range results {
		for _, v := range r {
			if v.Interface() == nil {
				continue
			}
			if s, ok := v.Interface().(string); ok {
				out = append(out, s)
				continue
			}
			b, err := json.Marshal(v.Interface())
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, string(b))
		}
	}
	return out
}

// narrowedKinds are documents of every kind narrow drops keys of, with a value under every
// dropped key a probe below reads, and a custom resource sharing a narrowed kind's name.
var narrowedKinds = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  names: {kind: Widget, plural: widgets}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
---
apiVersion: v1
kind: Pod
metadata:
  name: pod
  labels:
    env: prod
    ports: "80"
  annotations:
    env: note
spec:
  containers:
  - name: a
    image: a:1
    env:
    - name: A
      value: "1"
    ports:
    - containerPort: 80
    securityContext:
      privileged: true
    resources:
      limits: {cpu: "1"}
  volumes:
  - name: v
    hostPath:
      path: /etc
  tolerations:
  - key: k
    effect: NoSchedule
` + workloadDoc("apps/v1", "Deployment", "template") +
	workloadDoc("apps/v1", "DaemonSet", "template") +
	workloadDoc("apps/v1", "StatefulSet", "template") +
	workloadDoc("apps/v1", "ReplicaSet", "template") +
	workloadDoc("batch/v1", "Job", "template") +
	workloadDoc("example.com/v1", "Deployment", "template") +
	workloadDoc("batch/v1", "CronJob", "jobTemplate")

// workloadDoc is a workload whose pod template, under spec.template or
// spec.jobTemplate.spec.template, holds a value under each key narrow may drop.
func workloadDoc(apiVersion, kind, under string) string {
	head, indent := "  template:\n", "    "
	if under == "jobTemplate" {
		head, indent = "  jobTemplate:\n    spec:\n      template:\n", "        "
	}
	template := `metadata:
  labels:
    env: prod
    ports: "80"
spec:
  containers:
  - name: a
    image: a:1
    env:
    - name: A
      value: "1"
    ports:
    - containerPort: 80
    securityContext:
      privileged: true
  - name: b
    image: b:1
    resources:
      limits: {cpu: "1"}
  volumes:
  - name: v
    hostPath:
      path: /etc
  tolerations:
  - key: k
    effect: NoSchedule
`
	var b strings.Builder
	fmt.Fprintf(&b, `---
apiVersion: %s
kind: %s
metadata:
  name: w
  labels: {env: prod, app: w}
spec:
  selector: {matchLabels: {app: w}}
  strategy: {type: Recreate}
`, apiVersion, kind)
	b.WriteString(head)
	for _, line := range strings.SplitAfter(template, "\n") {
		if line != "" {
			b.WriteString(indent + line)
		}
	}
	return b.String()
}

var narrowingProbes = []probe.Spec{
	{ID: "env", PodTemplate: true, Path: "spec.containers[*].env[*].name", Values: true},
	{ID: "ports", PodTemplate: true, Path: "spec.containers[*].ports[*].containerPort", Values: true},
	{ID: "privileged", PodTemplate: true, Path: "spec.containers[*].securityContext.privileged", Values: true},
	{ID: "limits", PodTemplate: true, Path: "spec.containers[*].resources.limits", Match: probe.MatchAbsent, Values: true},
	{ID: "host-path", PodTemplate: true, Path: "spec.volumes[*].hostPath.path", Values: true},
	{ID: "tolerations", PodTemplate: true, Path: "spec.tolerations[*].key", Values: true},
	{ID: "template-labels", PodTemplate: true, Path: "metadata.labels[*]", Values: true},
	{ID: "labels", Kinds: []string{"apps/Deployment", "core/Pod", "batch/CronJob"}, Path: "metadata.labels[*]", Values: true},
	{ID: "env-annotation", Kinds: []string{"core/Pod"}, Path: `metadata.annotations["env"]`, Values: true},
	{ID: "strategy", Kinds: []string{"apps/Deployment"}, Path: "spec.strategy.type", Values: true},
	{ID: "selector", Kinds: []string{"apps/DaemonSet"}, Path: "spec.selector.matchLabels[*]", Values: true},
	{ID: "schema", Kinds: []string{"apiextensions.k8s.io/CustomResourceDefinition"}, Path: "spec.versions[*].schema.openAPIV3Schema.type", Values: true},
	{ID: "containers", PodTemplate: true, Path: "spec.containers[*]", Values: true},
	{ID: "pod-spec", Kinds: []string{"apps/Deployment"}, Path: "spec.template.spec", Values: true},
	{ID: "custom-env", Kinds: []string{"example.com/Deployment"}, Path: "spec.template.spec.containers[*].env[*].name", Values: true},
}

// decodeProbes decodes text with the probes, narrowed as they allow or parsed whole, and
// answers what they observed.
func decodeProbes(text string, set *probe.Set, whole bool) []inventory.Probe {
	opts := testOptions()
	opts.Probes = set
	if whole {
		opts.drops = map[string]map[string]bool{}
	}
	d := newFileDecoder("f.yaml", opts)
	d.parseAll = whole
	d.decodeYAMLStream(bufio.NewReader(strings.NewReader(text)))
	return d.res.probes.Probes()
}

func TestNarrowingNeverChangesWhatAProbeObserves(t *testing.T) {
	sets := map[string][]probe.Spec{"all together": narrowingProbes}
	for _, p := range narrowingProbes {
		sets[p.ID] = []probe.Spec{p}
	}
	for name, specs := range sets {
		t.Run(name, func(t *testing.T) {
			set := probeSet(t, specs...)
			narrowed, whole := decodeProbes(narrowedKinds, set, false), decodeProbes(narrowedKinds, set, true)
			for i := range whole {
				if whole[i].Count == 0 {
					t.Errorf("%s matches nothing: the comparison says nothing about it", whole[i].ID)
				}
				if !reflect.DeepEqual(narrowed[i], whole[i]) {
					t.Errorf("%s narrowed:\n%+v\nparsed whole:\n%+v", whole[i].ID, narrowed[i], whole[i])
				}
			}
		})
	}
}

// TestProbesLeaveSomethingToNarrow keeps the test above honest: with a probe that reads a
// list field, the documents are still narrowed, so the comparison exercises narrowing.
func TestProbesLeaveSomethingToNarrow(t *testing.T) {
	drops := narrowing(probeSet(t, narrowingProbes[0]))
	if drops["Deployment"]["env"] || !drops["Deployment"]["ports"] {
		t.Errorf("Deployment drops %v: want env kept and ports dropped", drops["Deployment"])
	}
	if _, ok := narrow([]byte(workloadDoc("apps/v1", "Deployment", "template")), drops["Deployment"], nil); !ok {
		t.Error("a Deployment is not narrowed with a probe of env")
	}
	if _, ok := narrowing(probeSet(t, narrowingProbes[6]))["Deployment"]; ok {
		t.Error("a wildcard over the template's labels, a map, still narrows Deployments")
	}
}

func TestWithoutProbesNarrowingIsExactlyDropped(t *testing.T) {
	empty, err := probe.NewSet(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []*probe.Set{nil, empty} {
		if got := narrowing(s); reflect.ValueOf(got).Pointer() != reflect.ValueOf(dropped).Pointer() {
			t.Errorf("narrowing(%v) = %v, want dropped itself", s, got)
		}
	}
	res := collect(t, heldOut)
	if res.Probes != nil {
		t.Errorf("probes observed without a set: %+v", res.Probes)
	}
	b, err := json.Marshal(Inventory(res, time.Unix(0, 0)))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte(`"probes"`)) {
		t.Errorf("the inventory has a probes section without probes: %s", b)
	}
}

func TestAProbedObjectCarriesItsFileLineAndChart(t *testing.T) {
	// Ingresses of a watched version, so api usage names them too.
	files := map[string]string{
		"rendered.yaml": `---
# Source: shop/templates/ingress.yaml
kind: Ingress
metadata:
  name: rendered
apiVersion: extensions/v1beta1
spec: {rules: []}
---
apiVersion: extensions/v1beta1
kind: Ingress
metadata: {name: plain}
spec:
  rules: []
`,
		"dir/ingress.json": "{\n  \"kind\": \"Ingress\",\n  \"apiVersion\": \"extensions/v1beta1\",\n  \"metadata\": {\"name\": \"json\"},\n  \"spec\": {\"rules\": []}\n}\n",
	}
	opts := testOptions()
	opts.Probes = probeSet(t, probe.Spec{ID: "rules", Kinds: []string{"extensions/Ingress"}, Path: "spec.rules"})
	res := collectWith(t, opts, files)
	var got []string
	for _, o := range res.Probes[0].Objects {
		got = append(got, fmt.Sprintf("%s %s:%d <%s>", o.Name, o.File, o.Line, o.RenderedFrom))
	}
	want := []string{"json dir/ingress.json:3 <>", "rendered rendered.yaml:6 <shop/templates/ingress.yaml>", "plain rendered.yaml:9 <>"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("objects %q, want %q", got, want)
	}
	// The same place the api-usage rows give the object.
	var usage []string
	for _, u := range res.APIUsage {
		for _, o := range u.Objects {
			usage = append(usage, fmt.Sprintf("%s %s:%d <%s>", o.Name, o.File, o.Line, o.RenderedFrom))
		}
	}
	slices.Sort(usage)
	slices.Sort(got)
	if !reflect.DeepEqual(got, usage) {
		t.Errorf("probe objects %q, api usage %q", got, usage)
	}
}

func TestPlainExpandsAliasesWithinBounds(t *testing.T) {
	laughs := "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
	for i, prev := range "abcdefgh" {
		laughs += fmt.Sprintf("%c: &%c [*%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c, *%c]\n", 'b'+i, 'b'+i, prev, prev, prev, prev, prev, prev, prev, prev, prev, prev)
	}
	tests := []struct {
		name, text string
		want       any
	}{
		{"an alias of a mapping", "a: &m {k: yes}\nb: *m\n", map[string]any{"a": map[string]any{"k": true}, "b": map[string]any{"k": true}}},
		{"a merge key: own keys win, then the first mapping named", "a: &x {k: 1, j: 1}\nb: &y {k: 2, l: 2}\nc: {<<: [*x, *y], j: 3}\n",
			map[string]any{"a": map[string]any{"k": int64(1), "j": int64(1)}, "b": map[string]any{"k": int64(2), "l": int64(2)},
				"c": map[string]any{"k": int64(1), "j": int64(3), "l": int64(2)}}},
		{"a quoted <<  is a key", "'<<': x\n", map[string]any{"<<": "x"}},
		{"an alias naming the node that holds it", "a: &a [*a]\n", nil},
		{"an alias bomb", laughs, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var n yamlv3.Node
			if err := yamlv3.Unmarshal([]byte(tt.text), &n); err != nil {
				t.Fatal(err)
			}
			got := plain(n.Content[0])
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("plain = %#v, want %#v", got, tt.want)
			}
		})
	}
}

// Per-container annotations carry the container's name in their key: a prefix step finds
// them, and the workload keeps its narrowing, since no key a narrowing drops starts so.
func TestAPrefixStepFindsPerContainerAnnotations(t *testing.T) {
	files := map[string]string{"web.yaml": `apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop}
spec:
  template:
    metadata:
      annotations:
        container.apparmor.security.beta.kubernetes.io/web: runtime/default
        container.apparmor.security.beta.kubernetes.io/sidecar: localhost/custom
        apparmor.example.com/other: x
    spec:
      containers:
        - {name: web, image: nginx, env: [{name: A, value: "1"}]}
`, "plain.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: plain}\nspec: {template: {spec: {containers: [{name: a, image: b}]}}}\n"}
	opts := testOptions()
	opts.Probes = probeSet(t, probe.Spec{ID: "apparmor", PodTemplate: true, Values: true,
		Path: `metadata.annotations[^"container.apparmor.security.beta.kubernetes.io/"]`})
	if drop := narrowing(opts.Probes)["Deployment"]; !drop["env"] {
		t.Errorf("a prefix step stopped Deployments being narrowed: %v", drop)
	}
	p := collectWith(t, opts, files).Probes[0]
	if p.Examined != 2 || p.Count != 1 || len(p.Objects) != 1 || p.Objects[0].Name != "web" || p.Objects[0].Line != 1 {
		t.Fatalf("observation %+v: want web (web.yaml:1) of 2 examined", p)
	}
	if got := p.Objects[0].Values; !reflect.DeepEqual(got, []string{"localhost/custom", "runtime/default"}) {
		t.Errorf("values %q: want both containers' profiles, in key order", got)
	}
}
