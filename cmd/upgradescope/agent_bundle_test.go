package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/upgradescope/upgradescope/crd"
	"github.com/upgradescope/upgradescope/internal/testenv/bundletest"
	"github.com/upgradescope/upgradescope/internal/testenv/kubetest"
)

// everyFindingCategory suppresses every finding, so the verdict moves only with what the kb
// can assess: other tests write objects to the same server while this one runs.
var everyFindingCategory = []string{"removed-api", "deprecated-api", "deprecated-api-in-use", "eol-addon", "eol-approaching",
	"chart-incompat", "addon-no-data", "crd-version", "unknown-api", "version-skew", "kb-stale", "support-lifecycle",
	// the behavioural pack's: tests sharing the API server create pods it judges
	"removed-behaviour", "deprecated-behaviour",
	// the pre-flight packs': tests sharing the API server create budgets, webhooks and nodes
	"drain", "admission-webhook", "aggregated-api", "crd-conversion", "node-health", "feature-gates", "node-runtime"}

// TestAgentPicksUpANewKBRevisionFromBundleServeWithoutRestart runs `bundle serve` and the
// agent binary against the real API server. The served kb knows Kubernetes up to 1.35, so
// target 1.36 is unknown; a new revision knowing 1.37 is published and the same agent process
// turns the verdict ready. An unsigned revision after that is refused and reported, and the
// last good kb stays active. Beside it the agent polls the example custom pack, built and
// signed with the CLI, whose warning appears for an Endpoints object in a prod-* namespace.
func TestAgentPicksUpANewKBRevisionFromBundleServeWithoutRestart(t *testing.T) {
	kubeconfig := kubetest.Kubeconfig(t, kubetest.EnvServer)
	dyn := dynamic.NewForConfigOrDie(kubetest.Config(t, kubetest.EnvServer, "admin"))
	objects := dyn.Resource(crd.GVR)
	ctx := context.Background()
	const name = "agent-bundles-e2e"
	if err := crd.Apply(ctx, dyn); err != nil {
		t.Fatal(err)
	}
	_ = objects.Delete(ctx, name, metav1.DeleteOptions{})
	var ignore []any
	for _, c := range everyFindingCategory {
		ignore = append(ignore, map[string]any{"category": c, "reason": "the verdict under test is the kb's"})
	}
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": crd.Group + "/" + crd.Version, "kind": crd.Kind,
		"metadata": map[string]any{"name": name}, "spec": map[string]any{"targets": []any{"1.36"}, "ignore": ignore}}}
	if _, err := objects.Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	prodEndpoints(t)

	dir := t.TempDir()
	private, public := bundletest.Keys(t, t.TempDir())
	served := filepath.Join(dir, "kb.tar.gz")
	bundletest.Publish(t, served, bundletest.KB(t, private, "2027-01-05.1", "1.35"))
	buildBinary(t)
	acme := filepath.Join(t.TempDir(), "acme.tar.gz")
	for _, args := range [][]string{
		{"bundle", "build", "../../examples/policies", "-o", acme},
		{"bundle", "sign", acme, "--signing-key", private, "-o", filepath.Join(dir, "acme.tar.gz")},
	} {
		if out, err := exec.Command(agentBin, args...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
	}
	base := startBundleServe(t, dir)
	url := base + "/kb.tar.gz"
	cache := filepath.Join(t.TempDir(), "bundle-cache")
	logs := startAgent(t, kubeconfig, "--cr-name", name, "--bundle-url", url, "--bundle-url", base+"/acme.tar.gz",
		"--verification-key", public, "--bundle-cache", cache,
		"--bundle-poll-min-delay", "1s", "--bundle-poll-max-delay", "2s", "--bundle-long-poll", "20s")

	old := waitForBundleStatus(t, objects, name, "2027-01-05.1", "unknown")
	if !strings.Contains(strings.Join(old.Status.NotAssessed, "\n"), "kb-coverage: target 1.36 is past the knowledge base horizon 1.35") {
		t.Errorf("notAssessed %q does not name the old kb's horizon", old.Status.NotAssessed)
	}
	if c := apimeta.FindStatusCondition(old.Status.Conditions, crd.ConditionBundlesCurrent); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("BundlesCurrent = %+v, want True", c)
	}

	bundletest.Publish(t, served, bundletest.KB(t, private, "2027-01-12.1", "1.37"))
	cur := waitForBundleStatus(t, objects, name, "2027-01-12.1", "ready")
	kb, custom := cur.Status.Bundles[1], cur.Status.Bundles[2]
	if kb.Source != url || kb.ActivatedAt == nil || cur.Status.Bundles[0].Source != "embedded" || custom.Name != "acme" {
		t.Errorf("bundles = %+v, want embedded rules, the served kb with its activation time and the acme pack", cur.Status.Bundles)
	}
	if n := cur.Status.Targets[0].ByCategory["acme-prod-deprecated"]; n < 1 {
		t.Errorf("byCategory = %v, want the acme pack's warning for prod-bundles-e2e/db", cur.Status.Targets[0].ByCategory)
	}
	if c := apimeta.FindStatusCondition(cur.Status.Conditions, crd.ConditionReady); c == nil || c.Status != metav1.ConditionTrue {
		t.Errorf("Ready = %+v after the new kb, want True", c)
	}

	bundletest.Publish(t, served, bundletest.KB(t, "", "2027-01-19.1", "1.37"))
	refused := waitForCondition(t, objects, name, crd.ConditionBundlesCurrent, metav1.ConditionFalse)
	if kbRev := refused.Status.Bundles[1].Revision; kbRev != "2027-01-12.1" || refused.Status.Targets[0].Verdict != "ready" {
		t.Errorf("after an unsigned revision kb = %s, verdict %s (not assessed: %q); want 2027-01-12.1 kept and still ready",
			kbRev, refused.Status.Targets[0].Verdict, refused.Status.NotAssessed)
	}
	if n := strings.Count(logs.String(), "agent starting"); n != 1 || !strings.Contains(logs.String(), "bundle activated") {
		t.Errorf("agent started %d times, log:\n%s", n, logs.String())
	}
	if entries, err := os.ReadDir(cache); err != nil || len(entries) != 4 {
		t.Errorf("bundle cache holds %v (%v), want each URL's last good bundle and its ETag", entries, err)
	}
}

// prodEndpoints writes an Endpoints object (v1, deprecated since 1.33) into a prod-*
// namespace, what the acme pack warns about.
func prodEndpoints(t *testing.T) {
	t.Helper()
	cs := kubernetes.NewForConfigOrDie(kubetest.Config(t, kubetest.EnvServer, "admin"))
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "prod-bundles-e2e"}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	// A label gives the object a managedFields entry: an object with no fields set has none,
	// and then nothing shows who writes it through v1.
	ep := &corev1.Endpoints{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: ns.Name, Labels: map[string]string{"app": "db"}}}
	_ = cs.CoreV1().Endpoints(ns.Name).Delete(ctx, ep.Name, metav1.DeleteOptions{})
	if _, err := cs.CoreV1().Endpoints(ns.Name).Create(ctx, ep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// startBundleServe runs `upgradescope bundle serve DIR` on a free loopback port and returns
// its base URL.
func startBundleServe(t *testing.T, dir string) string {
	t.Helper()
	buildBinary(t)
	cmd := exec.Command(agentBin, "bundle", "serve", dir, "--listen", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() })
	line, err := bufio.NewReader(stderr).ReadString('\n')
	m := regexp.MustCompile(`on (http://127\.0\.0\.1:\d+)`).FindStringSubmatch(line)
	if err != nil || m == nil {
		t.Fatalf("bundle serve said %q (%v)", line, err)
	}
	go func() { _, _ = io.Copy(io.Discard, stderr) }()
	return m[1]
}

func waitForBundleStatus(t *testing.T, objects dynamic.NamespaceableResourceInterface, name, kbRevision, verdict string) crd.ClusterReadiness {
	t.Helper()
	return waitForCR(t, objects, name, "kb "+kbRevision+" and verdict "+verdict, func(cr crd.ClusterReadiness) bool {
		return len(cr.Status.Bundles) == 3 && cr.Status.Bundles[1].Revision == kbRevision &&
			len(cr.Status.Targets) == 1 && cr.Status.Targets[0].Verdict == verdict
	})
}

func waitForCondition(t *testing.T, objects dynamic.NamespaceableResourceInterface, name, condition string, status metav1.ConditionStatus) crd.ClusterReadiness {
	t.Helper()
	return waitForCR(t, objects, name, condition+"="+string(status), func(cr crd.ClusterReadiness) bool {
		c := apimeta.FindStatusCondition(cr.Status.Conditions, condition)
		return c != nil && c.Status == status && len(cr.Status.Bundles) == 3 && len(cr.Status.Targets) == 1
	})
}

func waitForCR(t *testing.T, objects dynamic.NamespaceableResourceInterface, name, what string, ok func(crd.ClusterReadiness) bool) crd.ClusterReadiness {
	t.Helper()
	var cr crd.ClusterReadiness
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		obj, err := objects.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		cr = crd.ClusterReadiness{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &cr); err != nil {
			return false, err
		}
		return ok(cr), nil
	})
	if err != nil {
		raw, _ := json.Marshal(cr.Status)
		t.Fatalf("status never showed %s: %v\n%s", what, err, raw)
	}
	return cr
}
