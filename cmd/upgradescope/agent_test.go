package main

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/internal/testenv/syncbuf"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"

	"github.com/upgradescope/upgradescope/crd"
	"github.com/upgradescope/upgradescope/crd/healthcheck"
	"github.com/upgradescope/upgradescope/fleet/push"
	"github.com/upgradescope/upgradescope/internal/testenv/kubetest"
)

// logged waits until a process's output b holds s: a process logs what it did just after
// doing it, so a test that saw the effect may read the output a moment before the line.
func logged(b *syncbuf.Buffer, s string) bool {
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if strings.Contains(b.String(), s) {
			return true
		}
	}
	return false
}

// TestAgentProcessKeepsTheStatusCurrent runs the agent binary against the real API server with
// a 2 s tick, edits spec.targets and spec.ignore, and reads what it writes.
func TestAgentProcessKeepsTheStatusCurrent(t *testing.T) {
	kubeconfig := kubetest.Kubeconfig(t, kubetest.EnvServer)
	dyn := dynamic.NewForConfigOrDie(kubetest.Config(t, kubetest.EnvServer, "admin"))
	objects := dyn.Resource(crd.GVR)
	ctx := context.Background()
	const name = "agent-e2e"
	_ = objects.Delete(ctx, name, metav1.DeleteOptions{})

	// A fleet server that takes the agent's pushes.
	var pushes atomic.Int32
	fleet := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		zr, err := gzip.NewReader(r.Body)
		var env push.Envelope
		if err == nil {
			err = json.NewDecoder(zr).Decode(&env)
		}
		if err != nil || r.Header.Get("Authorization") != "Bearer e2e-token" || env.Inventory == nil || env.ClusterName == "" {
			http.Error(w, fmt.Sprintf("bad push: %v", err), http.StatusBadRequest)
			return
		}
		pushes.Add(1)
		w.WriteHeader(http.StatusAccepted)
	}))
	defer fleet.Close()
	tokenFile := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tokenFile, []byte("e2e-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	logs := startAgent(t, kubeconfig, "--cr-name", name, "--server", fleet.URL, "--ingest-token-file", tokenFile)

	// First ticks: the agent creates the object and judges the next minor above 1.35.
	first := waitForStatus(t, objects, name, 1)
	if len(first.Status.Targets) != 1 || first.Status.Targets[0].Target != "1.36" {
		t.Fatalf("targets without a spec = %+v, want the next minor 1.36", first.Status.Targets)
	}
	checkConditions(t, first.Status)

	// A spec edit: two targets, a category suppression and a rule with neither key nor category.
	patch := []byte(`{"spec":{"targets":["1.36","1.37","1.36"],"ignore":[` +
		`{"category":"eol-addon","reason":"migrating, PLAT-123","expires":"2099-12-31"},` +
		`{"reason":"no key or category"}]}}`)
	edited, err := objects.Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	after := waitForStatus(t, objects, name, edited.GetGeneration())
	if got := []string{after.Status.Targets[0].Target, after.Status.Targets[len(after.Status.Targets)-1].Target}; len(after.Status.Targets) != 2 || got[0] != "1.36" || got[1] != "1.37" {
		t.Errorf("targets after the edit = %+v, want 1.36 and 1.37 once each", after.Status.Targets)
	}
	checkConditions(t, after.Status)
	for _, ts := range after.Status.Targets {
		if ts.ByCategory["eol-addon"] != 0 {
			t.Errorf("%s still counts eol-addon findings under a category suppression: %v", ts.Target, ts.ByCategory)
		}
	}
	if !strings.Contains(strings.Join(after.Status.NotAssessed, "\n"), "ignore: skipped spec.ignore[1]") {
		t.Errorf("notAssessed %q does not report the invalid ignore rule", after.Status.NotAssessed)
	}
	checkRecipes(t, objects, name)
	if pushes.Load() < 1 || !strings.Contains(logs.String(), "push=ok") {
		t.Errorf("the fleet server received %d pushes; the log says:\n%s", pushes.Load(), logs.String())
	}
	if n := strings.Count(logs.String(), "tick complete"); n < 2 {
		t.Errorf("agent logged %d completed ticks, want one line per tick", n)
	}
}

var (
	agentBinOnce sync.Once
	agentBin     string
	agentBinErr  error
)

// startAgent builds the binary once and runs `agent` with a 2 s tick until the test ends.
func startAgent(t *testing.T, kubeconfig string, args ...string) *syncbuf.Buffer {
	t.Helper()
	return startAgentWithInterval(t, kubeconfig, "2s", args...)
}

func startAgentWithInterval(t *testing.T, kubeconfig, interval string, args ...string) *syncbuf.Buffer {
	t.Helper()
	buildBinary(t)
	logs := &syncbuf.Buffer{}
	cmd := exec.Command(agentBin, append([]string{"agent", "--kubeconfig", kubeconfig, "--context", "admin",
		"--test-interval", interval, "--health-addr", ""}, args...)...)
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("agent log:\n%s", logs.String())
		}
	})
	return logs
}

// The version and commit buildBinary stamps through the Makefile.
const (
	builtVersion = "v0.0.0-test"
	builtCommit  = "0123456789abcdef0123456789abcdef01234567"
)

// buildBinary builds the upgradescope binary once per test run, into agentBin, with
// `make build` as a user would: TestMakeBuildStampsTheVersionAndCommit reads its stamp.
func buildBinary(t *testing.T) {
	t.Helper()
	agentBinOnce.Do(func() {
		dir, err := os.MkdirTemp("", "upgradescope-agent-test")
		if err != nil {
			agentBinErr = err
			return
		}
		agentBin = filepath.Join(dir, "upgradescope")
		build := exec.Command("make", "-s", "-C", "../..", "build", "BIN="+agentBin, "VERSION="+builtVersion, "COMMIT="+builtCommit)
		if out, err := build.CombinedOutput(); err != nil {
			agentBinErr = fmt.Errorf("make build: %v\n%s", err, out)
		}
	})
	if agentBinErr != nil {
		t.Fatal(agentBinErr)
	}
}

// TestAgentOwnsSpecTargetsWithTargetsFlagAndKeepsOtherManagersCRDLabels: with --target the
// agent resets a user's spec.targets edit; its CRD apply at start leaves a label Argo CD set.
func TestAgentOwnsSpecTargetsWithTargetsFlagAndKeepsOtherManagersCRDLabels(t *testing.T) {
	kubeconfig := kubetest.Kubeconfig(t, kubetest.EnvServer)
	dyn := dynamic.NewForConfigOrDie(kubetest.Config(t, kubetest.EnvServer, "admin"))
	ctx := context.Background()
	crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	const crdName = "clusterreadinesses.upgradescope.basit.engineer"
	if err := crd.Apply(ctx, dyn); err != nil {
		t.Fatal(err)
	}
	label := []byte(`{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"` + crdName + `","labels":{"app.kubernetes.io/managed-by":"argocd"}}}`)
	force := true
	if _, err := dyn.Resource(crds).Patch(ctx, crdName, types.ApplyPatchType, label, metav1.PatchOptions{FieldManager: "argocd-controller", Force: &force}); err != nil {
		t.Fatal(err)
	}
	const name = "agent-owns-targets"
	objects := dyn.Resource(crd.GVR)
	_ = objects.Delete(ctx, name, metav1.DeleteOptions{})
	startAgent(t, kubeconfig, "--cr-name", name, "--target", "1.37")
	first := waitForStatus(t, objects, name, 1)
	if len(first.Status.Targets) != 1 || first.Status.Targets[0].Target != "1.37" {
		t.Fatalf("targets = %+v, want the --target 1.37", first.Status.Targets)
	}
	edited, err := objects.Patch(ctx, name, types.MergePatchType, []byte(`{"spec":{"targets":["1.38"]}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The next tick resets the edit (a new generation) and judges 1.37 again.
	after := waitForStatus(t, objects, name, edited.GetGeneration()+1)
	if got := after.Spec.Targets; len(got) != 1 || got[0] != "1.37" || after.Status.Targets[0].Target != "1.37" {
		t.Errorf("spec.targets = %v, status targets %+v; want both reset to 1.37", got, after.Status.Targets)
	}
	crdObj, err := dyn.Resource(crds).Get(ctx, crdName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if crdObj.GetLabels()["app.kubernetes.io/managed-by"] != "argocd" {
		t.Errorf("CRD labels after the agent's apply = %v, want Argo CD's label kept", crdObj.GetLabels())
	}
}

// checkRecipes runs the Argo CD and Flux health checks of docs/gitops.md on the object as the
// agent process left it: its status is current, so they follow AllTargetsReady.
func checkRecipes(t *testing.T, objects dynamic.NamespaceableResourceInterface, name string) {
	t.Helper()
	recipes, err := healthcheck.FromDocs("../../docs/gitops.md")
	if err != nil {
		t.Fatal(err)
	}
	obj, err := objects.Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var cr crd.ClusterReadiness
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, &cr); err != nil {
		t.Fatal(err)
	}
	var all metav1.ConditionStatus
	for _, c := range cr.Status.Conditions {
		if c.Type == crd.ConditionAllTargetsReady {
			all = c.Status
		}
	}
	wantArgo := map[metav1.ConditionStatus]string{metav1.ConditionTrue: "Healthy", metav1.ConditionFalse: "Degraded", metav1.ConditionUnknown: "Degraded"}[all]
	if cr.Status.ObservedGeneration < obj.GetGeneration() {
		wantArgo = "Progressing"
	}
	if got, msg, err := recipes.Argo(obj.Object); err != nil || got != wantArgo {
		t.Errorf("Argo CD health = %s (%s, %v), want %s for AllTargetsReady=%s", got, msg, err, wantArgo, all)
	}
	current, failed, err := recipes.Flux(obj.Object)
	if err != nil || current != (all == metav1.ConditionTrue) || failed != (all == metav1.ConditionFalse) {
		t.Errorf("Flux current, failed = %v, %v (%v) for AllTargetsReady=%s", current, failed, err, all)
	}
}

// waitForStatus waits until the agent has evaluated at least generation.
func waitForStatus(t *testing.T, objects dynamic.NamespaceableResourceInterface, name string, generation int64) crd.ClusterReadiness {
	t.Helper()
	return waitForCR(t, objects, name, fmt.Sprintf("generation %d evaluated", generation), func(cr crd.ClusterReadiness) bool {
		return cr.Status.ObservedGeneration >= generation && cr.Status.LastEvaluated != nil
	})
}

// checkConditions holds Ready to the first target's verdict and AllTargetsReady to all.
func checkConditions(t *testing.T, st crd.Status) {
	t.Helper()
	want := map[string]metav1.ConditionStatus{"ready": metav1.ConditionTrue, "blocked": metav1.ConditionFalse, "unknown": metav1.ConditionUnknown}
	all := metav1.ConditionTrue
	for _, ts := range st.Targets {
		switch {
		case ts.Verdict == "blocked":
			all = metav1.ConditionFalse
		case ts.Verdict == "unknown" && all == metav1.ConditionTrue:
			all = metav1.ConditionUnknown
		}
	}
	for _, c := range st.Conditions {
		switch c.Type {
		case crd.ConditionReady:
			if c.Status != want[st.Targets[0].Verdict] {
				t.Errorf("Ready = %s for a %s first target", c.Status, st.Targets[0].Verdict)
			}
		case crd.ConditionAllTargetsReady:
			if c.Status != all {
				t.Errorf("AllTargetsReady = %s (%s), want %s for %+v", c.Status, c.Message, all, st.Targets)
			}
		}
		if c.ObservedGeneration != st.ObservedGeneration {
			t.Errorf("condition %s at generation %d, status at %d", c.Type, c.ObservedGeneration, st.ObservedGeneration)
		}
	}
	if len(st.Conditions) != 2 {
		t.Errorf("conditions = %+v, want Ready and AllTargetsReady", st.Conditions)
	}
}

func TestAgentRefusesBadFlagsBeforeTouchingTheCluster(t *testing.T) {
	t.Setenv("UPGRADESCOPE_SERVER_TOKEN", "")
	nowhere := []string{"--kubeconfig", filepath.Join(t.TempDir(), "missing")}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"an interval below a minute", []string{"--interval", "30s"}, "below the minimum 1m0s"},
		{"more than eight targets", []string{"--target", "1.30,1.31,1.32,1.33,1.34,1.35,1.36,1.37,1.38"}, "at most 8"},
		{"a target that is no minor", []string{"--target", "next"}, "--target"},
		{"an empty object name", []string{"--cr-name", ""}, "--cr-name must not be empty"},
		{"a server URL that is not http(s)", []string{"--server", "ftp://fleet.example.com", "--ingest-token", "t"}, "must be an http(s) URL"},
		{"a server URL without a token", []string{"--server", "https://fleet.example.com"}, "needs a token"},
		{"a token with a space", []string{"--server", "https://fleet.example.com", "--ingest-token", "a b"}, "without spaces"},
		{"an unknown log format", []string{"--log-format", "xml"}, "--log-format: unknown log format \"xml\": want text or json"},
		{"an unknown log level", []string{"--log-level", "loud"}, "--log-level: unknown log level \"loud\""},
		{"a bundle URL without a key", []string{"--bundle-url", "https://bundles.example.com/kb.tar.gz"}, "polled bundles must be signed"},
		{"a bundle URL that is a file", []string{"--bundle-url", "kb.tar.gz"}, "want an http(s) URL"},
		{"a CA file for plain http", []string{"--server", "http://fleet.example.com", "--ingest-token", "t", "--server-ca-file", "ca.pem"}, "needs an https"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI(t, append(append([]string{"agent"}, nowhere...), tt.args...)...)
			if r.code != exitErr || !strings.Contains(r.stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want 1 saying %q", r.code, r.stderr, tt.want)
			}
		})
	}
}

// A cluster that cannot be reached fails every tick; the agent logs each failure with the
// count and keeps ticking. With --manage-crd=false it does not try the CRD at start.
func TestAgentKeepsTickingThroughFailedTicks(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	unreachable := `apiVersion: v1
kind: Config
clusters: [{name: gone, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: admin, context: {cluster: gone, user: u}}]
current-context: admin
`
	if err := os.WriteFile(kubeconfig, []byte(unreachable), 0o600); err != nil {
		t.Fatal(err)
	}
	logs := startAgentWithInterval(t, kubeconfig, "200ms", "--manage-crd=false", "--request-timeout", "1s")
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		return strings.Contains(logs.String(), "consecutiveFailures=3"), nil
	})
	if err != nil {
		t.Fatalf("the agent did not keep ticking through failures:\n%s", logs.String())
	}
	if strings.Contains(logs.String(), "customresourcedefinitions") {
		t.Errorf("with --manage-crd=false the agent touched the CRD:\n%s", logs.String())
	}
}

// A stop in the middle of a tick (the server accepts connections and never answers) ends the
// tick as interrupted, not failed, and the agent exits promptly.
func TestAgentStopMidTickIsNotAFailure(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var held []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c) // never read, never answered
			mu.Unlock()
		}
	}()
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			_ = c.Close()
		}
	}()
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	silent := "apiVersion: v1\nkind: Config\nclusters: [{name: silent, cluster: {server: \"https://" + ln.Addr().String() + "\", insecure-skip-tls-verify: true}}]\n" +
		"users: [{name: u, user: {token: t}}]\ncontexts: [{name: admin, context: {cluster: silent, user: u}}]\ncurrent-context: admin\n"
	if err := os.WriteFile(kubeconfig, []byte(silent), 0o600); err != nil {
		t.Fatal(err)
	}
	buildBinary(t)
	logs := &syncbuf.Buffer{}
	cmd := exec.Command(agentBin, "agent", "--kubeconfig", kubeconfig, "--test-interval", "2s", "--health-addr", "",
		"--manage-crd=false", "--request-timeout", "60s")
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	err = wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		mu.Lock()
		defer mu.Unlock()
		return strings.Contains(logs.String(), "agent starting") && len(held) > 0, nil
	})
	if err != nil {
		t.Fatalf("the agent never reached the server:\n%s", logs.String())
	}
	start := time.Now()
	_ = cmd.Process.Signal(syscall.SIGTERM)
	_ = cmd.Wait()
	if time.Since(start) > 10*time.Second || !strings.Contains(logs.String(), "interruptedTick=true") || strings.Contains(logs.String(), "tick failed") {
		t.Errorf("stopped after %s; log:\n%s", time.Since(start), logs.String())
	}
}
