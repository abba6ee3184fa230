package rehearsal_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/rehearsal"
)

// namespaceSet is n objects shaped like the namespaces of a real cluster: 50 namespaces, each
// with Deployments, their Services, ConfigMaps and Ingresses in equal parts.
func namespaceSet(b *testing.B, n int) []rehearsal.Object {
	const namespaces = 50
	objs := make([]rehearsal.Object, 0, n)
	for i := range n {
		ns, app := fmt.Sprintf("team-%02d", i%namespaces), fmt.Sprintf("app-%d", i/4)
		var y string
		switch i % 4 {
		case 0:
			y = fmt.Sprintf(`{apiVersion: apps/v1, kind: Deployment, metadata: {name: %[1]s, namespace: %[2]s, labels: {app: %[1]s}},
spec: {replicas: 2, selector: {matchLabels: {app: %[1]s}}, template: {metadata: {labels: {app: %[1]s}},
spec: {containers: [{name: app, image: "registry.example.com/%[1]s:1.0.%[3]d", ports: [{containerPort: 8080}],
resources: {requests: {cpu: 100m, memory: 128Mi}, limits: {memory: 256Mi}},
env: [{name: MODE, value: production}], readinessProbe: {httpGet: {path: /healthz, port: 8080}}}]}}}}`, app, ns, i)
		case 1:
			y = fmt.Sprintf(`{apiVersion: v1, kind: Service, metadata: {name: %[1]s, namespace: %[2]s},
spec: {selector: {app: %[1]s}, ports: [{name: http, port: 80, targetPort: 8080}]}}`, app, ns)
		case 2:
			y = fmt.Sprintf(`{apiVersion: v1, kind: ConfigMap, metadata: {name: %[1]s, namespace: %[2]s},
data: {"app.properties": "mode=production\nlevel=info\n", "owner": "team"}}`, app, ns)
		case 3:
			y = fmt.Sprintf(`{apiVersion: networking.k8s.io/v1, kind: Ingress, metadata: {name: %[1]s, namespace: %[2]s},
spec: {ingressClassName: nginx, rules: [{host: %[1]s.example.com, http: {paths: [{path: /, pathType: Prefix,
backend: {service: {name: %[1]s, port: {number: 80}}}}]}}]}}`, app, ns)
		}
		objs = append(objs, obj(b, fmt.Sprintf("%s.yaml", ns), i, y))
	}
	return objs
}

// BenchmarkReplayNamespaceSet replays 5,000 objects of 50 namespaces into a server started
// from $UPGRADESCOPE_KUBE_BINARIES (its start not timed) and reports the peak RSS of the
// process; docs/performance.md has the current numbers.
func BenchmarkReplayNamespaceSet(b *testing.B) {
	srv := binariesServerB(b)
	objs := namespaceSet(b, 5000)
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		sec, err := rehearsal.Replay(context.Background(), srv, objs, nil, rehearsal.Options{Target: srv.Minor, Timeout: 5 * time.Minute})
		if err != nil {
			b.Fatal(err)
		}
		if sec.Accepted != len(objs) {
			b.Fatalf("%d of %d accepted: %+v %+v", sec.Accepted, len(objs), sec.Rejections, sec.NotReplayed)
		}
		b.ReportMetric(time.Since(start).Seconds(), "s/replay")
	}
	b.ReportMetric(peakRSSMiB(b), "peak-RSS-MiB")
}

func binariesServerB(b *testing.B) *rehearsal.Server {
	dir := os.Getenv("UPGRADESCOPE_KUBE_BINARIES")
	if dir == "" {
		b.Skip("UPGRADESCOPE_KUBE_BINARIES is not set")
	}
	started.once.Do(func() { started.srv, started.err = rehearsal.Start(context.Background(), dir) })
	if started.err != nil {
		b.Fatal(started.err)
	}
	return started.srv
}

// peakRSSMiB is the process's VmHWM.
func peakRSSMiB(b *testing.B) float64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Skip("no /proc/self/status")
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb float64
			fmt.Sscanf(strings.TrimSpace(rest), "%f", &kb)
			return kb / 1024
		}
	}
	return 0
}
