package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	helmaction "helm.sh/helm/v4/pkg/action"
	chartcommon "helm.sh/helm/v4/pkg/chart/common"
	chartutil "helm.sh/helm/v4/pkg/chart/common/util"
	chartv2util "helm.sh/helm/v4/pkg/chart/v2/util"
	helmengine "helm.sh/helm/v4/pkg/engine"
	"helm.sh/helm/v4/pkg/kube"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"

	"github.com/upgradescope/upgradescope/internal/testenv/charttest"
	"github.com/upgradescope/upgradescope/internal/testenv/kubetest"
	"github.com/upgradescope/upgradescope/report"
)

// demoVersions are one chart's history, written for these tests: 1.0.0 excludes 1.36 by its
// kubeVersion; 1.1.0 admits it but renders an API 1.36 does not serve (the advisor must skip
// it); 1.2.0 is the first that works; 1.3.0 works too; 2.0.0-rc.1 is a pre-release, never
// advised for a stable release.
func demoVersions() []charttest.Chart {
	cm := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-demo\ndata:\n  greeting: {{ .Values.greeting | quote }}\n"
	removed := "apiVersion: flowcontrol.apiserver.k8s.io/v1beta3\nkind: FlowSchema\nmetadata:\n  name: {{ .Release.Name }}-demo\nspec:\n  priorityLevelConfiguration: {name: global-default}\n"
	values := map[string]any{"greeting": "hello"}
	return []charttest.Chart{
		{Name: "demo", Version: "1.0.0", AppVersion: "1.0", KubeVersion: ">=1.30.0-0 <1.36.0-0", Templates: map[string]string{"cm.yaml": cm}, Values: values},
		{Name: "demo", Version: "1.1.0", AppVersion: "1.1", KubeVersion: ">=1.30.0-0", Templates: map[string]string{"cm.yaml": cm, "fs.yaml": removed}, Values: values},
		{Name: "demo", Version: "1.2.0", AppVersion: "1.2", KubeVersion: ">=1.30.0-0", Templates: map[string]string{"cm.yaml": cm}, Values: values},
		{Name: "demo", Version: "1.3.0", AppVersion: "1.3", KubeVersion: ">=1.30.0-0", Templates: map[string]string{"cm.yaml": cm}, Values: values},
		{Name: "demo", Version: "2.0.0-rc.1", AppVersion: "2.0", KubeVersion: ">=1.30.0-0", Templates: map[string]string{"cm.yaml": cm}, Values: values},
	}
}

// secretValue stands for a value that must never leave the process: not in the inventory,
// the report or stderr.
const secretValue = "s3cr3t-token-4f9a1c"

func TestScanAdvisesTheLowestChartVersionForALiveHelmRelease(t *testing.T) {
	kubeconfig := kubetest.Kubeconfig(t, kubetest.EnvServer)
	repo := charttest.ServeIndex(t, demoVersions()...)
	dir := t.TempDir()
	repoConfig := write(t, dir, "repositories.yaml", fmt.Sprintf(
		"apiVersion: \"\"\ngenerated: \"0001-01-01T00:00:00Z\"\nrepositories:\n- name: demo\n  url: %s\n", repo.URL))
	cache := filepath.Join(dir, "cache")
	ns := fmt.Sprintf("advise-%d", time.Now().UnixNano()%1_000_000)
	installDemo(t, kubeconfig, ns, demoVersions()[0])

	args := []string{"scan", "--kubeconfig", kubeconfig, "--context", "admin", "--target", "1.36", "--advise-charts",
		"--helm-repository-config", repoConfig, "--chart-repo-cache", cache, "-o", "json", "--quiet"}
	key := "chart-incompat/helm-release/" + ns + "/web"
	fix := blockerFix(t, runCLI(t, args...), key)
	if fix.Status != "upgrade" || fix.From != "1.0.0" || fix.To != "1.2.0" {
		t.Fatalf("fix = %+v, want an upgrade from 1.0.0 to 1.2.0 (1.1.0 renders an API 1.36 does not serve)", fix)
	}
	verifyVersionWorks(t, demoVersions()[2], "1.36")

	// The same scan from the cache alone, with the repository gone, gives the same fix.
	before := repo.Requests.Load()
	offline := blockerFix(t, runCLI(t, append(args, "--chart-offline")...), key)
	if offline.To != "1.2.0" || repo.Requests.Load() != before {
		t.Errorf("offline fix = %+v after %d requests, want 1.2.0 from the cache alone", offline, repo.Requests.Load()-before)
	}

	// An empty cache offline reads nothing: the fix says so, and the blocker and the verdict
	// stay.
	empty := runCLI(t, append(args[:len(args)-5], "--chart-repo-cache", filepath.Join(dir, "empty"), "--chart-offline", "-o", "json", "--quiet")...)
	if unread := blockerFix(t, empty, key); unread.Status != "unread" || unread.Reason == "" || unread.To != "" {
		t.Errorf("fix with an empty cache offline = %+v, want unread with a reason", unread)
	}
	if v := verdict(t, empty, "1.36"); v != report.VerdictBlocked {
		t.Errorf("verdict with the repository unread = %s, want %s", v, report.VerdictBlocked)
	}

	// The inventory holds the advice, never the release's values.
	inv := runCLI(t, "inventory", "--kubeconfig", kubeconfig, "--context", "admin", "--target", "1.36", "--advise-charts",
		"--helm-repository-config", repoConfig, "--chart-repo-cache", cache, "--chart-offline", "--quiet")
	if inv.code != 0 || !strings.Contains(inv.stdout, `"chartAdvice"`) {
		t.Fatalf("inventory exit %d, no chartAdvice:\n%s", inv.code, inv.stderr)
	}
	if strings.Contains(inv.stdout, secretValue) || strings.Contains(inv.stderr, secretValue) {
		t.Error("the inventory carries a release's values")
	}
}

func TestScanAdvisesAnArgoCDApplicationInFilesMode(t *testing.T) {
	versions := demoVersions()
	index := charttest.ServeIndex(t, versions...)
	oci := charttest.ServeOCI(t, versions...)
	for _, tc := range []struct{ name, repoURL string }{
		{"from an index.yaml repository", index.URL},
		{"from an OCI registry", oci.URL()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			manifests := filepath.Join(dir, "manifests")
			write(t, manifests, "app.yaml", fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: web, namespace: argocd}
spec:
  project: default
  destination: {server: "https://kubernetes.default.svc", namespace: shop}
  source:
    repoURL: %q
    chart: demo
    targetRevision: 1.0.0
    helm:
      valuesObject: {greeting: hi, token: %s}
`, tc.repoURL, secretValue))
			cache := filepath.Join(dir, "cache")
			args := []string{"scan", "--files", manifests, "--target", "1.36", "--advise-charts", "--chart-repo-cache", cache, "-o", "json", "--quiet"}
			key := "chart-incompat/argocd/argocd/web"
			fix := blockerFix(t, runCLI(t, args...), key)
			if fix.Status != "upgrade" || fix.From != "1.0.0" || fix.To != "1.2.0" {
				t.Fatalf("fix = %+v, want an upgrade from 1.0.0 to 1.2.0", fix)
			}
			offline := blockerFix(t, runCLI(t, append(args, "--chart-offline")...), key)
			if offline.To != "1.2.0" {
				t.Errorf("offline fix = %+v, want 1.2.0 from the cache", offline)
			}

			inv := runCLI(t, "inventory", "--files", manifests, "--target", "1.36", "--advise-charts", "--chart-repo-cache", cache, "--chart-offline", "--quiet")
			if inv.code != 0 || !strings.Contains(inv.stdout, `"chartAdvice"`) {
				t.Fatalf("inventory exit %d, no chartAdvice:\n%s", inv.code, inv.stderr)
			}
			if strings.Contains(inv.stdout, secretValue) {
				t.Error("the inventory carries the Application's values")
			}
		})
	}
}

// blockerFix is the fix on the blocker keyed key at the first target of a JSON report.
func blockerFix(t *testing.T, res result, key string) report.ChartFix {
	t.Helper()
	if res.code != exitGate {
		t.Fatalf("scan exit %d, want %d (blocked):\n%s", res.code, exitGate, res.stderr)
	}
	if strings.Contains(res.stdout, secretValue) || strings.Contains(res.stderr, secretValue) {
		t.Fatal("the report or stderr carries a value")
	}
	var rep report.Report
	if err := json.Unmarshal([]byte(res.stdout), &rep); err != nil {
		t.Fatalf("report: %v", err)
	}
	var keys []string
	for _, f := range rep.Targets[0].Findings {
		keys = append(keys, f.Key)
		if f.Key == key && f.Severity == report.SeverityBlocker {
			if f.Fix == nil {
				t.Fatalf("blocker %s has no fix", key)
			}
			return *f.Fix
		}
	}
	t.Fatalf("no blocker %s among %v", key, keys)
	return report.ChartFix{}
}

func verdict(t *testing.T, res result, target string) string {
	t.Helper()
	var rep report.Report
	if err := json.Unmarshal([]byte(res.stdout), &rep); err != nil {
		t.Fatalf("report: %v", err)
	}
	for _, tr := range rep.Targets {
		if tr.Target == target {
			return tr.Verdict
		}
	}
	return ""
}

// installDemo installs c as release "web" in ns with the Helm SDK's install action, as
// `helm install` does, with a secret-looking value among its values.
func installDemo(t *testing.T, kubeconfig, ns string, c charttest.Chart) {
	t.Helper()
	client := kubernetes.NewForConfigOrDie(kubetest.Config(t, kubetest.EnvServer, "admin"))
	ctx := context.Background()
	if _, err := client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = client.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
	})
	flags := genericclioptions.NewConfigFlags(false)
	kubeContext := "admin"
	flags.KubeConfig, flags.Context, flags.Namespace = &kubeconfig, &kubeContext, &ns
	cfg := helmaction.NewConfiguration()
	if err := cfg.Init(flags, ns, "secret"); err != nil {
		t.Fatal(err)
	}
	inst := helmaction.NewInstall(cfg)
	inst.ReleaseName, inst.Namespace = "web", ns
	inst.WaitStrategy = kube.HookOnlyStrategy
	inst.Timeout = time.Minute
	inst.ServerSideApply = true
	if _, err := inst.RunWithContext(ctx, c.Build(), map[string]any{"greeting": "hi", "token": secretValue}); err != nil {
		t.Fatalf("helm install: %v", err)
	}
}

// verifyVersionWorks renders c on its own with the Helm SDK at target, as the advice's proof:
// its kubeVersion admits the target and every API it renders is one the target serves.
func verifyVersionWorks(t *testing.T, c charttest.Chart, target string) {
	t.Helper()
	ch := c.Build()
	if !chartv2util.IsCompatibleRange(ch.Metadata.KubeVersion, "v"+target+".0") {
		t.Fatalf("%s %s: kubeVersion %q does not admit %s", c.Name, c.Version, ch.Metadata.KubeVersion, target)
	}
	caps := chartcommon.DefaultCapabilities.Copy()
	caps.KubeVersion = chartcommon.KubeVersion{Version: "v" + target + ".0", Major: "1", Minor: strings.TrimPrefix(target, "1.")}
	vals, err := chartutil.ToRenderValues(ch, map[string]any{"greeting": "hi", "token": secretValue},
		chartcommon.ReleaseOptions{Name: "web", Namespace: "shop", IsUpgrade: true}, caps)
	if err != nil {
		t.Fatal(err)
	}
	out, err := helmengine.Render(ch, vals)
	if err != nil {
		t.Fatalf("render %s %s: %v", c.Name, c.Version, err)
	}
	served := map[string]bool{"v1": true, "apps/v1": true}
	for name, text := range out {
		for _, line := range strings.Split(text, "\n") {
			if v, ok := strings.CutPrefix(line, "apiVersion: "); ok && !served[v] {
				t.Errorf("%s %s renders %s in %s, which %s does not serve", c.Name, c.Version, v, name, target)
			}
		}
	}
}
