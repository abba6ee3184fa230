package server_test

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/upgradescope/upgradescope/fleet/server/store"
)

func TestAnExportIsTheStoredEvaluationAsAFile(t *testing.T) {
	ts := pushed(t, nil)
	base := fmt.Sprintf("/api/v1/clusters/%d/export", ts.idOf("prod"))
	r := ts.get(base+"?target=1.33&format=csv", "")
	if r.status != 200 || r.header.Get("Content-Type") != "text/csv; charset=utf-8" ||
		r.header.Get("Content-Disposition") != `attachment; filename="upgradescope-prod-1.33.csv"` {
		t.Fatalf("csv export: %d %v %s", r.status, r.header, r.body)
	}
	rows, err := csv.NewReader(bytes.NewReader(r.body)).ReadAll()
	if err != nil || len(rows) < 3 {
		t.Fatalf("the CSV reads back as %d rows, %v", len(rows), err)
	}
	stored := ts.get(fmt.Sprintf("/api/v1/clusters/%d/report?target=1.33", ts.idOf("prod")), "").json(t)
	target := stored["report"].(map[string]any)["targets"].([]any)[0].(map[string]any)
	if rows[1][4] != target["verdict"] || rows[1][5] != fmt.Sprint(target["score"]) || rows[1][6] != "summary" {
		t.Errorf("summary row %q: want the stored verdict %v and score %v", rows[1], target["verdict"], target["score"])
	}
	if findings := len(target["findings"].([]any)); len(rows) < 2+findings {
		t.Errorf("%d rows for %d stored findings", len(rows), findings)
	}
	owned := map[string]string{}
	for _, row := range rows[2:] {
		owned[row[8]] = row[12] + " | " + row[15]
	}
	// An API's findings name their objects without a kind: the key says it.
	if got := owned["removed-api/extensions/v1beta1/Ingress"]; got != "payments | shop/a" {
		t.Errorf("the Ingress's teams and objects %q, want payments and shop/a", got)
	}
	if got := owned["removed-api/policy/v1beta1/PodSecurityPolicy"]; got != " | restricted" {
		t.Errorf("the PodSecurityPolicy's teams and objects %q, want no team and restricted", got)
	}
	h := ts.get(base+"?target=1.33&format=html", "")
	if h.status != 200 || h.header.Get("Content-Type") != "text/html; charset=utf-8" || !bytes.Contains(h.body, []byte("<svg class=\"spark\"")) {
		t.Errorf("html export: %d %v", h.status, h.header)
	}
	for _, want := range []string{`<p class="owners">Owners: payments</p>`, `<p class="owners">Owners: no owning team</p>`} {
		if !bytes.Contains(h.body, []byte(want)) {
			t.Errorf("the html export lacks %s", want)
		}
	}
	// A team-scoped reader's file holds its teams' share, like its reads.
	scoped := ts.get(base+"?target=1.33&format=csv", ts.mintRead("payments"))
	rows, err = csv.NewReader(bytes.NewReader(scoped.body)).ReadAll()
	if scoped.status != 200 || scoped.header.Get("Cache-Control") != "private, no-store" || err != nil {
		t.Fatalf("a payments reader's export: %d %q %v", scoped.status, scoped.header.Get("Cache-Control"), err)
	}
	for _, row := range rows[2:] {
		if row[6] != "not-assessed" && (row[12] != "payments" && row[12] != "" || strings.Contains(row[13], "data")) {
			t.Errorf("a payments reader's export holds %q; want its own findings and no team's", row)
		}
	}
}

func TestAnExportNeverEvaluatesAndRefusesWhatItCannotServe(t *testing.T) {
	ts := pushed(t, nil)
	base := fmt.Sprintf("/api/v1/clusters/%d/export", ts.idOf("prod"))
	for _, tc := range []struct {
		name, query string
		status      int
		says        string
	}{
		{"a target never evaluated", "?target=1.36&format=csv", 404, "no evaluation for target 1.36"},
		{"no format", "?target=1.33", 422, "want csv or html"},
		{"another format", "?target=1.33&format=pdf", 422, "pdf"},
		{"no target", "?format=csv", 422, "target is required"},
		{"a target that is no minor", "?target=1.33.1&format=csv", 422, "write a minor"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ts.get(base+tc.query, "")
			if r.status != tc.status || !strings.Contains(string(r.body), tc.says) {
				t.Errorf("%s: %d %s; want %d saying %q", tc.query, r.status, r.body, tc.status, tc.says)
			}
		})
	}
}

// A team's share is cut by the namespaces its teams own in the evaluated snapshot. When the
// latest snapshot was not evaluated at the target, only a fleet-wide reader gets the file.
func TestATeamScopedExportOfAnOlderSnapshotIsRefused(t *testing.T) {
	ts := pushed(t, nil)
	doc := teamsInventory(t)
	if _, err := ts.store.Ingest(t.Context(), store.Ingest{ClusterName: "prod", ClusterUID: doc.ClusterID,
		Hash: "a-newer-snapshot", Inventory: envelope(t, "prod", doc)}); err != nil {
		t.Fatal(err)
	}
	base := fmt.Sprintf("/api/v1/clusters/%d/export?target=1.33&format=csv", ts.idOf("prod"))
	if r := ts.get(base, ""); r.status != 200 {
		t.Fatalf("a fleet-wide reader's export of the older evaluation: %d %s", r.status, r.body)
	}
	if r := ts.get(base, ts.mintRead("payments")); r.status != 404 {
		t.Errorf("a payments reader's export of an older snapshot's evaluation: %d %s", r.status, r.body)
	}
}

// TestAnUnknownClustersHTMLExportGivesTheDashboardsCauseAndFix holds the export to the
// cluster page: the same one line and one fix for the agent's missing probes, first, and no
// score that reads as ready.
func TestAnUnknownClustersHTMLExportGivesTheDashboardsCauseAndFix(t *testing.T) {
	ts := pushed(t, nil)
	id := oldAgentCluster(t, ts)
	page := ts.get(fmt.Sprintf("/ui/clusters/%d?target=1.37", id), "").body
	fix := regexp.MustCompile(`<span class="fix">([^<]*)</span>`).FindSubmatch(page)
	r := ts.get(fmt.Sprintf("/api/v1/clusters/%d/export?target=1.37&format=html", id), "")
	if r.status != 200 || fix == nil {
		t.Fatalf("export: %d; the page's fix %q", r.status, fix)
	}
	body := string(r.body)
	if !strings.Contains(body, `<p class="fix">`+string(fix[1])+`</p>`) || strings.Count(body, `class="fix"`) != 1 {
		t.Errorf("the export does not give the page's one fix %q:\n%s", fix[1], body)
	}
	if !strings.Contains(body, "the agent (upgradescope test, kb kb-test) predates them") {
		t.Errorf("the export does not name the agent that collected the inventory")
	}
	if cause, findings := strings.Index(body, "Why the verdict is unknown"), strings.Index(body, "No findings."); cause < 0 || cause > findings {
		t.Errorf("the cause (at %d) does not come before the findings (at %d)", cause, findings)
	}
	if strings.Contains(body, "/100</span>") || !strings.Contains(body, "Score n/a (not assessed)") {
		t.Errorf("an unknown verdict's export shows a score")
	}
	group := regexp.MustCompile(`data-gaps="(\d+)"`).FindSubmatch(page)
	if n := strings.Count(body, "<li><strong>probes/"); n != 0 || group == nil ||
		!strings.Contains(body, "<li><strong>"+string(group[1])+" probes of kb</strong> (required)") {
		t.Errorf("%d lines of single probes, want one line for the kb's as the page's %q: %s", n, group, body)
	}
}
