package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"

	"github.com/upgradescope/upgradescope/internal/testenv/kubetest"
	"github.com/upgradescope/upgradescope/policies"
)

// preflightPacks are fragments of the finding keys of the pre-flight packs this test needs;
// a build without them (the packs land on their own branch) skips it.
var preflightPacks = []string{"pdb-no-disruption", "no-ready-endpoints"}

func requirePreflightPacks(t *testing.T) {
	t.Helper()
	found := map[string]bool{}
	err := fs.WalkDir(policies.Rules, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".rego") || strings.HasSuffix(path, "_test.rego") {
			return err
		}
		raw, err := fs.ReadFile(policies.Rules, path)
		for _, p := range preflightPacks {
			found[p] = found[p] || strings.Contains(string(raw), p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range preflightPacks {
		if !found[p] {
			t.Skipf("the built-in rules make no %q finding: the pre-flight packs are not in this build yet", p)
		}
	}
}

// `upgradescope scan` of the live test cluster: a PodDisruptionBudget that allows no
// disruption is a drain blocker naming it and its pods, and a Fail webhook whose service has
// no ready endpoint an admission-webhook blocker naming the webhook and its service.
func TestALiveScanShowsADrainBlockerAndAWebhookBlocker(t *testing.T) {
	kubeconfig := kubetest.Kubeconfig(t, kubetest.EnvServer)
	requirePreflightPacks(t)
	c := kubernetes.NewForConfigOrDie(kubetest.Config(t, kubetest.EnvServer, "admin"))
	ctx, bg := context.Background(), context.Background()
	sfx := fmt.Sprint(time.Now().UnixNano() % 1e6)
	ns := "cli-preflight-" + sfx
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}))
	t.Cleanup(func() { _ = c.CoreV1().Namespaces().Delete(bg, ns, metav1.DeleteOptions{}) })
	pods := []string{"shop-1-" + sfx, "shop-2-" + sfx}
	for _, name := range pods {
		must(c.CoreV1().Pods(ns).Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "shop"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "registry.example.com/shop:1"}}}}, metav1.CreateOptions{}))
	}
	// Its status as the disruption controller (none runs here) would write it: every pod
	// healthy, no disruption allowed.
	two := intstr.FromInt32(2)
	pdb, err := c.PolicyV1().PodDisruptionBudgets(ns).Create(ctx, &policyv1.PodDisruptionBudget{ObjectMeta: metav1.ObjectMeta{Name: "shop"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &two, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "shop"}}}}, metav1.CreateOptions{})
	must(pdb, err)
	pdb.Status = policyv1.PodDisruptionBudgetStatus{ObservedGeneration: pdb.Generation, CurrentHealthy: 2, DesiredHealthy: 2, ExpectedPods: 2}
	must(c.PolicyV1().PodDisruptionBudgets(ns).UpdateStatus(ctx, pdb, metav1.UpdateOptions{}))
	must(c.CoreV1().Services(ns).Create(ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "hook"},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "hook"}, Ports: []corev1.ServicePort{{Port: 443}}}}, metav1.CreateOptions{}))
	// Scoped to a namespace label nobody has: it never stops another test's writes.
	fail, none := admissionv1.Fail, admissionv1.SideEffectClassNone
	hook := "cli-preflight-" + sfx
	must(c.AdmissionregistrationV1().ValidatingWebhookConfigurations().Create(ctx, &admissionv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: hook},
		Webhooks: []admissionv1.ValidatingWebhook{{
			Name: "validate." + hook + ".example.com", FailurePolicy: &fail, SideEffects: &none, AdmissionReviewVersions: []string{"v1"},
			ClientConfig:      admissionv1.WebhookClientConfig{Service: &admissionv1.ServiceReference{Namespace: ns, Name: "hook"}},
			NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"upgradescope-preflight-test": sfx}},
			Rules: []admissionv1.RuleWithOperations{{Operations: []admissionv1.OperationType{admissionv1.Create},
				Rule: admissionv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}}}},
		}},
	}, metav1.CreateOptions{}))
	t.Cleanup(func() {
		_ = c.AdmissionregistrationV1().ValidatingWebhookConfigurations().Delete(bg, hook, metav1.DeleteOptions{})
	})

	r := runCLI(t, "scan", "--kubeconfig", kubeconfig, "--context", "admin", "--target", "1.36", "-o", "json", pinned)
	var rep struct {
		Targets []struct {
			Verdict  string `json:"verdict"`
			Findings []struct {
				Key, Category, Severity, Title, Detail string
			} `json:"findings"`
		} `json:"targets"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || len(rep.Targets) != 1 {
		t.Fatalf("exit %d: %v\n%s\n%s", r.code, err, r.stdout, r.stderr)
	}
	want := []struct {
		category, key string
		names         []string
	}{
		{"drain", "drain/pdb-no-disruption/" + ns + "/shop", append([]string{"shop"}, pods...)},
		{"admission-webhook", "admission-webhook/no-ready-endpoints/", []string{hook, "hook"}},
	}
	for _, w := range want {
		found := false
		for _, f := range rep.Targets[0].Findings {
			// The cluster is shared: another test's budget or webhook may block too.
			if f.Category != w.category || !strings.HasPrefix(f.Key, w.key) || !strings.Contains(f.Key+f.Title, w.names[0]) {
				continue
			}
			found = true
			text := f.Title + " " + f.Detail
			for _, n := range w.names {
				if !strings.Contains(text, n) {
					t.Errorf("%s finding %q does not name %s: %s", w.category, f.Key, n, text)
				}
			}
			if f.Severity != "blocker" {
				t.Errorf("%s finding %q is a %s, want a blocker", w.category, f.Key, f.Severity)
			}
		}
		if !found {
			t.Errorf("no %s finding %s… in %+v", w.category, w.key, rep.Targets[0].Findings)
		}
	}
	if r.code != 2 || rep.Targets[0].Verdict != "blocked" {
		t.Errorf("exit %d verdict %s, want 2 and blocked", r.code, rep.Targets[0].Verdict)
	}
}
