package server_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/fleet/server"
	"github.com/upgradescope/upgradescope/fleet/server/store"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/report"
)

// BenchmarkDashboardFleet reads the fleet page of 1,000 clusters × 4 targets (seedFleet: one
// snapshot each, v1.33.4 judged at 1.34–1.37) over loopback HTTP: the first page's fragment
// as app.js fetches it, sorted by name and by score, a search, and the last page. Reported
// besides the time: fragment-B, the fragment's bytes, and page-B, what a first visit
// downloads (the shell, app.js, app.css and the fragment, uncompressed).
//
// Measured 2026-12-01 on the 2-core VM shared with three other engineers at load average
// 12: 24–47 ms a request, 103 KB a fragment, 117 KB a first visit (docs/performance.md,
// Dashboard).
func BenchmarkDashboardFleet(b *testing.B) {
	st := benchStore(b)
	seedFleet(b, st, 1000, 1, []string{"1.34", "1.35", "1.36", "1.37"})
	ts := benchServer(b, st, server.Config{Targets: []string{"1.35", "1.36", "1.37"}})
	static := firstVisitBytes(b, ts)
	for _, query := range []string{"", "?target=1.36", "?sort=score", "?q=cluster-09", "?page=10", "?view=matrix"} {
		b.Run("fragment"+query, func(b *testing.B) {
			var n int
			for b.Loop() {
				n = len(getBody(b, ts, "/ui/fleet"+query))
			}
			b.ReportMetric(float64(n), "fragment-B")
			b.ReportMetric(float64(n+static), "page-B")
		})
	}
}

// BenchmarkFleetFindings reads the fleet's findings of 1,000 clusters × 4 targets (seedFleet:
// each stored report two blockers and three warnings) warm, as the summaries of the stored
// reports are kept by evaluation id: GET /api/v1/fleet/findings at each cluster's next minor
// and at 1.36, its CSV, and the findings page's fragment. "cold" is the first read after the
// server starts, decoding every report once.
//
// Measured with the numbers in docs/performance.md (Fleet findings).
func BenchmarkFleetFindings(b *testing.B) {
	st := benchStore(b)
	seedFleet(b, st, 1000, 1, []string{"1.34", "1.35", "1.36", "1.37"})
	benchFleetFindings(b, st)
}

// BenchmarkFleetFindingsVaried is BenchmarkFleetFindings on a fleet whose clusters differ
// (variedReport: 40 findings a cluster and target, of 400 keys), the worse shape: 400 rows
// in place of 5, each naming clusters with their own counts and teams.
func BenchmarkFleetFindingsVaried(b *testing.B) {
	st := benchStore(b)
	seedFleetWith(b, st, 1000, 1, []string{"1.34", "1.35", "1.36", "1.37"}, func(c int, t string) []byte { return variedReport(b, c, t) })
	benchFleetFindings(b, st)
}

func benchFleetFindings(b *testing.B, st store.Store) {
	b.Run("cold", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			ts := benchServer(b, st, server.Config{Targets: []string{"1.35", "1.36", "1.37"}})
			b.StartTimer()
			getBody(b, ts, "/api/v1/fleet/findings")
		}
	})
	ts := benchServer(b, st, server.Config{Targets: []string{"1.35", "1.36", "1.37"}})
	getBody(b, ts, "/api/v1/fleet/findings") // warm: every report summarized once
	for _, path := range []string{"/api/v1/fleet/findings", "/api/v1/fleet/findings?target=1.36", "/api/v1/fleet/findings?target=1.36&format=csv",
		"/ui/findings", "/ui/findings?target=1.36&severity=all", "/ui/findings?target=1.36&team=team-1"} {
		b.Run(strings.TrimPrefix(path, "/"), func(b *testing.B) {
			var n int
			for b.Loop() {
				n = len(getBody(b, ts, path))
			}
			b.ReportMetric(float64(n), "body-B")
		})
	}
}

// BenchmarkDashboardCluster reads the cluster page of a cluster whose stored report at its
// next minor has 500 findings (each naming 3 objects, 2 citations and a team) and 30
// history points: the stored report is decoded, cut, filtered and rendered per request.
// Measured as BenchmarkDashboardFleet: 32–57 ms, 608 KB; filtered to blockers in ns-1*,
// 9–22 ms.
func BenchmarkDashboardCluster(b *testing.B) {
	st := benchStore(b)
	id := seedBigCluster(b, st, 500, 30)
	ts := benchServer(b, st, server.Config{})
	for _, query := range []string{"", "?severity=blocker&q=ns-1"} {
		b.Run("fragment"+query, func(b *testing.B) {
			var n int
			for b.Loop() {
				n = len(getBody(b, ts, fmt.Sprintf("/ui/clusters/%d%s", id, query)))
			}
			b.ReportMetric(float64(n), "fragment-B")
		})
	}
}

// firstVisitBytes is the size of the shell and the assets it links.
func firstVisitBytes(b *testing.B, ts *httptest.Server) int {
	shell := getBody(b, ts, "/")
	n := len(shell)
	for _, m := range regexp.MustCompile(`(?:src|href)="(/assets/[^"]+)"`).FindAllSubmatch(shell, -1) {
		n += len(getBody(b, ts, string(m[1])))
	}
	return n
}

func getBody(b *testing.B, ts *httptest.Server, path string) []byte {
	resp, err := ts.Client().Get(ts.URL + path)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		b.Fatalf("%s: %d %v", path, resp.StatusCode, err)
	}
	return body
}

// seedBigCluster stores one cluster at v1.33.4 with history evaluations at 1.34, the last
// holding a report of findings findings, and answers its id.
func seedBigCluster(b *testing.B, st store.Store, findings, history int) int64 {
	tr := report.TargetResult{Target: "1.34", Verdict: "blocked", Teams: map[string]report.TeamResult{}}
	severities := []string{report.SeverityBlocker, report.SeverityWarning, report.SeverityInfo}
	for i := range findings {
		sev := severities[i%3]
		team := fmt.Sprintf("team-%d", i%12)
		f := report.Finding{Key: fmt.Sprintf("removed-api/example.com/v1beta%d/Kind%d", i%7, i), Category: []string{"removed-api", "addon-eol", "helm"}[i%3],
			Severity: sev, Target: "1.34", Title: fmt.Sprintf("example.com/v1beta%d Kind%d removed in 1.34 (3 objects)", i%7, i),
			Detail: "by namespace: " + fmt.Sprintf("ns-%d (3)", i%40), Remediation: "Migrate manifests and clients to example.com/v1, which Kubernetes 1.34 serves.",
			Citations:  []string{"https://kubernetes.io/docs/reference/using-api/deprecation-guide/", fmt.Sprintf("https://example.com/changelog#%d", i)},
			Namespaces: []string{fmt.Sprintf("ns-%d", i%40)}, Teams: []string{team}}
		for o := range 3 {
			f.Objects = append(f.Objects, inventory.ObjectRef{Kind: fmt.Sprintf("Kind%d", i), Namespace: fmt.Sprintf("ns-%d", i%40), Name: fmt.Sprintf("object-%d-%d", i, o)})
		}
		tr.Findings = append(tr.Findings, f)
		switch sev {
		case report.SeverityBlocker:
			tr.Blockers++
		case report.SeverityWarning:
			tr.Warnings++
		default:
			tr.Infos++
		}
		tr.Teams[team] = report.TeamResult{Verdict: "blocked", Score: 25, Blockers: 1}
	}
	data, err := json.Marshal(report.Report{SchemaVersion: 1, Targets: []report.TargetResult{tr}})
	if err != nil {
		b.Fatal(err)
	}
	rep := gzipBytes(b, data)
	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	var res store.IngestResult
	for h := range history {
		in := store.Ingest{ClusterName: "big", ClusterUID: "big-uid", Hash: fmt.Sprint(h), ServerVersion: "v1.33.4", Inventory: []byte("x"),
			Evaluations: []store.Evaluation{{Target: "1.34", Verdict: "blocked", Score: h % 100, Blockers: tr.Blockers, Warnings: tr.Warnings,
				EvaluatedAt: at.Add(time.Duration(h) * time.Hour), BundlesKey: "rules@1,kb@1", Report: rep}}}
		if res, err = st.Ingest(b.Context(), in); err != nil {
			b.Fatal(err)
		}
	}
	return res.ClusterID
}
