// Package corpus writes a manifest corpus for benchmarks: about 100 objects a file, a mix
// of kinds like a rendered platform repository, ConfigMaps with large data and CRDs with big
// schemas, and about 5% of objects at deprecated or removed APIs.
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

// Write generates n objects under dir. The same n gives the same corpus.
func Write(dir string, n int) error {
	rng := rand.New(rand.NewPCG(uint64(n), 42))
	bigData := strings.Repeat("x", 6000)
	schema := crdSchema(40)
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
			writeObject(w, rng, i, bigData, schema)
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

func writeObject(w *bufio.Writer, rng *rand.Rand, i int, bigData, schema string) {
	ns := fmt.Sprintf("ns-%03d", i%300)
	fmt.Fprintf(w, "---\n# Source: app-%d/templates/object-%d.yaml\n", i%500, i)
	switch r := rng.IntN(1000); {
	case r < 50: // 5% at deprecated or removed APIs
		writeDeprecated(w, rng, i, ns)
	case r < 150:
		fmt.Fprintf(w, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg-%d\n  namespace: %s\ndata:\n  payload: %s\n", i, ns, bigData)
	case r < 160:
		fmt.Fprintf(w, "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  name: widgets%d.example.com\nspec:\n  group: example.com\n  names: {kind: Widget%d, plural: widgets%d}\n  scope: Namespaced\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema:\n%s", i, i, i, schema)
	case r < 200:
		fmt.Fprintf(w, "apiVersion: networking.k8s.io/v1\nkind: Ingress\nmetadata:\n  name: web-%d\n  namespace: %s\nspec:\n  rules:\n  - host: web-%d.example.com\n    http:\n      paths:\n      - path: /\n        pathType: Prefix\n        backend:\n          service: {name: web-%d, port: {number: 80}}\n", i, ns, i, i)
	case r < 450:
		writeDeployment(w, i, ns)
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

func writeDeployment(w *bufio.Writer, i int, ns string) {
	// A repository has a few hundred distinct applications, each with its image and name
	// label, deployed many times over (per namespace, per region), not one image per object.
	app := i % 200
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
