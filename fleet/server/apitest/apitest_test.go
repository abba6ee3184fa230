package apitest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// recorder is a testing.TB that records failures instead of failing the
// test, so the tests can prove that Check fails on a bad response.
// Fatalf panics to stop the check the way t.FailNow stops a test.
type recorder struct {
	testing.TB
	mu     sync.Mutex
	errors []string
}

type fatal struct{}

func (r *recorder) Helper() {}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.Errorf(format, args...)
	panic(fatal{})
}

// run calls f with the recorder and returns what it recorded, also when
// f stopped at a Fatalf.
func (r *recorder) run(f func(testing.TB)) (recorded []string) {
	defer func() {
		if v := recover(); v != nil {
			if _, ok := v.(fatal); !ok {
				panic(v)
			}
		}
		recorded = r.errors
	}()
	f(r)
	return r.errors
}

const specPath = "../../../docs/openapi.yaml"

var jsonHeader = http.Header{"Content-Type": {"application/json"}}

func withHeader(kv ...string) http.Header {
	h := jsonHeader.Clone()
	for i := 0; i+1 < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	return h
}

const evalSummary = `{"target":"1.37","verdict":"blocked","score":62,"ready":false,"blockers":2,"warnings":3,
	"evaluatedAt":"2026-11-30T12:00:00Z","snapshotId":5,"outdated":false}`

const clusterSummary = `{"id":1,"name":"prod-eu","clusterUid":"5f1c","firstSeen":"2026-11-29T08:00:00Z",
	"lastSeen":"2026-11-30T12:00:00Z","serverVersion":"v1.36.2","stale":false,"latestSnapshotId":5,
	"defaultTarget":"1.37","latest":` + evalSummary + `,"bundles":[{"name":"kb","revision":"2026-11-30.1","behind":false}]}`

// A cluster that never pushed: no version, no default target, no evaluation.
const newCluster = `{"id":2,"name":"dev","clusterUid":"","firstSeen":"2026-11-30T11:00:00Z",
	"lastSeen":"2026-11-30T11:00:00Z","serverVersion":"","stale":true,"latestSnapshotId":0,
	"defaultTarget":"","latest":null,"bundles":[]}`

var ndjsonHeader = http.Header{"Content-Type": {"application/x-ndjson"}}

const dryRunLine = `{"cluster":"prod-eu","targets":[{"target":"1.37","before":null,` +
	`"after":{"verdict":"blocked","score":75,"blockers":1,"warnings":0},"new":["fleet-gateway/ingress"],"changed":[],"resolved":[],"newBlockers":["fleet-gateway/ingress"]}]}`

const dryRunSummary = `{"summary":{"clusters":2,"turnedBlocked":["prod-eu"],"turnedUnknown":[],"turnedReady":[],` +
	`"changed":["prod-eu"],"newBlockers":["prod-eu"],"candidateErrors":[],"unjudged":["dev"]}}`

const finding = `{"key":"removed-api/flowcontrol.apiserver.k8s.io/v1beta3","category":"removed-api",
	"severity":"blocker","target":"1.37","title":"FlowSchema uses a removed API"}`

const report = `{"schemaVersion":1,"toolVersion":"0.9.0","evaluatedAt":"2026-11-30T12:00:00Z","source":"cluster",
	"bundles":[{"name":"core","revision":"2026.11","source":"embedded","roots":["upgradescope"]}],
	"kb":{"horizon":"1.38","generatedFrom":"kb-2026-11"},
	"targets":[{"target":"1.37","verdict":"blocked","score":62,"blockers":1,"warnings":0,"infos":0,
		"suppressedCount":0,"findings":[` + finding + `],"suppressed":[],"notAssessed":[]}]}`

func TestCheck(t *testing.T) {
	spec := Load(t, specPath)
	tests := []struct {
		name     string
		method   string
		target   string
		status   int
		header   http.Header
		body     string
		wantFail string // substring of the failure; "" when Check must pass
	}{
		// Answers that follow api-shapes.md pass.
		{name: "a valid ClusterSummary list passes",
			method: "GET", target: "/api/v1/clusters", status: 200, header: jsonHeader,
			body: `{"clusters":[` + clusterSummary + `,` + newCluster + `]}`},
		{name: "a team-scoped answer with its headers passes",
			method: "GET", target: "/api/v1/clusters", status: 200,
			header: withHeader("X-Upgradescope-Teams", "payments", "Cache-Control", "private, no-store"),
			body:   `{"clusters":[]}`},
		{name: "a cluster detail with a null snapshot passes",
			method: "GET", target: "/api/v1/clusters/2", status: 200, header: jsonHeader,
			body: strings.TrimSuffix(newCluster, "}") + `,"targets":["1.38"],"evaluations":[],"snapshot":null}`},
		{name: "a cluster detail with a snapshot and a null collectedAt passes",
			method: "GET", target: "/api/v1/clusters/1", status: 200, header: jsonHeader,
			body: strings.TrimSuffix(clusterSummary, "}") + `,"targets":["1.37","1.38"],"evaluations":[` + evalSummary + `],
				"snapshot":{"id":5,"receivedAt":"2026-11-30T12:00:00Z","collectedAt":null,"agentVersion":"0.9.0",
				"kbVersion":"kb-2026-11","serverVersion":"v1.36.2",
				"capabilities":{"audit":{"available":false,"reason":"no audit log"},"rbac":{"available":true,"partial":true,"skipped":["kube-system"]}}}}`},
		{name: "a report envelope holding a report that follows report.schema.json passes",
			method: "GET", target: "/api/v1/clusters/1/report?target=1.37", status: 200, header: jsonHeader,
			body: `{"schemaVersion":1,"clusterId":1,"clusterName":"prod-eu","target":"1.37","source":"stored",
				"snapshotId":5,"evaluatedAt":"2026-11-30T12:00:00Z","outdated":false,"report":` + report + `}`},
		{name: "findings that follow the report schema's finding pass",
			method: "GET", target: "/api/v1/clusters/1/findings?severity=blocker", status: 200, header: jsonHeader,
			body: `{"clusterId":1,"target":"1.37","source":"what-if","snapshotId":5,"findings":[` + finding + `]}`},
		{name: "a fleet with a null cell passes",
			method: "GET", target: "/api/v1/fleet?targets=1.37,1.38", status: 200, header: jsonHeader,
			body: `{"targets":["1.37","1.38"],"generatedAt":"2026-11-30T12:00:00Z","bundles":[{"name":"upgradescope-kb","revision":"2026.11"}],"reevaluation":{"pending":0},"clusters":[{"clusterId":1,
				"name":"prod-eu","lastSeen":"2026-11-30T12:00:00Z","stale":false,"serverVersion":"v1.36.2",
				"cells":{"1.37":` + evalSummary + `,"1.38":null},"notApplicable":[],"bundles":[],
				"standing":{"target":"1.37","status":"blocked","blockers":2,"topBlocker":{"key":"removed-api/extensions/v1beta1/Ingress","title":"Ingress removed"},"teams":["payments"]}}]}`},
		{name: "an accepted snapshot passes",
			method: "POST", target: "/api/v1/snapshots", status: 202, header: jsonHeader,
			body: `{"clusterId":1,"snapshotId":5,"duplicate":false,"evaluated":["1.34","1.37"],
				"verdicts":[{"target":"1.34","verdict":"ready","score":100,"blockers":0},{"target":"1.37","verdict":"blocked","score":50,"blockers":2}]}`},
		{name: "a counted audit batch passes",
			method: "POST", target: "/api/v1/audit/prod-eu?timeout=30s", status: 200, header: jsonHeader,
			body: `{"clusterId":1,"events":400,"malformed":1,"batches":12}`},
		{name: "an audit batch refused before the cluster's first push passes",
			method: "POST", target: "/api/v1/audit/prod-eu", status: 404, header: jsonHeader,
			body: `{"error":"no cluster named \"prod-eu\" has pushed a snapshot yet"}`},
		{name: "a 503 on ingest with Retry-After passes",
			method: "POST", target: "/api/v1/snapshots", status: 503, header: withHeader("Retry-After", "5"),
			body: `{"error":"store unavailable"}`},
		{name: "a 401 with WWW-Authenticate passes",
			method: "GET", target: "/api/v1/fleet", status: 401, header: withHeader("WWW-Authenticate", "Bearer"),
			body: `{"error":"missing bearer token"}`},
		{name: "a 422 for a limit out of range passes, the request being invalid on purpose",
			method: "GET", target: "/api/v1/clusters/1/history?limit=0", status: 422, header: jsonHeader,
			body: `{"error":"limit must be 1..1000"}`},
		{name: "a 204 delete with no body passes",
			method: "DELETE", target: "/api/v1/clusters/1", status: 204, header: http.Header{}},
		{name: "a request to an absolute URL, as an http.Client sends it, passes",
			method: "GET", target: "http://127.0.0.1:39123/api/v1/clusters", status: 200, header: jsonHeader,
			body: `{"clusters":[]}`},
		{name: "a JSON content type with a charset passes",
			method: "GET", target: "/healthz", status: 200,
			header: http.Header{"Content-Type": {"application/json; charset=utf-8"}},
			body:   `{"status":"ok"}`},
		{name: "metrics as Prometheus text pass",
			method: "GET", target: "/metrics", status: 200,
			header: http.Header{"Content-Type": {"text/plain; version=0.0.4; charset=utf-8"}},
			body:   "# HELP up 1\nup 1\n"},
		{name: "a 405 with Allow on a documented path passes",
			method: "PUT", target: "/api/v1/clusters", status: 405, header: withHeader("Allow", "GET"),
			body: `{"error":"method not allowed"}`},
		{name: "a JSON 404 for an unknown api path passes",
			method: "GET", target: "/api/v1/nodes", status: 404, header: jsonHeader,
			body: `{"error":"not found"}`},

		// Answers that drift from the contract fail.
		{name: "a response with an extra unknown field fails",
			method: "GET", target: "/api/v1/clusters", status: 200, header: jsonHeader,
			body:     `{"clusters":[` + strings.TrimSuffix(clusterSummary, "}") + `,"region":"eu"}]}`,
			wantFail: "region"},
		{name: "a missing required field fails",
			method: "GET", target: "/api/v1/clusters", status: 200, header: jsonHeader,
			body:     `{"clusters":[` + strings.Replace(newCluster, `"stale":true,`, ``, 1) + `]}`,
			wantFail: "stale"},
		{name: "a wrong type fails",
			method: "GET", target: "/api/v1/clusters", status: 200, header: jsonHeader,
			body:     `{"clusters":[` + strings.Replace(newCluster, `"id":2`, `"id":"2"`, 1) + `]}`,
			wantFail: "id"},
		{name: "a latest that is neither an EvalSummary nor null fails",
			method: "GET", target: "/api/v1/clusters", status: 200, header: jsonHeader,
			body:     `{"clusters":[` + strings.Replace(newCluster, `"latest":null`, `"latest":{}`, 1) + `]}`,
			wantFail: "latest"},
		{name: "a target that is not a minor version fails",
			method: "GET", target: "/api/v1/clusters/1/findings", status: 200, header: jsonHeader,
			body:     `{"clusterId":1,"target":"v1.37","source":"stored","snapshotId":5,"findings":[]}`,
			wantFail: "target"},
		{name: "a snapshot that is neither an object nor null fails",
			method: "GET", target: "/api/v1/clusters/2", status: 200, header: jsonHeader,
			body:     strings.TrimSuffix(newCluster, "}") + `,"targets":[],"evaluations":[],"snapshot":"none"}`,
			wantFail: "snapshot"},
		{name: "a report without its kb fails",
			method: "GET", target: "/api/v1/clusters/1/report", status: 200, header: jsonHeader,
			body: `{"schemaVersion":1,"clusterId":1,"clusterName":"prod-eu","target":"1.37","source":"stored",
				"snapshotId":5,"evaluatedAt":"2026-11-30T12:00:00Z","outdated":false,"report":` +
				strings.Replace(report, `"kb":{"horizon":"1.38","generatedFrom":"kb-2026-11"},`, ``, 1) + `}`,
			wantFail: "kb"},
		{name: "a report target with an unknown verdict fails",
			method: "GET", target: "/api/v1/clusters/1/report", status: 200, header: jsonHeader,
			body: `{"schemaVersion":1,"clusterId":1,"clusterName":"prod-eu","target":"1.37","source":"stored",
				"snapshotId":5,"evaluatedAt":"2026-11-30T12:00:00Z","outdated":false,"report":` +
				strings.Replace(report, `"verdict":"blocked"`, `"verdict":"maybe"`, 1) + `}`,
			wantFail: "verdict"},
		{name: "an evaluatedAt that is not a date-time fails",
			method: "GET", target: "/api/v1/clusters", status: 200, header: jsonHeader,
			body:     `{"clusters":[` + strings.Replace(newCluster, `"firstSeen":"2026-11-30T11:00:00Z"`, `"firstSeen":"yesterday"`, 1) + `]}`,
			wantFail: "firstSeen"},
		{name: "a finding without its severity fails",
			method: "GET", target: "/api/v1/clusters/1/findings", status: 200, header: jsonHeader,
			body:     `{"clusterId":1,"target":"1.37","source":"stored","snapshotId":5,"findings":[` + strings.Replace(finding, `"severity":"blocker",`, ``, 1) + `]}`,
			wantFail: "severity"},
		{name: "a 500 that says more than internal error fails",
			method: "GET", target: "/api/v1/clusters", status: 500, header: jsonHeader,
			body:     `{"error":"pq: connection refused"}`,
			wantFail: "500"},
		{name: "an undocumented status fails",
			method: "GET", target: "/api/v1/clusters", status: 418, header: jsonHeader,
			body:     `{"error":"teapot"}`,
			wantFail: "status 418 is not documented"},
		{name: "an unknown path fails",
			method: "GET", target: "/api/v1/nodes", status: 200, header: jsonHeader,
			body:     `{"nodes":[]}`,
			wantFail: "route not in the OpenAPI document"},
		{name: "a 503 on ingest without Retry-After fails",
			method: "POST", target: "/api/v1/snapshots", status: 503, header: jsonHeader,
			body:     `{"error":"store unavailable"}`,
			wantFail: "Retry-After"},
		{name: "an audit batch answer without its batch count fails",
			method: "POST", target: "/api/v1/audit/prod-eu", status: 200, header: jsonHeader,
			body:     `{"clusterId":1,"events":400,"malformed":0}`,
			wantFail: "batches"},
		{name: "a 503 on an audit batch without Retry-After fails, as the webhook backend would not retry it",
			method: "POST", target: "/api/v1/audit/prod-eu", status: 503, header: jsonHeader,
			body:     `{"error":"the server is busy, retry later"}`,
			wantFail: "Retry-After"},
		{name: "a 401 without WWW-Authenticate fails",
			method: "GET", target: "/api/v1/fleet", status: 401, header: jsonHeader,
			body:     `{"error":"missing bearer token"}`,
			wantFail: "WWW-Authenticate"},
		{name: "a 405 without Allow fails",
			method: "PUT", target: "/api/v1/clusters", status: 405, header: jsonHeader,
			body:     `{"error":"method not allowed"}`,
			wantFail: "Allow"},
		{name: "a JSON answer sent as text/html fails",
			method: "GET", target: "/healthz", status: 200,
			header:   http.Header{"Content-Type": {"text/html"}},
			body:     `{"status":"ok"}`,
			wantFail: "text/html"},
		{name: "an empty body where JSON is documented fails",
			method: "GET", target: "/readyz", status: 503, header: jsonHeader,
			wantFail: "503"},
		{name: "a 200 to a fleet of more than 16 targets fails",
			method: "GET", target: "/api/v1/fleet?targets=1.1,1.2,1.3,1.4,1.5,1.6,1.7,1.8,1.9,1.10,1.11,1.12,1.13,1.14,1.15,1.16,1.17",
			status: 200, header: jsonHeader,
			body:     `{"targets":[],"generatedAt":"2026-11-30T12:00:00Z","bundles":[{"name":"upgradescope-kb","revision":"2026.11"}],"reevaluation":{"pending":0},"clusters":[]}`,
			wantFail: "targets"},
		{name: "a 204 with a body fails",
			method: "DELETE", target: "/api/v1/clusters/1", status: 204, header: jsonHeader,
			body:     `{}`,
			wantFail: "no body"},
		{name: "a 200 to a history limit out of range fails",
			method: "GET", target: "/api/v1/clusters/1/history?limit=5000", status: 200, header: jsonHeader,
			body:     `{"clusterId":1,"target":"1.37","history":[]}`,
			wantFail: "limit"},
		{name: "a dry run's stream, a line per cluster and the summary, passes",
			method: "POST", target: "/api/v1/bundles/dry-run", status: 200, header: ndjsonHeader,
			body: dryRunLine + "\n" + `{"cluster":"dev","targets":[],"error":"not judged: the dry run's time budget ran out first"}` + "\n" + dryRunSummary + "\n"},
		{name: "a dry run's line that breaks the schema fails, naming the line",
			method: "POST", target: "/api/v1/bundles/dry-run", status: 200, header: ndjsonHeader,
			body:     dryRunLine + "\n" + `{"cluster":"prod-eu","targets":[{"target":"1.37"}]}` + "\n" + dryRunSummary + "\n",
			wantFail: "line 2"},
		{name: "a dry run's stream cut off mid-line fails",
			method: "POST", target: "/api/v1/bundles/dry-run", status: 200, header: ndjsonHeader,
			body:     dryRunLine + "\n" + `{"cluster":"pro`,
			wantFail: "newline"},
		{name: "a fleet cell keyed by something that is not a target fails",
			method: "GET", target: "/api/v1/fleet", status: 200, header: jsonHeader,
			body: `{"targets":["1.37"],"generatedAt":"2026-11-30T12:00:00Z","bundles":[{"name":"upgradescope-kb","revision":"2026.11"}],"reevaluation":{"pending":0},"clusters":[{"clusterId":1,
				"name":"prod-eu","lastSeen":"2026-11-30T12:00:00Z","stale":false,"serverVersion":"v1.36.2",
				"cells":{"latest":null},"notApplicable":[],"bundles":[]}]}`,
			wantFail: "latest"},
		{name: "a fleet without the server's bundle set and re-evaluation progress fails",
			method: "GET", target: "/api/v1/fleet", status: 200, header: jsonHeader,
			body:     `{"targets":[],"generatedAt":"2026-11-30T12:00:00Z","clusters":[]}`,
			wantFail: "reevaluation"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel() // server tests may call Check from parallel tests too
			req := httptest.NewRequest(tt.method, tt.target, nil)
			rec := &recorder{TB: t}
			got := rec.run(func(tb testing.TB) {
				spec.Check(tb, req, tt.status, tt.header, []byte(tt.body))
			})
			switch {
			case tt.wantFail == "" && len(got) > 0:
				t.Errorf("Check failed a valid response:\n%s", strings.Join(got, "\n"))
			case tt.wantFail != "" && len(got) == 0:
				t.Errorf("Check passed a response it must fail (want a failure mentioning %q)", tt.wantFail)
			case tt.wantFail != "" && !strings.Contains(strings.Join(got, "\n"), tt.wantFail):
				t.Errorf("Check failed, but not about %q:\n%s", tt.wantFail, strings.Join(got, "\n"))
			}
			for _, msg := range got {
				t.Log(msg) // what a server test would print, to read with -v
			}
			// Every failure names what failed, so a server test's log is enough to find it.
			for _, msg := range got {
				if !strings.Contains(msg, tt.method) || !strings.Contains(msg, req.URL.Path) || !strings.Contains(msg, fmt.Sprint(tt.status)) {
					t.Errorf("failure message does not name method, path and status: %s", msg)
				}
			}
		})
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	write := func(name, doc string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	const head = "openapi: 3.1.0\ninfo: {title: t, version: '1'}\n"
	tests := []struct {
		name     string
		path     string
		wantFail string
	}{
		{name: "the repository's contract loads", path: specPath},
		{name: "a missing file fails", path: filepath.Join(dir, "absent.yaml"), wantFail: "load"},
		{name: "a schema with an unknown type fails",
			path: write("badtype.yaml", head+`paths:
  /x:
    get:
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema: {type: [object, nothing]}
`),
			wantFail: "validate"},
		{name: "a $ref to a missing component fails",
			path: write("badref.yaml", head+`paths:
  /x:
    get:
      responses:
        "200":
          description: ok
          content:
            application/json:
              schema: {$ref: "#/components/schemas/Nope"}
`),
			wantFail: "Nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{TB: t}
			got := rec.run(func(tb testing.TB) { Load(tb, tt.path) })
			switch {
			case tt.wantFail == "" && len(got) > 0:
				t.Errorf("Load failed a valid document:\n%s", strings.Join(got, "\n"))
			case tt.wantFail != "" && len(got) == 0:
				t.Errorf("Load passed a document it must fail (want a failure mentioning %q)", tt.wantFail)
			case tt.wantFail != "" && !strings.Contains(strings.Join(got, "\n"), tt.wantFail):
				t.Errorf("Load failed, but not about %q:\n%s", tt.wantFail, strings.Join(got, "\n"))
			}
			for _, msg := range got {
				t.Log(msg)
			}
		})
	}
}

// TestContractCoversAPIShapes pins the endpoints of api-shapes.md (issue
// 14), the export (issue 16), the published bundles and the dry run (issue 17) and the dashboard's
// routes (issue 18): each has an operation with
// an id, a one-line summary and a stated security requirement, so removing one from the
// document fails here.
func TestContractCoversAPIShapes(t *testing.T) {
	spec := Load(t, specPath)
	routes := []string{
		"GET /healthz", "GET /readyz", "GET /metrics",
		"POST /api/v1/snapshots",
		// The audit webhook backend's batches (issue 37).
		"POST /api/v1/audit/{name}",
		"GET /api/v1/clusters", "GET /api/v1/clusters/{id}",
		"GET /api/v1/clusters/{id}/report", "GET /api/v1/clusters/{id}/findings",
		"GET /api/v1/clusters/{id}/history", "GET /api/v1/clusters/{id}/teams",
		"GET /api/v1/clusters/{id}/export", "POST /api/v1/gate",
		"GET /api/v1/fleet", "GET /api/v1/fleet/teams", "GET /api/v1/fleet/findings",
		"DELETE /api/v1/clusters/{id}", "PATCH /api/v1/clusters/{id}",
		"GET /bundles/{name}", "POST /api/v1/bundles/dry-run",
		// The dashboard (issue 18): HTML pages, assets and fragments.
		"GET /", "GET /clusters/{id}", "GET /teams", "GET /knowledge", "GET /assets/{file}",
		"GET /ui/fleet", "GET /ui/clusters/{id}", "GET /ui/teams", "GET /ui/knowledge",
		// The fleet's findings (issue 34).
		"GET /findings", "GET /ui/findings",
	}
	count := 0
	for _, item := range spec.doc.Paths.Map() {
		count += len(item.Operations())
	}
	if count != len(routes) {
		t.Errorf("the document has %d operations, api-shapes.md %d", count, len(routes))
	}
	for _, route := range routes {
		method, path, _ := strings.Cut(route, " ")
		item := spec.doc.Paths.Value(path)
		if item == nil || item.GetOperation(method) == nil {
			t.Errorf("%s: not in the document", route)
			continue
		}
		op := item.GetOperation(method)
		if op.OperationID == "" || op.Summary == "" || strings.Contains(op.Summary, "\n") {
			t.Errorf("%s: wants an operationId and a one-line summary, has %q, %q", route, op.OperationID, op.Summary)
		}
		if op.Security == nil && len(spec.doc.Security) == 0 {
			t.Errorf("%s: states no security", route)
		}
	}
}
