package server_test

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/fleet/server"
	"github.com/upgradescope/upgradescope/inventory"
)

// Issue 30, item 14: whatever a team-scoped token reads is computed from its teams' share of
// a cluster. Two servers hold the same cluster, one with team data's objects and one
// without; every read a payments token can make must answer the same bytes on both.

// sharedCluster is prod (1.32) as teams payments (namespace shop), data (namespace data) and
// no team (namespace infra, and the cluster-scoped PodSecurityPolicy) run it; withData false
// leaves out everything of team data, its namespace included.
func sharedCluster(t *testing.T, withData bool) *inventory.Document {
	t.Helper()
	doc := teamsInventory(t)
	ingress := &doc.APIUsage[0] // extensions/v1beta1 Ingress, removed: a blocker
	if ingress.Kind != "Ingress" {
		t.Fatalf("testdata/teams starts with %s, not the Ingress", ingress.Kind)
	}
	ingress.Namespaces = map[string]int{"shop": 1, "infra": 1}
	ingress.Objects = append(ingress.Objects, inventory.ObjectRef{Namespace: "infra", Name: "gw"})
	ingress.Count = 2
	doc.Namespaces = []inventory.Namespace{{Name: "shop", Team: "payments"}, {Name: "infra"}}
	controller := inventory.ImageVersion{Tag: "v1.1.0", Namespaces: []string{"shop"},
		Objects: []inventory.ObjectRef{{Kind: "Deployment", Namespace: "shop", Name: "edge"}}}
	doc.WorkloadImages = []inventory.WorkloadImage{{Repository: "registry.k8s.io/ingress-nginx/controller",
		Versions: []inventory.ImageVersion{controller}}}
	doc.Capabilities[inventory.CapHelm] = inventory.Capability{Available: false}
	// Calls the apiserver saw name no namespace: every share holds them, with or without data.
	doc.DeprecatedCalls = []inventory.DeprecatedCall{{Group: "extensions", Version: "v1beta1", Resource: "ingresses", RemovedRelease: "1.22"}}
	if !withData {
		doc.APIUsage = slicesWithout(doc.APIUsage, "Endpoints") // data/pg
		return doc
	}
	// The object a guessing gate sends a copy of, beside payments' own and no team's.
	ingress.Namespaces["data"] = 1
	ingress.Objects = append(ingress.Objects, inventory.ObjectRef{Namespace: "data", Name: "secret-ingress"})
	ingress.Count = 3
	doc.Namespaces = append(doc.Namespaces, inventory.Namespace{Name: "data", Team: "data"})
	doc.APIUsage = append(doc.APIUsage, inventory.APIUsage{Group: "batch", Version: "v1beta1", Kind: "CronJob", Count: 1,
		Namespaces: map[string]int{"data": 1}, Objects: []inventory.ObjectRef{{Namespace: "data", Name: "secret-cron"}}})
	inventory.SortAPIUsage(doc.APIUsage)
	doc.WorkloadImages[0].Versions[0].Namespaces = []string{"data", "shop"}
	doc.WorkloadImages[0].Versions[0].Objects = append(doc.WorkloadImages[0].Versions[0].Objects,
		inventory.ObjectRef{Kind: "Deployment", Namespace: "data", Name: "secret-edge"})
	doc.HelmReleases = []inventory.HelmRelease{{Name: "secret-release", Namespace: "data", Chart: "ingress-nginx",
		ChartVersion: "3.0.0", AppVersion: "0.40.0", Status: "deployed", Revision: 1}}
	doc.GitopsCharts = []inventory.GitopsChart{{Tool: inventory.ToolArgoCD, Namespace: "infra", Name: "secret-app",
		TargetNamespace: "data", Chart: "ingress-nginx", Version: "3.0.0", VersionKind: inventory.VersionExact}}
	doc.APIAuthorshipUnknown = []inventory.APIUsage{{Group: "extensions", Version: "v1beta1", Kind: "Ingress", Count: 1,
		Namespaces: map[string]int{"data": 1}, Objects: []inventory.ObjectRef{{Namespace: "data", Name: "secret-ingress"}}}}
	if len(doc.Probes) > 0 {
		p := &doc.Probes[0]
		p.Count, p.Examined = 1, 1
		p.Objects = []inventory.ProbeObject{{Kind: "Service", Namespace: "data", Name: "secret-probed", Values: []string{"secret-value"}}}
	}
	// Why helm was not assessed names data's release: the reason is withheld, and so is
	// whether there was one.
	doc.Capabilities[inventory.CapHelm] = inventory.Capability{Available: false, Reason: "data/secret-release: forbidden",
		Skipped: []string{"data/secret-release"}}
	return doc
}

func slicesWithout(rows []inventory.APIUsage, kind string) []inventory.APIUsage {
	var out []inventory.APIUsage
	for _, u := range rows {
		if u.Kind != kind {
			out = append(out, u)
		}
	}
	return out
}

// shareServer is a server holding prod, and with withData also secret-ops, a cluster of team data
// alone; payments and fleet are a payments token and a fleet-wide one.
type shareServer struct {
	*testServer
	payments, fleet string
	prod            int
	// received are the times the store took the pushes at, by its own clock (tests pin the
	// server's, not the store's): the same for every reader, they differ between the two
	// servers and are replaced before answers are compared.
	received []time.Time
}

func newShareServer(t *testing.T, withData bool) shareServer {
	t.Helper()
	ts := newServer(t, func(c *server.Config) {
		c.IngestToken, c.AdminToken, c.Targets = "shared", "admin", []string{"1.34"}
	})
	if r := ts.push("shared", envelope(t, "prod", sharedCluster(t, withData))); r.status != 202 {
		t.Fatalf("push prod: %d %s", r.status, r.body)
	}
	if withData {
		ops := otherCluster(t, "ops-uid")
		ops.Namespaces[0].Team = "data"
		if r := ts.push("shared", envelope(t, "secret-ops", ops)); r.status != 202 {
			t.Fatalf("push ops: %d %s", r.status, r.body)
		}
	}
	s := shareServer{testServer: ts, payments: ts.mintRead("payments"), fleet: ts.mintRead("*")}
	s.prod = ts.idAs(s.payments, "prod")
	detail := ts.get(fmt.Sprintf("/api/v1/clusters/%d", s.prod), s.fleet).json(t)
	for _, v := range []any{detail["firstSeen"], detail["lastSeen"], detail["snapshot"].(map[string]any)["receivedAt"]} {
		at, err := time.Parse(time.RFC3339Nano, v.(string))
		if err != nil {
			t.Fatal(err)
		}
		s.received = append(s.received, at)
	}
	return s
}

// read is one request a token may send.
type read struct {
	name    string // what it reads, as a sentence
	pattern string // the route of fleet/server/routes.go it reaches
	method  string
	path    string // %d is prod's id
	body    string
	header  http.Header
}

var yamlHeader = http.Header{"Content-Type": {"application/yaml"}}

// scopedReads are every route a read token can call, each with the requests that reach it.
var scopedReads = []read{
	{"the liveness probe", "GET /healthz", "GET", "/healthz", "", nil},
	{"the readiness probe", "GET /readyz", "GET", "/readyz", "", nil},
	{"the metrics, refused", "GET /metrics", "GET", "/metrics", "", nil},
	{"a push with a read token, refused", "POST /api/v1/snapshots", "POST", "/api/v1/snapshots", "{}", nil},
	{"an audit batch with a read token, refused", "POST /api/v1/audit/{name}", "POST", "/api/v1/audit/prod", `{"kind":"EventList","items":[]}`, nil},
	{"the cluster list", "GET /api/v1/clusters", "GET", "/api/v1/clusters", "", nil},
	{"the cluster's detail", "GET /api/v1/clusters/{id}", "GET", "/api/v1/clusters/%d", "", nil},
	{"a delete, refused", "DELETE /api/v1/clusters/{id}", "DELETE", "/api/v1/clusters/%d", "", nil},
	{"a rename, refused", "PATCH /api/v1/clusters/{id}", "PATCH", "/api/v1/clusters/%d", `{"name":"x"}`, nil},
	{"the report at the next minor", "GET /api/v1/clusters/{id}/report", "GET", "/api/v1/clusters/%d/report", "", nil},
	{"the report at a --targets minor", "GET /api/v1/clusters/{id}/report", "GET", "/api/v1/clusters/%d/report?target=1.34", "", nil},
	{"the report at a minor never stored", "GET /api/v1/clusters/{id}/report", "GET", "/api/v1/clusters/%d/report?target=1.36", "", nil},
	{"the findings", "GET /api/v1/clusters/{id}/findings", "GET", "/api/v1/clusters/%d/findings?target=1.33", "", nil},
	{"the blockers", "GET /api/v1/clusters/{id}/findings", "GET", "/api/v1/clusters/%d/findings?target=1.33&severity=blocker", "", nil},
	{"the history", "GET /api/v1/clusters/{id}/history", "GET", "/api/v1/clusters/%d/history?target=1.33", "", nil},
	{"the teams", "GET /api/v1/clusters/{id}/teams", "GET", "/api/v1/clusters/%d/teams?target=1.33", "", nil},
	{"the CSV export", "GET /api/v1/clusters/{id}/export", "GET", "/api/v1/clusters/%d/export?target=1.33&format=csv", "", nil},
	{"the HTML export", "GET /api/v1/clusters/{id}/export", "GET", "/api/v1/clusters/%d/export?target=1.33&format=html", "", nil},
	{"a gate sending a copy of data's object", "POST /api/v1/gate", "POST", "/api/v1/gate?target=1.33&cluster=prod",
		ingressYAML("data", "secret-ingress"), yamlHeader},
	{"a gate sending a copy of data's object as a table", "POST /api/v1/gate", "POST", "/api/v1/gate?target=1.33&cluster=prod&format=table",
		ingressYAML("data", "secret-ingress") + "---\n" + ingressYAML("shop", "a"), yamlHeader},
	{"a gate sending an object of its own", "POST /api/v1/gate", "POST", "/api/v1/gate?target=1.33&cluster=%d",
		ingressYAML("shop", "new"), yamlHeader},
	{"a gate sending a guess without a cluster", "POST /api/v1/gate", "POST", "/api/v1/gate?target=1.33",
		ingressYAML("data", "secret-ingress"), yamlHeader},
	{"the fleet", "GET /api/v1/fleet", "GET", "/api/v1/fleet", "", nil},
	{"the fleet at chosen targets", "GET /api/v1/fleet", "GET", "/api/v1/fleet?targets=1.33,1.34,1.35", "", nil},
	{"the fleet's teams", "GET /api/v1/fleet/teams", "GET", "/api/v1/fleet/teams?target=1.33", "", nil},
	{"the fleet's findings", "GET /api/v1/fleet/findings", "GET", "/api/v1/fleet/findings", "", nil},
	{"the fleet's findings at a target, of a team", "GET /api/v1/fleet/findings", "GET", "/api/v1/fleet/findings?target=1.34&team=payments", "", nil},
	{"the fleet's findings as CSV", "GET /api/v1/fleet/findings", "GET", "/api/v1/fleet/findings?target=1.33&format=csv", "", nil},
	{"a dry run, refused", "POST /api/v1/bundles/dry-run", "POST", "/api/v1/bundles/dry-run", "x", nil},
	{"a bundle download, refused", "GET /bundles/{name}", "GET", "/bundles/kb.tar.gz", "", nil},
	{"the dashboard's fleet page", "GET /{$}", "GET", "/", "", nil},
	{"the dashboard's cluster page", "GET /clusters/{id}", "GET", "/clusters/%d", "", nil},
	{"the dashboard's teams page", "GET /teams", "GET", "/teams", "", nil},
	{"the dashboard's knowledge page", "GET /knowledge", "GET", "/knowledge", "", nil},
	{"the dashboard's findings page", "GET /findings", "GET", "/findings", "", nil},
	{"an asset", "GET /assets/{file}", "GET", "/assets/app.js", "", nil},
	{"the fleet fragment", "GET /ui/fleet", "GET", "/ui/fleet", "", nil},
	{"the cluster fragment", "GET /ui/clusters/{id}", "GET", "/ui/clusters/%d", "", nil},
	{"the cluster fragment at a minor never stored", "GET /ui/clusters/{id}", "GET", "/ui/clusters/%d?target=1.36", "", nil},
	{"the teams fragment", "GET /ui/teams", "GET", "/ui/teams", "", nil},
	{"the teams fragment at a target", "GET /ui/teams", "GET", "/ui/teams?target=1.33", "", nil},
	{"the knowledge fragment", "GET /ui/knowledge", "GET", "/ui/knowledge", "", nil},
	{"the findings fragment", "GET /ui/findings", "GET", "/ui/findings", "", nil},
	{"the findings fragment with warnings", "GET /ui/findings", "GET", "/ui/findings?severity=all&target=1.34", "", nil},
}

func ingressYAML(ns, name string) string {
	return fmt.Sprintf("apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata: {name: %s, namespace: %s}\nspec: {}\n", name, ns)
}

// send makes r with token; the cluster's id goes where the path has %d.
func (s shareServer) send(r read, token string) response {
	path := r.path
	if strings.Contains(path, "%d") {
		path = fmt.Sprintf(path, s.prod)
	}
	var body []byte
	if r.body != "" {
		body = []byte(r.body)
	}
	return s.do(r.method, path, token, body, r.header)
}

// answered is what a reader of s is told: the status, the body and every header but the
// date and the body's length, the store's receive times in every form a read writes them
// replaced.
func (s shareServer) answered(r response) string {
	h := r.header.Clone()
	h.Del("Date")
	h.Del("Content-Length")
	var b bytes.Buffer
	_ = h.Write(&b)
	body := string(r.body)
	for _, at := range s.received {
		for _, layout := range []string{time.RFC3339Nano, time.RFC3339, "2006-01-02 15:04 MST", "2006-01-02 15:04"} {
			body = strings.ReplaceAll(body, at.UTC().Format(layout), "(received)")
		}
	}
	return fmt.Sprintf("%d\n%s\n%s", r.status, b.String(), body)
}

func TestEveryReadOfATeamScopedTokenIsTheSameWhetherOrNotOtherTeamsHaveObjects(t *testing.T) {
	with, without := newShareServer(t, true), newShareServer(t, false)
	if with.prod != without.prod {
		t.Fatalf("prod is %d on one server and %d on the other", with.prod, without.prod)
	}
	for _, r := range scopedReads {
		t.Run(r.name, func(t *testing.T) {
			got, want := with.send(r, with.payments), without.send(r, without.payments)
			if with.answered(got) != without.answered(want) {
				t.Errorf("%s %s: payments is answered differently when team data has objects:\nwith data's:\n%s\n\nwithout:\n%s",
					r.method, r.path, with.answered(got), without.answered(want))
			}
			// A gate echoes what it was sent; nothing else may name data's objects.
			if !strings.Contains(r.body, "secret-") && bytes.Contains(got.body, []byte("secret-")) {
				t.Errorf("%s %s: payments reads one of data's names: %s", r.method, r.path, got.body)
			}
		})
	}
}

// The comparison above is worth something only if the two fleets differ to a reader who may
// see everything: the stored judgement and the gate's guess both tell data's objects apart.
func TestAFleetWideReaderToldTheTwoFleetsApart(t *testing.T) {
	with, without := newShareServer(t, true), newShareServer(t, false)
	for _, name := range []string{"the report at the next minor", "a gate sending a copy of data's object", "the fleet"} {
		r := readNamed(t, name)
		if got, want := with.send(r, with.fleet), without.send(r, without.fleet); with.answered(got) == without.answered(want) {
			t.Errorf("%s %s: a fleet-wide reader is told the same with and without data's objects", r.method, r.path)
		}
	}
}

func readNamed(t *testing.T, name string) read {
	for _, r := range scopedReads {
		if r.name == name {
			return r
		}
	}
	t.Fatalf("no read named %q", name)
	return read{}
}

// routePattern is a route as fleet/server/routes.go and fleet/server/dashboard.go register it.
var routePattern = regexp.MustCompile(`"((?:GET|POST|PATCH|DELETE) /[^"]*)"`)

func TestEveryRouteHasATeamScopedRead(t *testing.T) {
	covered := map[string]bool{}
	for _, r := range scopedReads {
		covered[r.pattern] = true
	}
	for _, file := range []string{"routes.go", "dashboard.go"} {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range routePattern.FindAllStringSubmatch(string(src), -1) {
			if !covered[m[1]] {
				t.Errorf("route %q (%s) has no case in scopedReads: add what a team-scoped token reads there", m[1], file)
			}
		}
	}
}

// What no team owns can stop every team's upgrade: every share judges it and shows it.
func TestAShareShowsWhatNoTeamOwns(t *testing.T) {
	s := newShareServer(t, true)
	body := string(s.get(fmt.Sprintf("/api/v1/clusters/%d/findings?target=1.33", s.prod), s.payments).body)
	for _, want := range []string{`"namespace":"infra","name":"gw"`, "removed-api/policy/v1beta1/PodSecurityPolicy"} {
		if !strings.Contains(body, want) {
			t.Errorf("payments' findings lack %s: %s", want, body)
		}
	}
}

// A share is not the cluster: its verdict is never ready, while its teams' own can be.
func TestAShareIsNeverReadyWhileItsTeamsCanBe(t *testing.T) {
	ts := newServer(t, func(c *server.Config) { c.IngestToken = "shared" })
	doc := otherCluster(t, "ops-uid") // its one finding is in namespace ops, of team platform
	doc.Namespaces = append(doc.Namespaces, inventory.Namespace{Name: "pay", Team: "payments"})
	if r := ts.push("shared", envelope(t, "ops", doc)); r.status != 202 {
		t.Fatalf("push: %d %s", r.status, r.body)
	}
	tok := ts.mintRead("payments")
	id := ts.idAs(tok, "ops")
	rep := ts.get(fmt.Sprintf("/api/v1/clusters/%d/report?target=1.34", id), tok).json(t)["report"].(map[string]any)
	target := rep["targets"].([]any)[0].(map[string]any)
	gaps := fmt.Sprint(target["notAssessed"])
	if target["verdict"] != "unknown" || target["score"].(float64) != 100 || !strings.Contains(gaps, "capability:other-teams") ||
		!strings.Contains(gaps, "required:true") {
		t.Errorf("payments' share without findings: verdict %v, score %v, not assessed %s; want unknown at 100 for the other teams",
			target["verdict"], target["score"], gaps)
	}
	cluster := ts.get("/api/v1/clusters", tok).json(t)["clusters"].([]any)[0].(map[string]any)
	if latest := cluster["latest"].(map[string]any); latest["verdict"] != "unknown" || latest["ready"] != false {
		t.Errorf("payments lists ops as %v; want unknown, never ready", latest)
	}
	rollup := ts.get("/api/v1/fleet/teams?target=1.34", tok).json(t)["teams"].(map[string]any)
	if p, _ := rollup["payments"].(map[string]any); p == nil || p["verdict"] != "ready" {
		t.Errorf("payments' own verdict is %v; want ready: nothing of its own is in the way", rollup["payments"])
	}
}
