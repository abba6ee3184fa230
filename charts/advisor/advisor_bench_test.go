package advisor_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	chartv2 "helm.sh/helm/v4/pkg/chart/v2"
	helmrepo "helm.sh/helm/v4/pkg/repo/v1"

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
// fixes 2 to 5 versions up) at 1.36 against a warm cache, as a scan run does: each
// iteration is a new charts/repo Reader, as each run is, so the index is downloaded and
// parsed again (its archives come from the cache directory). The index holds 5,000 versions
// of another chart besides the 50, a large public repository's shape. It reports the
// process's peak RSS so far (peak-RSS-MiB), at one target and at three plan hops.
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
	padIndex(b, srv, 5000)
	dir := b.TempDir()
	config := filepath.Join(dir, "repositories.yaml")
	if err := os.WriteFile(config, []byte("apiVersion: v1\nrepositories:\n  - name: loopback\n    url: "+srv.URL+"\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	reader := func() *repo.Reader {
		r, err := repo.New(repo.Options{CacheDir: filepath.Join(dir, "cache"), Timeout: 10 * time.Second, RepositoryConfig: config})
		if err != nil {
			b.Fatal(err)
		}
		return r
	}
	// One target, as a scan judges the next minor; three, as --plan 1.35 → 1.37 does (each
	// version is rendered and judged at every hop).
	for _, targets := range [][]string{{"1.36"}, {"1.35", "1.36", "1.37"}} {
		b.Run(fmt.Sprintf("%d-targets", len(targets)), func(b *testing.B) {
			opts := advisor.Options{Targets: targets, Engine: loadEngine(b), Now: now, Repository: reader()}
			ctx := context.Background()
			advisor.Advise(ctx, subjects, opts) // warms the cache: every archive read once
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				opts.Repository = reader()
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
			b.StopTimer()
			reportPeakRSS(b)
		})
	}
}

// padIndex adds n versions of a chart no release uses to srv's index.yaml.
func padIndex(b *testing.B, srv *charttest.Repo, n int) {
	b.Helper()
	path := filepath.Join(srv.Dir, "index.yaml")
	idx, err := helmrepo.LoadIndexFile(path)
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < n; i++ {
		md := &chartv2.Metadata{APIVersion: chartv2.APIVersionV2, Name: "padding", Version: fmt.Sprintf("0.%d.%d", i/100, i%100),
			AppVersion: "1.0", KubeVersion: ">=1.19.0-0", Description: "a chart no release uses"}
		idx.MustAdd(md, fmt.Sprintf("padding-%s.tgz", md.Version), srv.URL, "sha256:0000000000000000000000000000000000000000000000000000000000000000")
	}
	if err := idx.WriteFile(path, 0o600); err != nil {
		b.Fatal(err)
	}
}

// reportPeakRSS reports the process's peak resident set so far, from getrusage.
func reportPeakRSS(b *testing.B) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
		b.ReportMetric(float64(ru.Maxrss)/1024, "peak-RSS-MiB") // Linux reports KiB
	}
}
