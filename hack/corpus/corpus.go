// Package corpus writes manifest corpora for benchmarks: about 100 objects a file, a mix of
// kinds like a rendered platform repository (Helm's `# Source:` comments and `---`
// separators), ConfigMaps with large data, CRDs with big schemas, and about 5% of objects at
// deprecated or removed APIs. A Shape says how many distinct images the workloads run and how
// large ConfigMaps and CRD schemas are.
package corpus

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
)

// ObjectsPerFile is how many objects each file holds.
const ObjectsPerFile = 100

// Shape is what a corpus looks like beyond its size.
type Shape struct {
	Name string
	// Images is how many distinct application images the Deployments share (workload i runs
	// image i mod Images). 0 gives every workload an image of its own and every fourth one a
	// sidecar image of its own, with the recommended labels and a Helm chart label: a
	// repository of many small services.
	Images int
	// ConfigMapBytes is the range of a ConfigMap's data; LargeConfigMaps per mille of them
	// hold up to LargeConfigMapBytes instead.
	ConfigMapBytes      [2]int
	LargeConfigMaps     int
	LargeConfigMapBytes int
	// CRDProperties is the range of properties in a CRD's schema; DeprecatedCRDVersion adds a
	// served, deprecated v1beta1 with its own copy of the schema, as real CRDs carry.
	CRDProperties        [2]int
	DeprecatedCRDVersion bool
	// CRDs is how many distinct CRDs the CRD documents define: a repository renders the same
	// operators' CRDs for every environment, so distinct CRDs do not grow with it. 0 gives
	// every CRD document a kind of its own.
	CRDs int
}

// Classic is the corpus of the first benchmarks: 200 application images shared by every
// Deployment, 6,000-byte ConfigMaps on one line, 40-property CRD schemas. Kept so figures
// stay comparable with earlier measurements.
var Classic = Shape{Name: "classic", Images: 200, ConfigMapBytes: [2]int{6000, 6000}, CRDProperties: [2]int{40, 40}}

// ManyImages is a repository of many services rendered by Helm: every workload has its own
// image (about 1.25 distinct images a workload), ConfigMaps hold 1–12 KiB of data and 3% of
// them up to 64 KiB, CRD schemas have 10–60 properties and a deprecated served version, and
// the CRD documents define 250 distinct CRDs (a large platform's operators).
var ManyImages = Shape{
	Name: "many-images", ConfigMapBytes: [2]int{1 << 10, 12 << 10}, LargeConfigMaps: 30, LargeConfigMapBytes: 64 << 10,
	CRDProperties: [2]int{10, 60}, DeprecatedCRDVersion: true, CRDs: 250,
}

// Shapes are the shapes hack/bench knows by name.
var Shapes = []Shape{Classic, ManyImages}

// ShapeNamed returns the shape called name.
func ShapeNamed(name string) (Shape, error) {
	for _, s := range Shapes {
		if s.Name == name {
			return s, nil
		}
	}
	return Shape{}, fmt.Errorf("unknown corpus shape %q (want classic or many-images)", name)
}

// Write generates n objects of shape under dir. The same n and shape give the same corpus.
func Write(dir string, n int, shape Shape) error {
	g := &generator{shape: shape, rng: rand.New(rand.NewPCG(uint64(n), 42))}
	g.classicData = strings.Repeat("x", 6000)
	for file := 0; file*ObjectsPerFile < n; file++ {
		sub := filepath.Join(dir, fmt.Sprintf("team-%02d", file%20))
		if err := os.MkdirAll(sub, 0o755); err != nil {
			return err
		}
		f, err := os.Create(filepath.Join(sub, fmt.Sprintf("release-%05d.yaml", file)))
		if err != nil {
			return err
		}
		w := bufio.NewWriterSize(f, 1<<16)
		for i := file * ObjectsPerFile; i < n && i < (file+1)*ObjectsPerFile; i++ {
			g.object(w, i)
		}
		if err := w.Flush(); err != nil {
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	return nil
}

type generator struct {
	shape       Shape
	rng         *rand.Rand
	classicData string
	schemas     map[int]string
}

func (g *generator) object(w *bufio.Writer, i int) {
	ns := fmt.Sprintf("ns-%03d", i%300)
	fmt.Fprintf(w, "---\n# Source: app-%d/templates/object-%d.yaml\n", i%500, i)
	switch r := g.rng.IntN(1000); {
	case r < 50: // 5% at deprecated or removed APIs
		writeDeprecated(w, g.rng, i, ns)
	case r < 150:
		g.configMap(w, i, ns)
	case r < 160:
		g.crd(w, i)
	case r < 200:
		fmt.Fprintf(w, "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: web-%d\n  namespace: %s\nspec:\n  rules:\n  - host: web-%d.example.com\n    http:\n      paths:\n      - path: /\n        pathType: Prefix\n        backend:\n          service: {name: web-%d, port: {number: 80}}\n", i, ns, i, i)
	case r < 450:
		if g.shape.Images > 0 {
			writeDeployment(w, i, ns, g.shape.Images)
		} else {
			writeWorkload(w, i, ns)
		}
	case r < 650:
		fmt.Fprintf(w, "apiVersion: v1\nkind: Service\nmetadata:\n  name: svc-%d\n  namespace: %s\n  labels: {app.kubernetes.io/name: svc-%d}\nspec:\n  selector: {app: svc-%d}\n  ports:\n  - name: http\n    port: 80\n    targetPort: 8080\n", i, ns, i, i)
	case r < 800:
		fmt.Fprintf(w, "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: sa-%d\n  namespace: %s\n", i, ns)
	case r < 900:
		fmt.Fprintf(w, "apiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n  name: rb-%d\n  namespace: %s\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: reader}\nsubjects:\n- kind: ServiceAccount\n  name: sa-%d\n  namespace: %s\n", i, ns, i, ns)
	default:
		fmt.Fprintf(w, "apiVersion: autoscaling/v2\nkind: HorizontalPodAutoscaler\nmetadata:\n  name: hpa-%d\n  namespace: %s\nspec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: app-%d}\n  minReplicas: 2\n  maxReplicas: 10\n", i, ns, i)
	}
}

func writeDeprecated(w *bufio.Writer, rng *rand.Rand, i int, ns string) {
	switch rng.IntN(4) {
	case 0:
		fmt.Fprintf(w, "apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata:\n  name: legacy-%d\n  namespace: %s\nspec:\n  backend: {serviceName: legacy-%d, servicePort: 80}\n", i, ns, i)
	case 1:
		fmt.Fprintf(w, "apiVersion: batch/v1beta1\nkind: CronJob\nmetadata:\n  name: nightly-%d\n  namespace: %s\nspec:\n  schedule: \"0 3 * * *\"\n  jobTemplate:\n    spec:\n      template:\n        spec:\n          restartPolicy: OnFailure\n          containers:\n          - name: job\n            image: registry.example.com/jobs/nightly:2.1\n", i, ns)
	case 2:
		fmt.Fprintf(w, "apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata:\n  name: pdb-%d\n  namespace: %s\nspec:\n  minAvailable: 1\n  selector: {matchLabels: {app: app-%d}}\n", i, ns, i)
	default:
		fmt.Fprintf(w, "apiVersion: v1\nkind: Endpoints\nmetadata:\n  name: ext-%d\n  namespace: %s\nsubsets:\n- addresses: [{ip: 10.0.0.%d}]\n  ports: [{port: 5432}]\n", i, ns, i%250)
	}
}

// configMap writes the classic one-line payload, or Helm-style block scalars of config
// lines whose size the shape draws.
func (g *generator) configMap(w *bufio.Writer, i int, ns string) {
	fmt.Fprintf(w, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg-%d\n  namespace: %s\ndata:\n", i, ns)
	s := g.shape
	if s.ConfigMapBytes[0] == s.ConfigMapBytes[1] && s.LargeConfigMaps == 0 {
		fmt.Fprintf(w, "  payload: %s\n", g.classicData[:min(len(g.classicData), s.ConfigMapBytes[0])])
		return
	}
	size := between(i, s.ConfigMapBytes)
	if int(mix(i, 7)%1000) < s.LargeConfigMaps {
		size = between(i, [2]int{s.ConfigMapBytes[1], s.LargeConfigMapBytes})
	}
	w.WriteString("  application.properties: |\n")
	for line, written := 0, 0; written < size; line++ {
		n, _ := fmt.Fprintf(w, "    service.%d.setting.%d=value-%d-with-some-text-of-a-realistic-length\n", i, line, line*7919%100000)
		written += n
	}
}

// between draws a deterministic size in [r[0], r[1]] from i.
func between(i int, r [2]int) int {
	if r[1] <= r[0] {
		return r[0]
	}
	return r[0] + int(mix(i, 3)%uint64(r[1]-r[0]+1))
}

// mix is a deterministic hash of i, so sizes do not depend on the order kinds are drawn in.
func mix(i int, salt uint64) uint64 {
	x := uint64(i)*0x9E3779B97F4A7C15 + salt
	x ^= x >> 31
	x *= 0xBF58476D1CE4E5B9
	return x ^ x>>29
}

func (g *generator) crd(w *bufio.Writer, i int) {
	if g.shape.CRDs > 0 {
		i %= g.shape.CRDs
	}
	schema := g.schema(between(i, g.shape.CRDProperties))
	fmt.Fprintf(w, "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets%d.example.com\nspec:\n  group: example.com\n  names: {kind: Widget%d, plural: widgets%d}\n  scope: Namespaced\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n%s", i, i, i, schema)
	if g.shape.DeprecatedCRDVersion {
		fmt.Fprintf(w, "  - name: v1beta1\n    served: true\n    storage: false\n    deprecated: true\n    deprecationWarning: \"example.com/v1beta1 Widget%d is deprecated; use example.com/v1\"\n    schema:\n      openAPIV3Schema:\n%s", i, schema)
	}
}

func (g *generator) schema(properties int) string {
	if g.schemas == nil {
		g.schemas = map[int]string{}
	}
	s, ok := g.schemas[properties]
	if !ok {
		s = crdSchema(properties)
		g.schemas[properties] = s
	}
	return s
}

// addonImages are images of real add-ons, so add-on detection has something to find.
var addonImages = []string{
	"registry.k8s.io/ingress-nginx/controller:v1.9.4",
	"quay.io/jetstack/cert-manager-controller:v1.13.2",
	"registry.k8s.io/metrics-server/metrics-server:v0.6.4",
	"docker.io/openpolicyagent/gatekeeper:v3.14.0",
	"fluent/fluent-bit:2.1.10",
	"quay.io/prometheus-operator/prometheus-operator:v0.68.0",
	"registry.k8s.io/kube-state-metrics/kube-state-metrics:v2.10.0",
	"public.ecr.aws/karpenter/controller:1.0.6",
}

// addonNames are the app.kubernetes.io/name labels Helm charts give addonImages.
var addonNames = []string{
	"ingress-nginx", "cert-manager", "metrics-server", "gatekeeper", "fluent-bit", "prometheus-operator",
	"kube-state-metrics", "karpenter",
}

func writeDeployment(w *bufio.Writer, i int, ns string, images int) {
	// A repository has a few hundred distinct applications, each with its image and name
	// label, deployed many times over (per namespace, per region), not one image per object.
	app := i % images
	image := fmt.Sprintf("registry.example.com/shop/app-%d:1.%d.0", app, app%9)
	if i%40 == 0 {
		image = addonImages[(i/40)%len(addonImages)]
	}
	fmt.Fprintf(w, `apiVersion: apps/v1
kind: Deployment
metadata:
  name: app-%d
  namespace: %s
  labels:
    app.kubernetes.io/name: app-%d
    app.kubernetes.io/part-of: shop
spec:
  replicas: 3
  selector:
    matchLabels: {app: app-%d}
  template:
    metadata:
      labels: {app: app-%d}
    spec:
      containers:
      - name: app
        image: %s
        ports: [{containerPort: 8080}]
        resources:
          requests: {cpu: 100m, memory: 128Mi}
          limits: {memory: 256Mi}
        env:
        - {name: LOG_LEVEL, value: info}
        - {name: REGION, value: eu-west-1}
`, i, ns, app, i, i, image)
}

// crdSchema is an openAPIV3Schema with n properties of nested objects, indented for a CRD.
func crdSchema(n int) string {
	var b strings.Builder
	b.WriteString("        type: object\n        properties:\n          spec:\n            type: object\n            properties:\n")
	for p := range n {
		fmt.Fprintf(&b, "              field%d:\n                type: object\n                description: A field with a description long enough to look like a real CRD's documentation string.\n                properties:\n                  name: {type: string, maxLength: 253}\n                  count: {type: integer, minimum: 0}\n                  enabled: {type: boolean}\n", p)
	}
	return b.String()
}
