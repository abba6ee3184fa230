package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/upgradescope/upgradescope/internal/testenv/kubetest"
)

type liveReport struct {
	Source      string `json:"source"`
	KubeContext string `json:"kubeContext"`
	APIServer   string `json:"apiServer"`
	Targets     []struct {
		Verdict  string `json:"verdict"`
		Findings []struct {
			Key      string `json:"key"`
			Severity string `json:"severity"`
		} `json:"findings"`
		NotAssessed []struct {
			Capability string `json:"capability"`
			Required   bool   `json:"required"`
			Reason     string `json:"reason"`
		} `json:"notAssessed"`
	} `json:"targets"`
}

func TestLiveScanOfAnEmulatedServerFindsAPolicyAtARemovedAPI(t *testing.T) {
	kubeconfig := kubetest.Kubeconfig(t, "UPGRADESCOPE_KUBECONFIG_EMULATED")
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig}, &clientcmd.ConfigOverrides{CurrentContext: "admin"}).ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("cli-policy-%d", time.Now().UnixNano()%1e6)
	gvr := kubetest.LegacyAdmissionPolicies
	policy := kubetest.LegacyAdmissionPolicy(name)
	if _, err := dyn.Resource(gvr).Create(context.Background(), policy, metav1.CreateOptions{FieldManager: "policy-bot"}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dyn.Resource(gvr).Delete(context.Background(), name, metav1.DeleteOptions{}) })

	r := runCLI(t, "scan", "--kubeconfig", kubeconfig, "--context", "admin", "--target", "1.34", "-o", "json", pinned)
	var rep liveReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("exit %d: %v\n%s\n%s", r.code, err, r.stdout, r.stderr)
	}
	if rep.Source != "cluster" || rep.KubeContext != "admin" || !strings.HasPrefix(rep.APIServer, "https://127.0.0.1:") {
		t.Errorf("header: source %q context %q server %q", rep.Source, rep.KubeContext, rep.APIServer)
	}
	found := false
	for _, f := range rep.Targets[0].Findings {
		found = found || f.Key == "removed-api/admissionregistration.k8s.io/v1beta1/ValidatingAdmissionPolicy" && f.Severity == "blocker"
	}
	if !found || r.code != 2 || rep.Targets[0].Verdict != "blocked" {
		t.Errorf("exit %d verdict %s findings %+v: want the v1beta1 policy blocking 1.34", r.code, rep.Targets[0].Verdict, rep.Targets[0].Findings)
	}
}

func TestLiveScanAsAUserWhoCanReadNothingIsNeverReady(t *testing.T) {
	kubeconfig := kubetest.Kubeconfig(t, "UPGRADESCOPE_KUBECONFIG")
	r := runCLI(t, "scan", "--kubeconfig", kubeconfig, "--context", "viewer", "--target", "1.36", "-o", "json", pinned)
	var rep liveReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("exit %d: %v\n%s\n%s", r.code, err, r.stdout, r.stderr)
	}
	if r.code != 2 || rep.Targets[0].Verdict != "unknown" {
		t.Errorf("exit %d verdict %s, want 2 and unknown", r.code, rep.Targets[0].Verdict)
	}
	required := map[string]bool{}
	for _, g := range rep.Targets[0].NotAssessed {
		if g.Required {
			required[g.Capability] = true
		}
	}
	for _, c := range []string{"api-usage", "versions", "addons"} {
		if !required[c] {
			t.Errorf("required gaps %+v lack %s", rep.Targets[0].NotAssessed, c)
		}
	}
	if strings.Contains(r.stdout, "token") {
		t.Error("the report mentions a token")
	}
}

func TestALiveInventoryRoundTripsThroughEval(t *testing.T) {
	kubeconfig := kubetest.Kubeconfig(t, "UPGRADESCOPE_KUBECONFIG")
	inv := runCLI(t, "inventory", "--kubeconfig", kubeconfig, "--context", "admin", pinned)
	if inv.code != 0 {
		t.Fatalf("inventory exit %d: %s", inv.code, inv.stderr)
	}
	path := write(t, t.TempDir(), "live.json", inv.stdout)
	// Other packages' tests change the shared server meanwhile, so a second live scan could
	// differ; eval of the same inventory twice must not, and must validate.
	first := runCLI(t, "eval", "--inventory", path, "--target", "1.36", "-o", "json", "--fail-on", "never", pinned)
	second := runCLI(t, "eval", "--inventory", path, "--target", "1.36", "-o", "json", "--fail-on", "never", pinned)
	if first.code != 0 || first.stdout != second.stdout {
		t.Fatalf("eval exit %d (%s), or two evaluations differ", first.code, first.stderr)
	}
	var rep liveReport
	if err := json.Unmarshal([]byte(first.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Source != "cluster" || len(rep.Targets) != 1 || rep.Targets[0].Verdict == "" {
		t.Errorf("report = %+v", rep)
	}
}
