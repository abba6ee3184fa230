package advisor_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/charts/advisor"
	"github.com/upgradescope/upgradescope/charts/repo"
	"github.com/upgradescope/upgradescope/internal/testenv/charttest"
)

const workload = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
  labels: {app: {{ .Release.Name }}, version: {{ .Chart.AppVersion | quote }}}
spec:
  replicas: {{ .Values.replicas }}
  selector: {matchLabels: {app: {{ .Release.Name }}}}
  template:
    metadata: {labels: {app: {{ .Release.Name }}}}
    spec:
      containers:
        - name: app
          image: "{{ .Values.image }}:{{ .Chart.AppVersion }}"
---
apiVersion: v1
kind: Service
metadata:
  name: {{ .Release.Name }}
spec:
  selector: {app: {{ .Release.Name }}}
  ports: [{port: 80}]
`

// benchCharts is one chart's history: 1.0.0 installed, blocked at 1.36 by its kubeVersion
// (or, for every fifth chart, by a removed API in its manifest), and the fix fixAt versions
// up; the versions between alternate between a kubeVersion that excludes 1.36 (passed over)
// and one that admits it but renders networking.k8s.io/v1beta1 Ingress (judged, blocked).
func benchCharts(name string, fixAt int, byAPI bool) []charttest.Chart {
	var out []charttest.Chart
	for i := 0; i <= fixAt+2; i++ {
		c := charttest.Chart{Name: name, Version: fmt.Sprintf("1.%d.0", i), AppVersion: fmt.Sprintf("2.%d", i),
			Values: map[string]any{"replicas": 2, "image": "example/" + name}, Templates: map[string]string{"app.yaml": workload}}
		switch {
		case i == 0 && byAPI:
			c.KubeVersion = ">=1.16.0-0"
			c.Templates["ingress.yaml"] = ingressV1beta1["obj.yaml"]
		case i == 0 || i < fixAt && i%2 == 1:
			c.KubeVersion = ">=1.16.0-0 <1.36.0-0"
		case i < fixAt:
			c.KubeVersion = ">=1.16.0-0"
			c.Templates["ingress.yaml"] = ingressV1beta1["obj.yaml"]
		default:
			c.KubeVersion = ">=1.19.0-0"
			c.Templates["ingress.yaml"] = ingressV1["obj.yaml"]
		}
		out = append(out, c)
	}
	return out
}

// BenchmarkAdvise200Releases advises 200 blocked Helm releases (50 charts, 4 releases each,
// fixes 2 to 5 versions up) at 1.36 against a warm cache: charts/repo's Reader over a loopback index.yaml, every
// archive already read once into its cache directory.
//
// Measured on the 2-core development machine, shared with other builds: 0.36-0.42 s/op,
// 141 MB and 675k allocations per op; the test binary's peak RSS 132 MiB (`go test -c`, then
// `/usr/bin/time -v advisor.test -test.bench Advise200 -test.benchtime 3x`; under `go test`
// time -v reports the compiler's ~1 GB instead). Four batched evaluations of up to 200
// releases each, and ~1,000 renderings.
func BenchmarkAdvise200Releases(b *testing.B) {
	var charts []charttest.Chart
	var subjects []advisor.Subject
	for c := 0; c < 50; c++ {
		name := fmt.Sprintf("app%02d", c)
		history := benchCharts(name, 2+c%4, c%5 == 0)
		charts = append(charts, history...)
		for r := 0; r < 4; r++ {
			apis := []string{"apps/v1 Deployment", "v1 Service"}
			if c%5 == 0 {
				apis = append(apis, "networking.k8s.io/v1beta1 Ingress")
			}
			subjects = append(subjects, helmSubject(fmt.Sprintf("team-%d", r), name, history[0], apis...))
		}
	}
	srv := charttest.ServeIndex(b, charts...)
	dir := b.TempDir()
	config := filepath.Join(dir, "repositories.yaml")
	if err := os.WriteFile(config, []byte("apiVersion: v1\nrepositories:\n  - name: loopback\n    url: "+srv.URL+"\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	r, err := repo.New(repo.Options{CacheDir: filepath.Join(dir, "cache"), Timeout: 10 * time.Second, RepositoryConfig: config})
	if err != nil {
		b.Fatal(err)
	}
	opts := advisor.Options{Targets: []string{"1.36"}, Engine: loadEngine(b), Now: now, Repository: r}
	ctx := context.Background()
	advisor.Advise(ctx, subjects, opts) // warms the cache: the index and every archive read once
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		got := advisor.Advise(ctx, subjects, opts)
		if len(got) != 200 {
			b.Fatalf("%d entries, want 200", len(got))
		}
		for _, a := range got {
			if last := a.Versions[len(a.Versions)-1]; len(last.Blocks) != 0 || last.Error != "" {
				b.Fatalf("%s/%s: no fix found: %+v", a.Namespace, a.Name, a.Versions)
			}
		}
	}
}
