package chart

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/common/util"
	"helm.sh/helm/v4/pkg/chart/v2/lint"
	"helm.sh/helm/v4/pkg/chart/v2/lint/support"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/engine"
	"sigs.k8s.io/yaml"
)

const chartDir = "upgradescope"

var update = flag.Bool("update", false, "rewrite the golden renders in testdata/")

// Release the tests render as: `helm install us deploy/chart/upgradescope -n upgradescope`.
var release = common.ReleaseOptions{Name: "us", Namespace: "upgradescope", IsInstall: true}

func TestTheChartShipsTheCRDManifest(t *testing.T) {
	shipped, err := os.ReadFile(chartDir + "/crds/clusterreadiness.yaml")
	if err != nil {
		t.Fatal(err)
	}
	source, err := os.ReadFile("../../crd/clusterreadiness.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(shipped, source) {
		t.Error("deploy/chart/upgradescope/crds/clusterreadiness.yaml differs from crd/clusterreadiness.yaml: cp crd/clusterreadiness.yaml deploy/chart/upgradescope/crds/")
	}
}

// The chart carries the repository's license: its text, and the SPDX identifier Artifact Hub
// shows.
func TestTheChartShipsTheLicenseAndNamesIt(t *testing.T) {
	shipped, err := os.ReadFile(chartDir + "/LICENSE")
	if err != nil {
		t.Fatal(err)
	}
	source, err := os.ReadFile("../../LICENSE")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(shipped, source) {
		t.Error("deploy/chart/upgradescope/LICENSE differs from LICENSE: cp LICENSE deploy/chart/upgradescope/")
	}
	chrt, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	if got := chrt.Metadata.Annotations["artifacthub.io/license"]; got != "Apache-2.0" {
		t.Errorf("Chart.yaml annotation artifacthub.io/license = %q, want Apache-2.0", got)
	}
}

// renderChart renders the chart as `helm template` does: values checked against
// values.schema.json, then every template. It answers the manifests by template name, empty
// ones left out.
func renderChart(values map[string]any) (map[string]string, error) {
	chrt, err := loader.Load(chartDir)
	if err != nil {
		return nil, err
	}
	vals, err := util.ToRenderValuesWithSchemaValidation(chrt, values, release, common.DefaultCapabilities, false)
	if err != nil {
		return nil, err
	}
	out, err := engine.Render(chrt, vals)
	if err != nil {
		return nil, err
	}
	for name, body := range out {
		if strings.TrimSpace(body) == "" || strings.HasSuffix(name, "NOTES.txt") {
			delete(out, name)
		}
	}
	return out, nil
}

// render is renderChart as one document, in template name order, each with its source.
func render(t *testing.T, values map[string]any) string {
	t.Helper()
	out, err := renderChart(values)
	if err != nil {
		t.Fatal(err)
	}
	return joined(out)
}

func joined(out map[string]string) string {
	var all strings.Builder
	for _, name := range slices.Sorted(mapKeys(out)) {
		all.WriteString("---\n# Source: " + name + "\n")
		all.WriteString(strings.TrimLeft(out[name], "\n"))
		if !strings.HasSuffix(out[name], "\n") {
			all.WriteString("\n")
		}
	}
	return all.String()
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// objects decodes a render into its Kubernetes objects.
func objects(t *testing.T, rendered string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, doc := range strings.Split(rendered, "\n---\n") {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatalf("rendered document does not parse: %v\n%s", err, doc)
		}
		if obj != nil {
			out = append(out, obj)
		}
	}
	return out
}

func values(t *testing.T, doc string) map[string]any {
	t.Helper()
	var v map[string]any
	if err := yaml.Unmarshal([]byte(doc), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// hubValues: the server with PostgreSQL, two replicas and an Ingress with TLS.
const hubValues = `
agent: {enabled: false}
server:
  enabled: true
  replicas: 2
  existingSecret: upgradescope-tokens
  existingSecretKeys: {ingestToken: ingest, readToken: read, adminToken: admin}
  database: {existingSecret: upgradescope-db}
  targets: ["1.36", "1.37"]
  ingress:
    enabled: true
    className: nginx
    host: upgradescope.example.com
    annotations: {cert-manager.io/cluster-issuer: letsencrypt}
metrics:
  serviceMonitor: {enabled: true}
  prometheusRule: {enabled: true, labels: {release: prometheus}}
`

// The golden renders are read by hand before they are committed (go test -update).
var goldens = []struct {
	name, values string
}{
	{"agent-only", ``},
	{"agent-plus-server", `
server: {enabled: true, ingestToken: ingest-token-0123456789}
`},
	{"hub-postgres-ingress", hubValues},
	{"agent-audit-log", `
agent:
  auditLog:
    path: /var/log/kubernetes/audit
    since: 14d
    volume: {persistentVolumeClaim: {claimName: apiserver-audit, readOnly: true}}
`},
	{"server-tls-cert-manager", `
server:
  enabled: true
  ingestToken: ingest-token-0123456789
  readToken: read-token-0123456789
  tls: {certManager: {enabled: true, issuerRef: {name: cluster-ca, kind: ClusterIssuer}}}
metrics: {serviceMonitor: {enabled: true}}
`},
	{"networkpolicy", `
rbac: {helmStorage: false, gitops: {argocd: true, flux: true}}
server:
  enabled: true
  ingestToken: ingest-token-0123456789
  teamMap: [{pattern: "payments-*", team: payments}, {pattern: "kube-*", team: platform}]
  notifications: {existingSecret: notify, slackWebhookKey: slack, webhookKey: url, webhookSecretKey: key}
networkPolicy:
  enabled: true
  serverIngressFrom:
    - namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: ingress-nginx}}
`},
}

func TestTheChartLintsCleanOverTheValuesMatrix(t *testing.T) {
	for _, g := range goldens {
		t.Run(g.name, func(t *testing.T) {
			linter := lint.RunAll(chartDir, values(t, g.values), release.Namespace)
			for _, m := range linter.Messages {
				if m.Severity > support.InfoSev {
					t.Errorf("helm lint: %s", m.Error())
				}
			}
		})
	}
}

func TestRendersMatchTheGoldenFiles(t *testing.T) {
	for _, g := range goldens {
		t.Run(g.name, func(t *testing.T) {
			got := render(t, values(t, g.values))
			objects(t, got)
			path := filepath.Join("testdata", g.name+".yaml")
			if *update {
				if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (go test ./deploy/chart -run TestRendersMatchTheGoldenFiles -update, then read it)", err)
			}
			if got != string(want) {
				t.Errorf("render differs from %s (go test -update rewrites it; read the diff)", path)
			}
		})
	}
}
