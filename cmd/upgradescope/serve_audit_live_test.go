package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/upgradescope/upgradescope/internal/testenv/kubetest"
)

// serviceCIDRsBeta are ServiceCIDRs at networking.k8s.io/v1beta1: deprecated, removed in
// 1.37, and served by the test API server (hack/kube-env.sh's runtime-config).
var serviceCIDRsBeta = schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1beta1", Resource: "servicecidrs"}

// auditFixture is the batch the server's tests post (fleet/server/testdata/audit): one the
// test API server's webhook backend sent, its credential redacted.
const auditFixture = "../../fleet/server/testdata/audit/eventlist.json"

// The real API server's audit webhook backend posts to a real serve, over TLS as it must
// (it sends its token to an https server only): a client with its own user agent lists a
// deprecated API N times, and the cluster's page names that user agent with N calls, within
// the backend's batching (one second on the test server). The test binds the webhook's
// fixed port: no other test may.
func TestServeShowsTheCallersTheAPIServersAuditWebhookPosts(t *testing.T) {
	wh := kubetest.Webhook(t)
	kubeconfig := kubetest.Kubeconfig(t, kubetest.EnvServer)
	cfg := kubetest.Config(t, kubetest.EnvServer, "admin")
	run := time.Now().UnixNano()

	t.Run("the batch the server's tests post has the shape the API server sends", func(t *testing.T) {
		agent := fmt.Sprintf("upgradescope-audit-capture/%d", run)
		checkAuditFixture(t, captureBatch(t, wh, cfg, agent), agent)
	})

	dir := t.TempDir()
	p := startServe(t, "--db", filepath.Join(dir, "fleet.db"), "--listen", wh.Listen, "--ingest-token-file", wh.TokenFile,
		"--tls-cert-file", wh.CertFile, "--tls-key-file", wh.KeyFile, "--target", removedAt)
	inv := runCLI(t, "inventory", "--kubeconfig", kubeconfig, "--context", "admin")
	if inv.code != 0 {
		t.Fatalf("inventory exit %d: %s", inv.code, inv.stderr)
	}
	pushed := runCLI(t, "push", "--inventory", write(t, dir, "inventory.json", inv.stdout), "--server", p.url,
		"--server-ca-file", wh.CAFile, "--ingest-token-file", wh.TokenFile, "--cluster-name", wh.Cluster)
	if pushed.code != 0 {
		t.Fatalf("push exit %d: %s%s", pushed.code, pushed.stdout, pushed.stderr)
	}
	fleet := tlsFleet{t: t, base: p.url, client: trusting(t, wh.CAFile)}
	id := fleet.clusterID(wh.Cluster)
	target := fleet.nextMinor(id)
	pushJudged := fleet.judgedAt(id, target)

	const calls = 5
	agent := fmt.Sprintf("upgradescope-audit-live/%d", run)
	called := time.Now()
	callDeprecated(t, cfg, agent, calls)
	row := regexp.MustCompile(`data-user-agent="` + regexp.QuoteMeta(agent) + `" data-count="(\d+)"`)
	var counted int
	if !pollUntil(60*time.Second, 250*time.Millisecond, func() bool {
		if m := row.FindStringSubmatch(fleet.page(id)); m != nil {
			counted, _ = strconv.Atoi(m[1])
		}
		return counted >= calls
	}) {
		t.Fatalf("after 60 s the cluster's page counts %d calls by %s, want %d", counted, agent, calls)
	}
	t.Logf("the page counted the %d calls %s after they were made", counted, time.Since(called).Round(10*time.Millisecond))
	// The caller was new: the cluster's snapshot was judged again with it, without a push
	// (the evaluation replaces the push's: the same snapshot, with the same bundles).
	if !pollUntil(60*time.Second, 250*time.Millisecond, func() bool { return fleet.judgedAt(id, target).After(pushJudged) }) {
		t.Errorf("the cluster was not judged again after the batch named a new caller: its evaluation is still the push's of %s", pushJudged)
	}
	t.Logf("judged again %s after the calls", time.Since(called).Round(10*time.Millisecond))
	// At the minor that removes the API, the cluster's finding is a blocker naming the caller,
	// as `scan --audit-log` names it, and the cluster page shows it.
	if !pollUntil(60*time.Second, 250*time.Millisecond, func() bool { return fleet.judgedAt(id, removedAt).After(pushJudged) }) {
		t.Fatalf("the cluster was not judged again at %s after the batch named a new caller", removedAt)
	}
	caller := fleet.caller(id, removedAt, agent)
	if caller.Severity != "blocker" || caller.Count < calls {
		t.Errorf("at %s the servicecidrs finding is %s naming %s with %d calls, want a blocker with %d", removedAt, caller.Severity, agent, caller.Count, calls)
	}
	if page := string(fleet.get(fmt.Sprintf("/ui/clusters/%d?target=%s", id, removedAt))); !strings.Contains(page, "networking.k8s.io/v1beta1 servicecidrs, removed in 1.37") || !strings.Contains(page, agent) {
		t.Errorf("the cluster page at %s does not show the blocker naming %s", removedAt, agent)
	}
}

// removedAt is the minor that removes networking.k8s.io/v1beta1 servicecidrs, which the test
// API server serves.
const removedAt = "1.37"

// calledFinding is the caller of servicecidrs a cluster's finding names, with its severity.
type calledFinding struct {
	Severity string
	Count    int
}

// caller is what the cluster's servicecidrs finding at target says of agent.
func (f tlsFleet) caller(id int64, target, agent string) calledFinding {
	f.t.Helper()
	var got struct {
		Findings []struct {
			Key      string `json:"key"`
			Severity string `json:"severity"`
			Callers  []struct {
				UserAgent string `json:"userAgent"`
				Count     int    `json:"count"`
			} `json:"callers"`
		} `json:"findings"`
	}
	f.getJSON(fmt.Sprintf("/api/v1/clusters/%d/findings?target=%s", id, target), &got)
	for _, fd := range got.Findings {
		if fd.Key != "deprecated-api-in-use/networking.k8s.io/v1beta1/servicecidrs" {
			continue
		}
		for _, c := range fd.Callers {
			if c.UserAgent == agent {
				return calledFinding{Severity: fd.Severity, Count: c.Count}
			}
		}
		f.t.Fatalf("the servicecidrs finding at %s does not name %s among its callers", target, agent)
	}
	f.t.Fatalf("no servicecidrs finding at %s", target)
	return calledFinding{}
}

// captureBatch listens where the webhook backend posts, lists ServiceCIDRs as agent, and
// answers the first batch holding the call.
func captureBatch(t *testing.T, wh kubetest.AuditWebhook, cfg *rest.Config, agent string) []byte {
	t.Helper()
	ln, err := net.Listen("tcp", wh.Listen)
	if err != nil {
		t.Fatalf("listen where the webhook posts: %v", err)
	}
	got := make(chan []byte, 1)
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(io.LimitReader(r.Body, 16<<20))
		if r.URL.Path == "/api/v1/audit/"+wh.Cluster && r.Header.Get("Content-Type") == "application/json" && strings.Contains(string(body), agent) {
			select {
			case got <- body:
			default:
			}
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte("{}"))
	})}
	go func() { _ = srv.ServeTLS(ln, wh.CertFile, wh.KeyFile) }()
	defer srv.Close()
	callDeprecated(t, cfg, agent, 1)
	select {
	case body := <-got:
		return body
	case <-time.After(30 * time.Second):
		t.Fatal("no batch with the call arrived within 30 s")
		return nil
	}
}

// checkAuditFixture compares the fixture's shape with a batch the server sent: the same
// members at the top and in the event of agent's call, with values of the same JSON kinds.
// With -update it writes the batch with that event alone, its credential redacted, as the
// fixture.
func checkAuditFixture(t *testing.T, sent []byte, agent string) {
	t.Helper()
	var list map[string]any
	if err := json.Unmarshal(sent, &list); err != nil {
		t.Fatalf("the API server sent a batch that is not JSON: %v", err)
	}
	items, _ := list["items"].([]any)
	i := slices.IndexFunc(items, func(it any) bool { m, _ := it.(map[string]any); return m["userAgent"] == agent })
	if i < 0 {
		t.Fatalf("the batch holds no event of %s", agent)
	}
	event := items[i].(map[string]any)
	if *update {
		writeAuditFixture(t, sent, i)
	}
	raw, err := os.ReadFile(auditFixture)
	if err != nil {
		t.Fatal(err)
	}
	var fixture map[string]any
	if err := json.Unmarshal(raw, &fixture); err != nil {
		t.Fatal(err)
	}
	if got, want := shape(list, "items"), shape(fixture, "items"); got != want {
		t.Errorf("the batch's members are %s, the fixture's %s", got, want)
	}
	if got, want := shape(event), shape(fixture["items"].([]any)[0].(map[string]any)); got != want {
		t.Errorf("an event's members are %s, the fixture's %s (go test -run %s -update rewrites it)", got, want, t.Name())
	}
}

// shape is an object's members and the JSON kind of each, sorted; without those skipped.
func shape(obj map[string]any, skip ...string) string {
	var out []string
	for k, v := range obj {
		if !slices.Contains(skip, k) {
			out = append(out, fmt.Sprintf("%s:%T", k, v))
		}
	}
	slices.Sort(out)
	return strings.Join(out, " ")
}

// credentialID is what identifies the client's credential in an event's user: the fixture is
// committed, so it is redacted.
var credentialID = regexp.MustCompile(`("authentication.kubernetes.io/credential-id":\[")[^"]*("\])`)

// writeAuditFixture writes the batch with its item i alone as the fixture, its members in the
// order the API server wrote them, its credential redacted.
func writeAuditFixture(t *testing.T, sent []byte, i int) {
	t.Helper()
	var list struct {
		Kind       string            `json:"kind"`
		APIVersion string            `json:"apiVersion"`
		Metadata   json.RawMessage   `json:"metadata"`
		Items      []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(sent, &list); err != nil {
		t.Fatal(err)
	}
	one := fmt.Sprintf(`{"kind":%q,"apiVersion":%q,"metadata":%s,"items":[%s]}`, list.Kind, list.APIVersion, list.Metadata,
		credentialID.ReplaceAll(list.Items[i], []byte(`${1}X509SHA256=redacted${2}`)))
	var out bytes.Buffer
	if err := json.Indent(&out, []byte(one), "", "  "); err != nil {
		t.Fatal(err)
	}
	out.WriteByte('\n')
	if err := os.WriteFile(auditFixture, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// callDeprecated lists ServiceCIDRs at v1beta1 n times as agent.
func callDeprecated(t *testing.T, cfg *rest.Config, agent string, n int) {
	t.Helper()
	c := rest.CopyConfig(cfg)
	c.UserAgent, c.WarningHandler = agent, rest.NoWarnings{}
	client := dynamic.NewForConfigOrDie(c).Resource(serviceCIDRsBeta)
	for range n {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		_, err := client.List(ctx, metav1.ListOptions{})
		cancel()
		if err != nil {
			t.Fatalf("list %s as %s: %v", serviceCIDRsBeta, agent, err)
		}
	}
}

// tlsFleet reads a serve over TLS, trusting the test CA.
type tlsFleet struct {
	t      *testing.T
	base   string
	client *http.Client
}

// trusting is an HTTP client trusting the PEM CA file.
func trusting(t *testing.T, caFile string) *http.Client {
	t.Helper()
	pem, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		t.Fatalf("%s holds no certificate", caFile)
	}
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
}

// get reads path's body, failing the test unless it answers 200.
func (f tlsFleet) get(path string) []byte {
	f.t.Helper()
	resp, err := f.client.Get(f.base + path)
	if err != nil {
		f.t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if resp.StatusCode != http.StatusOK {
		f.t.Fatalf("GET %s: %d %s", path, resp.StatusCode, body)
	}
	return body
}

func (f tlsFleet) getJSON(path string, out any) {
	f.t.Helper()
	if err := json.Unmarshal(f.get(path), out); err != nil {
		f.t.Fatalf("GET %s: %v", path, err)
	}
}

// clusterID is the id serve gave cluster name.
func (f tlsFleet) clusterID(name string) int64 {
	f.t.Helper()
	var list struct {
		Clusters []struct {
			ID   int64  `json:"id"`
			Name string `json:"name"`
		} `json:"clusters"`
	}
	f.getJSON("/api/v1/clusters", &list)
	for _, c := range list.Clusters {
		if c.Name == name {
			return c.ID
		}
	}
	f.t.Fatalf("cluster %s is not listed", name)
	return 0
}

// nextMinor is the cluster's default target, as its detail names it.
func (f tlsFleet) nextMinor(id int64) string {
	f.t.Helper()
	var c struct {
		DefaultTarget string `json:"defaultTarget"`
	}
	if f.getJSON(fmt.Sprintf("/api/v1/clusters/%d", id), &c); c.DefaultTarget == "" {
		f.t.Fatalf("cluster %d has no default target", id)
	}
	return c.DefaultTarget
}

// judgedAt is when the cluster's latest evaluation at target was made.
func (f tlsFleet) judgedAt(id int64, target string) time.Time {
	f.t.Helper()
	var h struct {
		History []struct {
			At time.Time `json:"at"`
		} `json:"history"`
	}
	f.getJSON(fmt.Sprintf("/api/v1/clusters/%d/history?target=%s", id, target), &h)
	if len(h.History) == 0 {
		f.t.Fatalf("cluster %d has no evaluation at %s", id, target)
	}
	return h.History[len(h.History)-1].At
}

// page is the cluster page's fragment, as the dashboard loads it.
func (f tlsFleet) page(id int64) string {
	f.t.Helper()
	return string(f.get(fmt.Sprintf("/ui/clusters/%d", id)))
}
