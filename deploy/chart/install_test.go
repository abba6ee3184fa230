package chart

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/internal/testenv/syncbuf"

	"helm.sh/helm/v4/pkg/action"
	"helm.sh/helm/v4/pkg/chart/v2/loader"
	"helm.sh/helm/v4/pkg/kube"
	helmrelease "helm.sh/helm/v4/pkg/release"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/upgradescope/upgradescope/crd"
	"github.com/upgradescope/upgradescope/internal/testenv/kubetest"
)

// installRelease installs the chart with the SDK's install action, as `helm install
// --create-namespace` does, and uninstalls it when the test ends. It waits for nothing but
// hooks: the test API server runs no controllers, so no pod ever starts.
func installRelease(t *testing.T, kubeconfig, name, namespace string, vals map[string]any) string {
	t.Helper()
	cfg := actionConfig(t, kubeconfig, namespace)
	chrt, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	uninstall := func() {
		u := action.NewUninstall(cfg)
		u.WaitStrategy = kube.HookOnlyStrategy
		u.IgnoreNotFound = true
		_, _ = u.Run(name)
	}
	uninstall() // a run that died left it behind
	inst := action.NewInstall(cfg)
	inst.ReleaseName, inst.Namespace, inst.CreateNamespace = name, namespace, true
	inst.WaitStrategy = kube.HookOnlyStrategy
	inst.Timeout = time.Minute
	inst.ServerSideApply = true
	rel, err := inst.RunWithContext(context.Background(), chrt, vals)
	if err != nil {
		t.Fatalf("helm install %s: %v", name, err)
	}
	t.Cleanup(uninstall)
	acc, err := helmrelease.NewAccessor(rel)
	if err != nil {
		t.Fatal(err)
	}
	return acc.Manifest()
}

func actionConfig(t *testing.T, kubeconfig, namespace string) *action.Configuration {
	t.Helper()
	flags := genericclioptions.NewConfigFlags(false)
	kubeContext := "admin"
	flags.KubeConfig, flags.Context, flags.Namespace = &kubeconfig, &kubeContext, &namespace
	cfg := action.NewConfiguration()
	if err := cfg.Init(flags, namespace, "secret"); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// impersonating writes a kubeconfig whose current context is the admin acting as the
// ServiceAccount, as the agent's pod would be.
func impersonating(t *testing.T, kubeconfig, namespace, serviceAccount string) string {
	t.Helper()
	raw, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	admin := raw.Contexts["admin"]
	as := raw.AuthInfos[admin.AuthInfo].DeepCopy()
	as.Impersonate = "system:serviceaccount:" + namespace + ":" + serviceAccount
	as.ImpersonateGroups = []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"}
	raw.AuthInfos["sa"] = as
	ctx := admin.DeepCopy()
	ctx.AuthInfo = "sa"
	raw.Contexts["sa"] = ctx
	raw.CurrentContext = "sa"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*raw, path); err != nil { // written 0600
		t.Fatal(err)
	}
	return path
}

// gap is what a report says could not be assessed.
type gap struct {
	Capability string   `json:"capability"`
	Reason     string   `json:"reason"`
	Partial    bool     `json:"partial"`
	Skipped    []string `json:"skipped"`
}

func (g gap) forbidden() bool {
	return strings.Contains(strings.ToLower(g.Reason+strings.Join(g.Skipped, " ")), "forbidden")
}

// documented: the one refusal the chart's README names. Custom resources served at a
// deprecated version of some CRD (another test's, when the API server is shared) are listed
// when the scan finds them; no role written in advance can name them. The CRDs themselves
// are read (partial, not unavailable).
func (g gap) documented() bool {
	return g.Capability == "crds" && g.Partial
}

// scanGaps runs `upgradescope scan` against the kubeconfig's current context and answers
// what every target reports not assessed.
func scanGaps(t *testing.T, kubeconfig string) []gap {
	t.Helper()
	cmd := exec.Command(binary(t), "scan", "--kubeconfig", kubeconfig, "--target", "1.36", "--output", "json", "--quiet")
	out, err := cmd.Output()
	var exit *exec.ExitError
	// 2 is a failed gate or an unknown verdict; the report is still written.
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 2) {
		t.Fatalf("upgradescope scan: %v\n%s", err, stderrOf(err))
	}
	var rep struct {
		Targets []struct {
			NotAssessed []gap `json:"notAssessed"`
		} `json:"targets"`
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("scan output: %v\n%s", err, out)
	}
	var gaps []gap
	for _, target := range rep.Targets {
		gaps = append(gaps, target.NotAssessed...)
	}
	return gaps
}

func stderrOf(err error) string {
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return string(exit.Stderr)
	}
	return ""
}

// gitopsCRDs serve Argo CD Applications and Flux HelmReleases and OCIRepositories, so that
// a scan asks for them: Argo CD's and Flux's own CRDs from ../shared/kube/crds beside the
// checkout, else minimal ones with the same names, applied exactly as collectors/gitops'
// tests apply them (same field manager), since they may share the API server.
func gitopsCRDs(t *testing.T) {
	t.Helper()
	dyn := dynamic.NewForConfigOrDie(kubetest.Config(t, kubetest.EnvServer, "admin"))
	for _, c := range []struct{ file, group, kind, plural, version string }{
		{"argocd/application-crd.yaml", "argoproj.io", "Application", "applications", "v1alpha1"},
		{"flux/helm.toolkit.fluxcd.io_helmreleases.yaml", "helm.toolkit.fluxcd.io", "HelmRelease", "helmreleases", "v2"},
		{"flux/source.toolkit.fluxcd.io_ocirepositories.yaml", "source.toolkit.fluxcd.io", "OCIRepository", "ocirepositories", "v1"},
	} {
		raw, err := os.ReadFile(filepath.Join("..", "..", "..", "shared", "kube", "crds", c.file))
		if err != nil {
			raw, _ = json.Marshal(map[string]any{
				"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
				"metadata": map[string]any{"name": c.plural + "." + c.group},
				"spec": map[string]any{
					"group": c.group, "scope": "Namespaced",
					"names": map[string]any{"kind": c.kind, "plural": c.plural, "singular": "", "listKind": c.kind + "List"},
					"versions": []any{map[string]any{"name": c.version, "served": true, "storage": true,
						"schema":       map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
						"subresources": map[string]any{"status": map[string]any{}}}},
				},
			})
		}
		if err := crd.ApplyDefinition(context.Background(), dyn, raw, "upgradescope-test"); err != nil {
			t.Fatal(err)
		}
	}
}

// The chart's role against the real API server: with rbac.gitops on, the agent's
// ServiceAccount sees everything an admin sees (nothing is forbidden); without it, the GitOps
// reads (folded into the helm capability) are the only thing refused.
func TestTheInstalledChartsRoleSeesEveryCapability(t *testing.T) {
	kubeconfig := kubetest.Kubeconfig(t, kubetest.EnvServer)
	gitopsCRDs(t)
	// Every kind the API server serves without add-ons, so it validates them all: the server
	// with two replicas (PostgreSQL, a PDB), an Ingress, a team map and a NetworkPolicy.
	installRelease(t, kubeconfig, "chart-full", "chart-full", values(t, `
rbac: {gitops: {argocd: true, flux: true}}
server:
  enabled: true
  replicas: 2
  ingestToken: ingest-token-0123456789
  database: {existingSecret: upgradescope-db}
  teamMap: [{pattern: "payments-*", team: payments}]
  ingress: {enabled: true, host: upgradescope.example.com}
networkPolicy:
  enabled: true
  serverIngressFrom: [{namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: ingress-nginx}}}]
`))
	// Its own ClusterReadiness: other tests may share the API server and keep "cluster".
	plain := installRelease(t, kubeconfig, "chart-plain", "chart-plain", values(t, `agent: {crName: chart-test}`))

	admin := map[string]bool{}
	for _, g := range scanGaps(t, adminKubeconfig(t, kubeconfig)) {
		admin[g.Capability] = true
	}

	t.Run("with rbac.gitops nothing is forbidden", func(t *testing.T) {
		for _, g := range scanGaps(t, impersonating(t, kubeconfig, "chart-full", "chart-full-agent")) {
			if g.documented() {
				t.Logf("refused, as the chart's README says: %s: %s %v", g.Capability, g.Reason, g.Skipped)
				continue
			}
			if g.forbidden() {
				t.Errorf("the chart's role is refused: %s: %s %v", g.Capability, g.Reason, g.Skipped)
			}
			if !admin[g.Capability] {
				t.Errorf("the chart's role leaves %s unassessed where an admin does not: %s", g.Capability, g.Reason)
			}
		}
	})
	t.Run("without rbac.gitops only the GitOps reads are forbidden", func(t *testing.T) {
		var refused []gap
		for _, g := range scanGaps(t, impersonating(t, kubeconfig, "chart-plain", "chart-plain-agent")) {
			if g.documented() {
				t.Logf("refused, as the chart's README says: %s: %s %v", g.Capability, g.Reason, g.Skipped)
				continue
			}
			if g.forbidden() {
				refused = append(refused, g)
			} else if !admin[g.Capability] {
				t.Errorf("the chart's role leaves %s unassessed where an admin does not: %s", g.Capability, g.Reason)
			}
		}
		if len(refused) == 0 {
			t.Fatal("nothing reported forbidden: the scan did not ask for Argo CD and Flux objects")
		}
		for _, g := range refused {
			if g.Capability != "helm" || !strings.Contains(g.Reason, "applications") || !strings.Contains(g.Reason, "helmreleases") {
				t.Errorf("refused: %s: %s %v; want only the helm capability's GitOps lists", g.Capability, g.Reason, g.Skipped)
			}
		}
	})
	t.Run("the agent run with the chart's args as its ServiceAccount keeps its ClusterReadiness", func(t *testing.T) {
		args := containerArgs(t, plain)["agent"]
		runAgent(t, impersonating(t, kubeconfig, "chart-plain", "chart-plain-agent"), args)
	})
}

// runAgent runs the agent with a Deployment's args, as the kubeconfig's user, until the
// ClusterReadiness it names has a verdict. Only the health address changes: a pod's ":8081"
// would listen on every interface of this machine.
func runAgent(t *testing.T, kubeconfig string, args []string) {
	t.Helper()
	dyn := dynamic.NewForConfigOrDie(kubetest.Config(t, kubetest.EnvServer, "admin"))
	readiness := dyn.Resource(schema.GroupVersionResource{Group: "upgradescope.basit.engineer", Version: "v1alpha1", Resource: "clusterreadinesses"})
	ctx := context.Background()
	name := ""
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--cr-name="); ok {
			name = v
		}
	}
	_ = readiness.Delete(ctx, name, metav1.DeleteOptions{}) // the agent must be able to create it
	var run []string
	for _, a := range args {
		if strings.HasPrefix(a, "--health-addr=") {
			a = "--health-addr="
		}
		run = append(run, a)
	}
	var logs syncbuf.Buffer
	cmd := exec.Command(binary(t), append(run, "--kubeconfig", kubeconfig)...)
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("agent log:\n%s", logs.String())
		}
	}()
	// A bound, not a timing assertion: the first tick on this small server takes seconds.
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(time.Second) {
		obj, err := readiness.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			continue
		}
		targets, _, _ := unstructured.NestedSlice(obj.Object, "status", "targets")
		if len(targets) > 0 {
			verdict, _, _ := unstructured.NestedString(targets[0].(map[string]any), "verdict")
			if verdict == "" {
				t.Errorf("status.targets[0] has no verdict: %v", targets[0])
			}
			if strings.Contains(strings.ToLower(logs.String()), "forbidden") {
				t.Errorf("the agent was refused something")
			}
			return
		}
	}
	t.Fatal("the agent wrote no ClusterReadiness status within 2 minutes")
}

// adminKubeconfig is the admin context itself, for what a scan with every right reports.
func adminKubeconfig(t *testing.T, kubeconfig string) string {
	t.Helper()
	raw, err := clientcmd.LoadFromFile(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	raw.CurrentContext = "admin"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*raw, path); err != nil {
		t.Fatal(err)
	}
	return path
}
