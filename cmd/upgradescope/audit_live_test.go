package main

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/upgradescope/upgradescope/crd"
	"github.com/upgradescope/upgradescope/fleet/push"
	"github.com/upgradescope/upgradescope/internal/testenv/kubetest"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/report"
)

// removedAPICase is a deprecated API one of the test API servers still serves, and the
// minor that removes it.
type removedAPICase struct {
	name             string
	server, auditDir string // kubetest's environment variables
	gvr              schema.GroupVersionResource
	removed          string
}

var (
	// the 1.35 server serves networking.k8s.io/v1beta1 through --runtime-config
	serviceCIDRs = removedAPICase{name: "servicecidrs at 1.35", server: kubetest.EnvServer, auditDir: kubetest.EnvAuditDir,
		gvr: schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1beta1", Resource: "servicecidrs"}, removed: "1.37"}
	// the server emulating 1.32 still serves what 1.34 removed
	legacyPolicies = removedAPICase{name: "validatingadmissionpolicies at 1.32", server: kubetest.EnvEmulated, auditDir: kubetest.EnvAuditDirEmulated,
		gvr: kubetest.LegacyAdmissionPolicies, removed: "1.34"}
)

// caller is who calls a removed API in a live test: a service account's token, with a user
// agent no other test uses.
type caller struct {
	userAgent      string
	user           string
	serviceAccount string
	calls          int
}

// TestScanNamesTheClientThatCallsAnAPIRemovedAtTheTarget calls a deprecated API the test
// server still serves, as a known service account with its own user agent, reads the audit
// log the server wrote (docs/audit-policy.yaml) and finds the caller with its count.
func TestScanNamesTheClientThatCallsAnAPIRemovedAtTheTarget(t *testing.T) {
	for _, tc := range []removedAPICase{serviceCIDRs, legacyPolicies} {
		t.Run(tc.name, func(t *testing.T) {
			kubeconfig := kubetest.Kubeconfig(t, tc.server)
			dir := kubetest.AuditDir(t, tc.auditDir)
			c := callRemovedAPI(t, kubetest.Config(t, tc.server, "admin"), dir, tc.gvr)
			waitForAuditEvents(t, dir, c)

			r := runCLI(t, "inventory", "--kubeconfig", kubeconfig, "--context", "admin", "--audit-log", dir)
			checkCaller(t, r, tc, c)

			scan := runCLI(t, "scan", "--kubeconfig", kubeconfig, "--context", "admin", "--audit-log", dir,
				"--target", tc.removed, "-o", "json")
			checkCallsFinding(t, scan, tc, c)
		})
	}
}

// A CI job judges an exported log beside the manifests it deploys: the same caller, named
// from a copy of the log, with no cluster.
func TestScanOfManifestsWithAnExportedAuditLogNamesTheClient(t *testing.T) {
	dir := kubetest.AuditDir(t, kubetest.EnvAuditDir)
	c := callRemovedAPI(t, kubetest.Config(t, kubetest.EnvServer, "admin"), dir, serviceCIDRs.gvr)
	waitForAuditEvents(t, dir, c)
	exported := copyDir(t, dir)

	r := runCLI(t, "inventory", "--files", examples, "--audit-log", exported)
	checkCaller(t, r, serviceCIDRs, c)

	scan := runCLI(t, "scan", "--files", examples, "--audit-log", exported, "--target", "1.37", "-o", "json")
	checkCallsFinding(t, scan, serviceCIDRs, c)
}

// callRemovedAPI lists gvr as a new service account (cluster-admin through a binding) with a
// user agent of its own, once more than the busiest caller of gvr in the log in dir so far:
// a finding lists the busiest callers, and the servers' logs outlive a test run.
func callRemovedAPI(t *testing.T, admin *rest.Config, dir string, gvr schema.GroupVersionResource) caller {
	t.Helper()
	n := busiestCaller(t, dir, gvr) + 1
	if n > 5000 {
		t.Fatalf("a caller of %s in %s made %d calls: restart the test servers (hack/kube-env.sh stop start)", gvr, dir, n-1)
	}
	ctx := context.Background()
	kube := kubernetes.NewForConfigOrDie(admin)
	id := fmt.Sprintf("%08x", rand.Uint32())
	ns, name := "audit-live-"+id, "legacy-client"
	if _, err := kube.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = kube.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	if _, err := kube.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: ns},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: ns, Name: name}},
	}
	if _, err := kube.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = kube.RbacV1().ClusterRoleBindings().Delete(context.Background(), ns, metav1.DeleteOptions{})
	})
	expiry := int64(600)
	tok, err := kube.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c := caller{userAgent: "audit-live-test/" + id, user: "system:serviceaccount:" + ns + ":" + name, serviceAccount: ns + "/" + name, calls: n}
	cfg := rest.AnonymousClientConfig(admin)
	cfg.BearerToken, cfg.UserAgent = tok.Status.Token, c.userAgent
	cfg.WarningHandler = rest.NoWarnings{} // the deprecation warning is the point, not news
	dyn := dynamic.NewForConfigOrDie(cfg)
	// A few at a time: on a long-lived server the busiest caller may have made thousands.
	errs := make(chan error, n)
	sem := make(chan struct{}, 8)
	for range n {
		sem <- struct{}{}
		go func() {
			defer func() { <-sem }()
			_, err := dyn.Resource(gvr).List(ctx, metav1.ListOptions{Limit: 1})
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatalf("list %s as %s: %v", gvr, c.user, err)
		}
	}
	return c
}

// waitForAuditEvents waits until the server's log holds c's calls: the log backend writes
// each event as the request completes, and rotates at 1 MB into gzip files.
func waitForAuditEvents(t *testing.T, dir string, c caller) {
	t.Helper()
	var seen int
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if seen = countAuditEvents(t, dir, c.userAgent); seen >= c.calls {
			return
		}
	}
	t.Fatalf("the audit log in %s holds %d of the %d calls of %s after 30s", dir, seen, c.calls, c.userAgent)
}

// auditEvent is what the tests read of the events in the servers' logs.
type auditEvent struct {
	Stage     string `json:"stage"`
	Verb      string `json:"verb"`
	UserAgent string `json:"userAgent"`
	User      struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef struct {
		Resource, APIGroup, APIVersion string
	} `json:"objectRef"`
}

// countAuditEvents counts the requests of userAgent in dir's log.
func countAuditEvents(t *testing.T, dir, userAgent string) int {
	t.Helper()
	n := 0
	readAuditEvents(t, dir, func(ev auditEvent) {
		if ev.UserAgent == userAgent {
			n++
		}
	})
	return n
}

// busiestCaller is the most requests to gvr one caller (user agent, user, verb) made in
// dir's log.
func busiestCaller(t *testing.T, dir string, gvr schema.GroupVersionResource) int {
	t.Helper()
	calls := map[[3]string]int{}
	readAuditEvents(t, dir, func(ev auditEvent) {
		if ev.ObjectRef.APIGroup == gvr.Group && ev.ObjectRef.APIVersion == gvr.Version && ev.ObjectRef.Resource == gvr.Resource {
			calls[[3]string{ev.UserAgent, ev.User.Username, ev.Verb}]++
		}
	})
	most := 0
	for _, n := range calls {
		most = max(most, n)
	}
	return most
}

// readAuditEvents calls fn with every request (ResponseComplete event) in dir's files, plain
// and gzip-compressed.
func readAuditEvents(t *testing.T, dir string, fn func(auditEvent)) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		f, err := os.Open(filepath.Join(dir, e.Name()))
		if err != nil {
			continue // rotated away meanwhile
		}
		var r io.Reader = f
		if strings.HasSuffix(e.Name(), ".gz") {
			if r, err = gzip.NewReader(f); err != nil {
				f.Close()
				continue
			}
		}
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var ev auditEvent
			if json.Unmarshal(sc.Bytes(), &ev) == nil && ev.Stage == "ResponseComplete" {
				fn(ev)
			}
		}
		f.Close()
	}
}

// checkCaller reads an inventory run's auditCalls and finds c there: one row with its user,
// service account, user agent, verb and count, the server's removal, loopback sources.
func checkCaller(t *testing.T, r result, tc removedAPICase, c caller) {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("inventory exit %d: %s", r.code, r.stderr)
	}
	var doc inventory.Document
	if err := json.Unmarshal([]byte(r.stdout), &doc); err != nil {
		t.Fatal(err)
	}
	if cp := doc.Capabilities[inventory.CapAuditLog]; !cp.Available {
		t.Errorf("audit-log capability %+v, want available", cp)
	}
	if doc.AuditCalls == nil {
		t.Fatal("the inventory has no auditCalls")
	}
	var found []inventory.AuditCaller
	for _, row := range doc.AuditCalls.Callers {
		if row.UserAgent == c.userAgent {
			found = append(found, row)
		}
	}
	if len(found) != 1 {
		t.Fatalf("rows of %s: %+v, want one", c.userAgent, found)
	}
	got := found[0]
	if got.Group != tc.gvr.Group || got.Version != tc.gvr.Version || got.Resource != tc.gvr.Resource || got.Verb != "list" ||
		got.User != c.user || got.ServiceAccount != c.serviceAccount || got.Count != int64(c.calls) || got.RemovedRelease != tc.removed {
		t.Errorf("caller %+v, want %d lists of %s by %s (%s), removed in %s", got, c.calls, tc.gvr, c.user, c.serviceAccount, tc.removed)
	}
	if len(got.SourceRanges) != 1 || got.SourceRanges[0] != "127.0.0.0/24" {
		t.Errorf("source ranges %v, want the loopback /24", got.SourceRanges)
	}
	if got.FirstSeen == "" || got.FirstSeen > got.LastSeen || got.LastSeen < doc.AuditCalls.Since {
		t.Errorf("first seen %s, last seen %s, window since %s", got.FirstSeen, got.LastSeen, doc.AuditCalls.Since)
	}
}

// checkCallsFinding finds, in a scan's report, the deprecated-API-in-use blocker of tc's
// API naming c with its count.
func checkCallsFinding(t *testing.T, r result, tc removedAPICase, c caller) {
	t.Helper()
	var rep struct {
		Targets []struct {
			Findings []struct {
				Key      string          `json:"key"`
				Severity string          `json:"severity"`
				Callers  []report.Caller `json:"callers"`
			} `json:"findings"`
		} `json:"targets"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || len(rep.Targets) != 1 {
		t.Fatalf("exit %d: %v\n%s", r.code, err, r.stderr)
	}
	key := "deprecated-api-in-use/" + tc.gvr.Group + "/" + tc.gvr.Version + "/" + tc.gvr.Resource
	for _, f := range rep.Targets[0].Findings {
		if f.Key != key {
			continue
		}
		if f.Severity != "blocker" || r.code != exitGate {
			t.Errorf("%s is a %s (exit %d), want a blocker at %s", key, f.Severity, r.code, tc.removed)
		}
		for _, got := range f.Callers {
			if got.UserAgent == c.userAgent {
				if got.User != c.user || got.ServiceAccount != c.serviceAccount || got.Verb != "list" || got.Count != int64(c.calls) {
					t.Errorf("%s names %+v, want %d lists by %s", key, got, c.calls, c.serviceAccount)
				}
				return
			}
		}
		t.Errorf("%s does not name %s among %+v", key, c.userAgent, f.Callers)
		return
	}
	t.Errorf("no finding %s in %s", key, r.stdout)
}

// copyDir copies the regular files of dir into a new directory, as an export would.
func copyDir(t *testing.T, dir string) string {
	t.Helper()
	out := t.TempDir()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		raw, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			continue // rotated away meanwhile
		}
		if err := os.WriteFile(filepath.Join(out, e.Name()), raw, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// The agent reads the log its operator mounts every tick and pushes the callers with the
// inventory, as the fleet server receives them.
func TestTheAgentPushesTheCallersItsMountedAuditLogNames(t *testing.T) {
	kubeconfig := kubetest.Kubeconfig(t, kubetest.EnvServer)
	dir := kubetest.AuditDir(t, kubetest.EnvAuditDir)
	c := callRemovedAPI(t, kubetest.Config(t, kubetest.EnvServer, "admin"), dir, serviceCIDRs.gvr)
	waitForAuditEvents(t, dir, c)

	pushed := make(chan *inventory.AuditCalls, 16)
	fleet := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var env push.Envelope
		zr, err := gzip.NewReader(r.Body)
		if err == nil {
			err = json.NewDecoder(zr).Decode(&env)
		}
		if err != nil || env.Inventory == nil {
			http.Error(w, fmt.Sprintf("bad push: %v", err), http.StatusBadRequest)
			return
		}
		select {
		case pushed <- env.Inventory.AuditCalls:
		default:
		}
		w.WriteHeader(http.StatusAccepted)
	}))
	defer fleet.Close()
	token := write(t, t.TempDir(), "token", "audit-e2e-token\n")
	const name = "agent-audit-e2e"
	t.Cleanup(func() {
		_ = dynamic.NewForConfigOrDie(kubetest.Config(t, kubetest.EnvServer, "admin")).Resource(crd.GVR).Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	logs := startAgent(t, kubeconfig, "--cr-name", name, "--server", fleet.URL, "--ingest-token-file", token, "--audit-log", dir, "--audit-since", "1h")

	select {
	case s := <-pushed:
		if s == nil {
			t.Fatal("the agent pushed an inventory without auditCalls")
		}
		for _, row := range s.Callers {
			if row.UserAgent == c.userAgent {
				if row.Count != int64(c.calls) || row.ServiceAccount != c.serviceAccount {
					t.Errorf("pushed caller %+v, want %d calls by %s", row, c.calls, c.serviceAccount)
				}
				if !logged(logs, "audit log read") {
					t.Error("the agent did not log its reading of the audit log")
				}
				return
			}
		}
		t.Errorf("the pushed auditCalls do not name %s: %+v", c.userAgent, s.Callers)
	case <-time.After(60 * time.Second):
		t.Fatal("no push within 60s")
	}
}
