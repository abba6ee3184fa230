package web

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/inventory"
)

func auditCluster(p *AuditPanel) string {
	return string(RenderCluster(&Cluster{ID: 1, Name: "prod", Audit: p}))
}

func TestTheAuditPanelListsTheBusiestCallersWithWhoAndWhen(t *testing.T) {
	section := &inventory.AuditCalls{Events: 40, Requests: 40, DeprecatedRequests: 30, Malformed: 2, Callers: []inventory.AuditCaller{
		{Group: "networking.k8s.io", Version: "v1beta1", Resource: "servicecidrs", Verb: "list", User: "system:serviceaccount:payments:sync",
			ServiceAccount: "payments/sync", UserAgent: `sync/1.0 <script>`, RemovedRelease: "1.37", Count: 1234, LastSeen: "2026-11-30T11:59:00Z"},
		{Group: "", Version: "v1", Resource: "pods", Subresource: "eviction", Verb: "create", User: "alice", UserAgent: "kubectl/v1.28.2", Count: 3, LastSeen: "2026-11-29T08:00:00Z"},
	}}
	got := auditCluster(&AuditPanel{Batches: 12, LastBatch: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC), Section: section})
	for _, want := range []string{
		`<h2 id="audit-h">Callers of deprecated APIs (audit webhook)</h2>`,
		`12 batches · 40 events received · last batch <time datetime="2026-11-30T12:00:00Z">`,
		`<tr data-user-agent="sync/1.0 &lt;script&gt;" data-count="1234"><th scope="row">sync/1.0 &lt;script&gt;</th><td>payments/sync</td><td>networking.k8s.io/v1beta1 servicecidrs</td><td>list</td><td>1,234</td><td><time datetime="2026-11-30T11:59:00Z">2026-11-30 11:59 UTC</time></td><td>1.37</td></tr>`,
		`<td>alice</td><td>v1 pods/eviction</td><td>create</td><td>3</td>`,
		`2 items that were not audit events were skipped`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the panel lacks %s in:\n%s", want, got)
		}
	}
	if strings.Contains(got, "<script>") {
		t.Error("a user agent was written unescaped")
	}
}

func TestTheAuditPanelCountsWhatItLeavesOut(t *testing.T) {
	section := &inventory.AuditCalls{Omitted: []inventory.AuditOmitted{{Group: "g", Version: "v1beta1", Resource: "r", Callers: 3, Calls: 40}}, OmittedAPIs: 2}
	for i := range auditTopCallers + 4 {
		section.Callers = append(section.Callers, inventory.AuditCaller{Version: "v1beta1", Resource: "r", Verb: "get",
			User: "u", UserAgent: fmt.Sprintf("agent/%d", i), Count: 1, LastSeen: "2026-11-30T11:59:00Z"})
	}
	got := auditCluster(&AuditPanel{Batches: 1, Section: section})
	if n := strings.Count(got, "<tr data-user-agent="); n != auditTopCallers {
		t.Errorf("%d callers listed, want the busiest %d", n, auditTopCallers)
	}
	if want := `and 4 more callers not listed here; 42 calls of 3 other callers counted per API only`; !strings.Contains(got, want) {
		t.Errorf("the panel does not say %q:\n%s", want, got)
	}
}

func TestTheAuditPanelSaysCallsCountedOnlyPerAPIAreThere(t *testing.T) {
	section := &inventory.AuditCalls{Requests: 50, DeprecatedRequests: 42, OmittedAPIs: 2,
		Omitted: []inventory.AuditOmitted{{Version: "v1beta1", Resource: "r", Calls: 40}}}
	got := auditCluster(&AuditPanel{Batches: 1, Section: section})
	if strings.Contains(got, "No call to a deprecated API") || !strings.Contains(got, "42 calls of 0 other callers counted per API only") {
		t.Errorf("a section whose calls are all counted per API should count them, never say none:\n%s", got)
	}
}

func TestTheAuditPanelSaysTheStoredSectionCouldNotBeRead(t *testing.T) {
	got := auditCluster(&AuditPanel{Batches: 2, Unreadable: true})
	if !strings.Contains(got, `id="audit-unreadable"`) {
		t.Errorf("the panel does not say the stored section could not be read:\n%s", got)
	}
}

func TestTheAuditPanelWithholdsCallersFromATeamScopedReader(t *testing.T) {
	got := auditCluster(&AuditPanel{Batches: 3, Withheld: true})
	if !strings.Contains(got, `id="audit-withheld"`) || strings.Contains(got, "<table id=\"audit-table\"") {
		t.Errorf("a withheld panel should say so and list nobody:\n%s", got)
	}
}

func TestAClusterWithoutAuditBatchesHasNoPanel(t *testing.T) {
	if got := auditCluster(nil); strings.Contains(got, "audit-callers") {
		t.Errorf("a cluster without batches shows an audit panel:\n%s", got)
	}
}
