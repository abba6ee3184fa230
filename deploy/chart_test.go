// Package deploy holds the Helm chart; its tests render it with the Helm 4 SDK.
package deploy

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/common/util"
	"helm.sh/helm/v4/pkg/chart/v2/lint"
	"helm.sh/helm/v4/pkg/chart/v2/lint/support"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/engine"
)

const chartDir = "chart/upgradescope"

func TestTheChartShipsTheCRDManifest(t *testing.T) {
	shipped, err := os.ReadFile(chartDir + "/crds/clusterreadiness.yaml")
	if err != nil {
		t.Fatal(err)
	}
	source, err := os.ReadFile("../crd/clusterreadiness.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(shipped, source) {
		t.Error("deploy/chart/upgradescope/crds/clusterreadiness.yaml differs from crd/clusterreadiness.yaml: cp crd/clusterreadiness.yaml deploy/chart/upgradescope/crds/")
	}
}

func TestTheChartLintsClean(t *testing.T) {
	linter := lint.RunAll(chartDir, nil, "upgradescope")
	for _, m := range linter.Messages {
		if m.Severity > support.InfoSev {
			t.Errorf("helm lint: %s", m.Error())
		}
	}
}

func render(t *testing.T, values map[string]any) string {
	t.Helper()
	out, err := renderChart(values)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func renderChart(values map[string]any) (string, error) {
	chrt, err := loader.Load(chartDir)
	if err != nil {
		return "", err
	}
	vals, err := util.ToRenderValues(chrt, values, common.ReleaseOptions{Name: "us", Namespace: "upgradescope", IsInstall: true}, common.DefaultCapabilities)
	if err != nil {
		return "", err
	}
	out, err := engine.Render(chrt, vals)
	if err != nil {
		return "", err
	}
	var all strings.Builder
	for _, name := range []string{"upgradescope/templates/rbac.yaml", "upgradescope/templates/deployment.yaml", "upgradescope/templates/bundle-key.yaml"} {
		all.WriteString(out[name])
	}
	return all.String(), nil
}

func TestChartRefusesBundleURLsWithoutAVerificationKey(t *testing.T) {
	_, err := renderChart(map[string]any{"bundles": map[string]any{"urls": []any{"https://bundles.example/kb.tar.gz"}}})
	if err == nil || !strings.Contains(err.Error(), "bundles.urls needs bundles.verificationKey") {
		t.Errorf("render = %v, want the chart to refuse unsigned polling", err)
	}
}

func TestChartValues(t *testing.T) {
	tests := []struct {
		name          string
		values        map[string]any
		want, notWant []string
	}{
		{"by default the agent manages the CRD and may patch it", nil,
			[]string{"--manage-crd=true", "customresourcedefinitions", "--health-addr=:8081", "--log-format=text", "image: \"ghcr.io/upgradescope/upgradescope:0.1.0\""}, []string{"--targets"}},
		{"manageCRD false drops the CRD write permission", map[string]any{"agent": map[string]any{"manageCRD": false}},
			[]string{"--manage-crd=false"}, []string{"customresourcedefinitions"}},
		{"targets make the agent own spec.targets", map[string]any{"agent": map[string]any{"targets": []any{"1.37", "1.38"}}},
			[]string{"--targets=1.37,1.38"}, nil},
		{"bundle URLs are polled with the key from a ConfigMap and a cache",
			map[string]any{"bundles": map[string]any{"urls": []any{"https://bundles.example/kb.tar.gz"}, "verificationKey": "-----BEGIN PUBLIC KEY-----\nabc\n-----END PUBLIC KEY-----\n",
				"tokenSecret": map[string]any{"name": "bundle-token", "key": "token"}}},
			[]string{"--bundle-url=https://bundles.example/kb.tar.gz", "--verification-key=/etc/upgradescope/bundles/key.pem",
				"--bundle-cache=/var/cache/upgradescope/bundles", "--bundle-token-file=/etc/upgradescope/bundle-token/token",
				"key.pem: \"-----BEGIN PUBLIC KEY-----\\nabc", "emptyDir: {}", "secretName: bundle-token"}, nil},
		{"without bundle URLs nothing about bundles is rendered", nil, nil, []string{"--bundle", "bundle-key"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := render(t, tt.values)
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("rendered chart lacks %q", w)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(out, w) {
					t.Errorf("rendered chart has %q", w)
				}
			}
		})
	}
}
