package server_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/upgradescope/upgradescope/fleet/server"
	"github.com/upgradescope/upgradescope/internal/testenv/browsertest"
)

// The cluster page in Debian's headless Chromium, against the real server on a SQLite
// store, after the audit webhook backend posted a batch: the panel names the caller by its
// user agent and service account with its count, on a desktop and on a phone, and passes
// axe-core.
func TestTheClusterPageShowsTheAuditWebhooksCallersInABrowser(t *testing.T) {
	browsertest.Paths(t) // skips (or fails under UPGRADESCOPE_REQUIRE_BROWSER) before the server is built
	ts := auditServer(t, func(c *server.Config) { c.ReadToken = explainReadToken })
	batch := auditBatch(t, caller{"legacy-sync/1.0 (linux/amd64)", "system:serviceaccount:payments:sync", "list", 7},
		caller{"kubectl/v1.32.4 (linux/amd64) kubernetes/4cb5f07", "alice", "get", 2})
	if r := ts.postAudit("prod", sharedIngest, batch); r.status != 200 {
		t.Fatalf("batch: %d %s", r.status, r.body)
	}
	id := ts.idAs(explainReadToken, "prod")
	for _, vp := range explainViewports {
		t.Run(vp.Name, func(t *testing.T) {
			p := browsertest.Start(t, ts.URL).Open(vp)
			openWithToken(t, p, fmt.Sprintf("/clusters/%d", id), "section#audit-callers")
			row := p.Text(`#audit-table tr[data-user-agent="legacy-sync/1.0 (linux/amd64)"]`)
			for _, want := range []string{"legacy-sync/1.0 (linux/amd64)", "payments/sync", "networking.k8s.io/v1beta1 servicecidrs", "list", "7", "1.37"} {
				if !strings.Contains(row, want) {
					t.Errorf("the caller's row reads %q, want it to name %q", row, want)
				}
			}
			if n := p.Count(`#audit-table tbody tr`); n != 2 {
				t.Errorf("%d callers listed, want 2", n)
			}
			if meta := p.Text("#audit-meta"); !strings.Contains(meta, "1 batch") || !strings.Contains(meta, "9 events received") {
				t.Errorf("the panel's source line reads %q, want 1 batch and 9 events", meta)
			}
			p.Accessible("audit callers")
			p.Shot("audit callers " + vp.Name)
			fitsTheWindow(t, p, "cluster with audit callers")
		})
	}
}
