package corpus

import (
	"bufio"
	"fmt"
)

// workloadKinds are the workloads of a Helm-rendered repository and how often each appears
// (per mille, cumulative): mostly Deployments, some StatefulSets, DaemonSets and CronJobs.
var workloadKinds = []struct {
	upTo       uint64
	apiVersion string
	kind       string
}{
	{700, "apps/v1", "Deployment"},
	{850, "apps/v1", "StatefulSet"},
	{900, "apps/v1", "DaemonSet"},
	{1000, "batch/v1", "CronJob"},
}

// writeWorkload writes workload i the way `helm template` renders a chart: the recommended
// labels and the chart label on the object and its pod template, an image of its own (every
// fourth one with a sidecar of its own too), probes, resources and environment.
func writeWorkload(w *bufio.Writer, i int, ns string) {
	k := workloadKinds[len(workloadKinds)-1]
	for _, c := range workloadKinds {
		if mix(i, 11)%1000 < c.upTo {
			k = c
			break
		}
	}
	team := i % 40
	name := fmt.Sprintf("svc-%05d", i)
	version := fmt.Sprintf("%d.%d.%d", 1+i%3, i%17, i%11)
	image := fmt.Sprintf("registry.example.com/team-%02d/%s:%s", team, name, version)
	if i%40 == 0 {
		image = addonImages[(i/40)%len(addonImages)]
		name = addonNames[(i/40)%len(addonNames)]
	}
	labels := fmt.Sprintf(`app.kubernetes.io/name: %s
    app.kubernetes.io/instance: %s-%d
    app.kubernetes.io/version: "%s"
    app.kubernetes.io/part-of: team-%02d
    app.kubernetes.io/managed-by: Helm
    helm.sh/chart: %s-%s`, name, name, i, version, team, name, version)
	fmt.Fprintf(w, "apiVersion: %s\nkind: %s\nmetadata:\n  name: %s\n  namespace: %s\n  labels:\n    %s\n", k.apiVersion, k.kind, name, ns, labels)
	indent := "  "
	if k.kind == "CronJob" {
		fmt.Fprintf(w, "spec:\n  schedule: \"%d * * * *\"\n  jobTemplate:\n    spec:\n", i%60)
		indent = "      "
	} else {
		fmt.Fprintf(w, "spec:\n")
		if k.kind != "DaemonSet" {
			fmt.Fprintf(w, "  replicas: %d\n", 1+i%3)
		}
		if k.kind == "StatefulSet" {
			fmt.Fprintf(w, "  serviceName: %s\n", name)
		}
		fmt.Fprintf(w, "  selector:\n    matchLabels:\n      app.kubernetes.io/name: %s\n      app.kubernetes.io/instance: %s-%d\n", name, name, i)
	}
	podTemplate(w, indent, i, name, image, labels)
}

func podTemplate(w *bufio.Writer, in string, i int, name, image, labels string) {
	lines := []string{
		"template:",
		"  metadata:",
		"    annotations:",
		fmt.Sprintf("      checksum/config: %016x%016x%016x%016x", mix(i, 1), mix(i, 2), mix(i, 3), mix(i, 4)),
		"    labels:",
		"      " + indentLabels(labels, in),
		"  spec:",
		"    serviceAccountName: " + name,
		"    securityContext:",
		"      runAsNonRoot: true",
		"      fsGroup: 65532",
		"    containers:",
		"    - name: " + name,
		`      image: "` + image + `"`,
		"      imagePullPolicy: IfNotPresent",
		`      args: ["--port=8080", "--metrics-port=9090", "--log-format=json"]`,
		"      ports:",
		"      - {name: http, containerPort: 8080, protocol: TCP}",
		"      - {name: metrics, containerPort: 9090, protocol: TCP}",
		"      livenessProbe:",
		"        httpGet: {path: /healthz, port: http}",
		"        initialDelaySeconds: 10",
		"      readinessProbe:",
		"        httpGet: {path: /readyz, port: http}",
		"      resources:",
		"        requests: {cpu: 100m, memory: 128Mi}",
		"        limits: {memory: 256Mi}",
		"      env:",
		"      - {name: LOG_LEVEL, value: info}",
		"      - {name: REGION, value: eu-west-1}",
		"      - {name: OTEL_EXPORTER_OTLP_ENDPOINT, value: \"http://otel-collector.observability:4317\"}",
		"      - {name: OTEL_SERVICE_NAME, value: " + name + "}",
		"      - {name: DATABASE_URL, valueFrom: {secretKeyRef: {name: " + name + "-db, key: url}}}",
		"      - {name: CACHE_TTL_SECONDS, value: \"300\"}",
		"      - {name: FEATURE_FLAGS, value: \"checkout-v2,search-v3,new-pricing\"}",
		"      - name: POD_NAMESPACE",
		"        valueFrom: {fieldRef: {fieldPath: metadata.namespace}}",
		"      - name: GOMEMLIMIT",
		"        valueFrom: {resourceFieldRef: {resource: limits.memory}}",
		"      - name: POD_NAME",
		"        valueFrom: {fieldRef: {fieldPath: metadata.name}}",
		"      volumeMounts:",
		"      - {name: config, mountPath: /etc/" + name + ", readOnly: true}",
	}
	if i%4 == 1 {
		lines = append(lines,
			"    - name: agent",
			fmt.Sprintf("      image: registry.example.com/sidecars/%s-agent:%d.%d", name, 1+i%4, i%13),
			"      resources:",
			"        requests: {cpu: 10m, memory: 32Mi}")
	}
	lines = append(lines, "    volumes:", "    - name: config", "      configMap: {name: "+name+"-config}")
	if in != "  " {
		lines = append(lines, "    restartPolicy: OnFailure")
	}
	for _, l := range lines {
		w.WriteString(in)
		w.WriteString(l)
		w.WriteByte('\n')
	}
}

// indentLabels re-indents the object's label lines for a pod template at indent in.
func indentLabels(labels, in string) string {
	out := []byte{}
	for _, c := range []byte(labels) {
		out = append(out, c)
		if c == '\n' {
			out = append(out, in+"  "...)
		}
	}
	return string(out)
}
