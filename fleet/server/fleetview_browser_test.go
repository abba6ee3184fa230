package server_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/upgradescope/upgradescope/fleet/server"
	"github.com/upgradescope/upgradescope/fleet/server/store"
	"github.com/upgradescope/upgradescope/internal/testenv/browsertest"
	"github.com/upgradescope/upgradescope/report"
)

// Issue 34 in Chromium: the fleet page of 40 clusters across 10 minors fits a 1440 px
// window without scrolling sideways, and on a phone its table scrolls inside its frame with
// the cluster names staying in view; the findings page reads at both. Every view is checked
// with axe-core and kept as a screenshot among the test's artifacts (Shot, never Publish:
// docs/dashboard's pictures are cmd/upgradescope's dashboard test's alone, under names
// these would overwrite).

// Wide is a release manager's monitor window.
var wide = browsertest.Viewport{Name: "wide", Width: 1440, Height: 900}

// wideFleet is a server over 40 clusters, four at each minor from 1.26 to 1.35, each
// evaluated at every later minor up to 1.36 (ten columns), with findings whose titles are as
// long as real ones and owners among nine teams.
func wideFleet(t *testing.T) *testServer {
	t.Helper()
	ts := newServer(t, func(c *server.Config) { c.Targets = []string{"1.36"} })
	key := bundlesKey(t)
	verdicts := []string{"blocked", "ready", "unknown", "blocked"}
	for i := range 40 {
		minor := 26 + i/4
		in := store.Ingest{ClusterName: fmt.Sprintf("payments-prod-eu-west-%02d", i), ClusterUID: fmt.Sprint("uid-", i), Hash: fmt.Sprint(i),
			ServerVersion: fmt.Sprintf("v1.%d.3", minor), Inventory: []byte("x")}
		for target := minor + 1; target <= 36; target++ {
			v := verdicts[(i+target)%4]
			var findings []report.Finding
			if v != "ready" {
				findings = []report.Finding{
					finding(fmt.Sprintf("removed-api/flowcontrol.apiserver.k8s.io/v1beta%d/FlowSchema", target%3), "removed-api", report.SeverityBlocker,
						fmt.Sprintf("flowcontrol.apiserver.k8s.io/v1beta%d FlowSchema is removed in Kubernetes 1.%d: migrate to flowcontrol.apiserver.k8s.io/v1", target%3, target),
						fmt.Sprintf("team-%d", i%9), 1+i%7),
					finding("addon-eol/ingress-nginx", "addon-eol", report.SeverityWarning, "ingress-nginx 1.9 reaches its end of life", fmt.Sprintf("team-%d", (i+1)%9), 2),
				}
			}
			in.Evaluations = append(in.Evaluations, storedEvaluation(t, fmt.Sprintf("1.%d", target), v, key, findings))
		}
		if _, err := ts.store.Ingest(t.Context(), in); err != nil {
			t.Fatal(err)
		}
	}
	return ts
}

func TestTheFleetAndFindingsPagesInABrowser(t *testing.T) {
	browsertest.Paths(t)
	ts := wideFleet(t)
	b := browsertest.Start(t, ts.URL)
	t.Run("the fleet at one target fits a 1440 px window", func(t *testing.T) {
		p := b.Open(wide)
		p.Goto("/?target=1.36", "table#fleet")
		p.Accessible("fleet at 1.36")
		p.Shot("fleetview-target")
		if n := p.Count("table#fleet tbody tr"); n != 40 {
			t.Errorf("the fleet lists %d clusters, want 40", n)
		}
		if w := browsertest.Eval[[]int](p, `[document.documentElement.scrollWidth, window.innerWidth]`); w[0] > w[1] {
			t.Errorf("the page is %d px wide in a %d px window: it scrolls sideways", w[0], w[1])
		}
		if wrap := browsertest.Eval[[]int](p, `(() => { const e = document.querySelector(".table-wrap"); return [e.scrollWidth, e.clientWidth]; })()`); wrap[0] > wrap[1] {
			t.Errorf("the fleet table is %d px in a %d px frame: it scrolls sideways at 1440 px", wrap[0], wrap[1])
		}
		for _, head := range []string{"Cluster", "Version", "Verdict", "Blockers", "Top blocker", "Owning teams", "Last push"} {
			if !strings.Contains(p.Text("table#fleet thead"), head) {
				t.Errorf("the fleet table has no %s column", head)
			}
		}
		sum := browsertest.Eval[int](p, `Array.from(document.querySelectorAll("#summary .summary a[data-count]"), a => parseInt(a.textContent.replace(/,/g, ""), 10)).reduce((a, b) => a + b, 0)`)
		if total := p.Attrs("#summary-total", "data-total"); len(total) != 1 || total[0] != "40" || sum != 40 {
			t.Errorf("the five counts sum to %d, the page says %v clusters; want 40 both", sum, total)
		}
	})
	t.Run("the per-minor matrix is a view of its own", func(t *testing.T) {
		p := b.Open(wide)
		p.Goto("/?view=matrix", "table#fleet.matrix")
		p.Accessible("fleet matrix")
		p.Shot("fleetview-matrix")
		if n := p.Count("table#fleet thead th"); n != 2+10+3 {
			t.Errorf("the matrix has %d columns, want name, version, ten minors, score, verdict and last push", n)
		}
	})
	t.Run("on a phone the names stay in view while the table scrolls", func(t *testing.T) {
		p := b.Open(browsertest.Phone)
		p.Goto("/?target=1.36", "table#fleet")
		p.Accessible("fleet on a phone")
		if wide := p.Overflow(); len(wide) > 0 {
			t.Errorf("on a phone the page scrolls sideways; too wide: %v", wide)
		}
		moved := browsertest.Eval[[]float64](p, `(() => {
			const wrap = document.querySelector(".table-wrap"), name = document.querySelector("table#fleet tbody th.name");
			const before = name.getBoundingClientRect().left;
			wrap.scrollLeft = wrap.scrollWidth;
			return [wrap.scrollLeft, before, name.getBoundingClientRect().left, wrap.getBoundingClientRect().left];
		})()`)
		if moved[0] <= 0 {
			t.Fatalf("the fleet table does not scroll inside its frame on a phone (scrollLeft %v)", moved[0])
		}
		if moved[2] != moved[1] || moved[2] < moved[3]-1 {
			t.Errorf("the cluster name moved from %v to %v px (frame at %v) when the table scrolled: want it sticky", moved[1], moved[2], moved[3])
		}
		p.Shot("fleetview-phone-scrolled")
	})
	for _, vp := range []browsertest.Viewport{wide, browsertest.Phone} {
		t.Run("a target the fleet has no column for, and a team's notes, at "+vp.Name, func(t *testing.T) {
			p := b.Open(vp)
			p.Goto("/findings?target=1.99", "#off-target")
			p.Accessible("findings at a target no cluster is evaluated at")
			if got := browsertest.Eval[string](p, `document.querySelector("select#target").value`); got != "1.99" {
				t.Errorf("the Judge at control reads %q at ?target=1.99, want 1.99", got)
			}
			p.Goto("/findings?target=1.36&team=team-1", "#unowned-note")
			p.Accessible("a team's findings with the blockers no team owns")
			p.Shot("fleetview-team-note")
			if wide := p.Overflow(); len(wide) > 0 {
				t.Errorf("the team's findings scroll sideways; too wide: %v", wide)
			}
		})
		t.Run("the findings page at "+vp.Name, func(t *testing.T) {
			p := b.Open(vp)
			p.Goto("/findings?target=1.36", "table#findings")
			p.Accessible("findings")
			p.Shot("fleetview-findings")
			if n := p.Count("table#findings tbody tr"); n == 0 {
				t.Fatal("the findings page lists no finding")
			}
			if got := p.Attrs("table#findings tbody tr", "data-severity"); strings.Contains(strings.Join(got, ","), "warning") {
				t.Errorf("the findings page lists warnings by default: %v", got)
			}
			if wide := p.Overflow(); len(wide) > 0 {
				t.Errorf("the findings page scrolls sideways; too wide: %v", wide)
			}
			if bare := p.Count("table#findings tbody .affected:not(:has(.team))"); bare > 0 || p.Count("table#findings tbody .affected") == 0 {
				t.Errorf("%d of the findings' clusters do not name their teams, want each to", bare)
			}
			// Each cluster a finding affects is a list item of its own line, never run into the next.
			if inline := browsertest.Eval[int](p, `Array.from(document.querySelectorAll("table#findings tbody .affected")).filter(e =>
				e.tagName !== "LI" || getComputedStyle(e).display !== "list-item" || (e.previousElementSibling &&
				e.previousElementSibling.getBoundingClientRect().bottom > e.getBoundingClientRect().top + 1)).length`); inline > 0 {
				t.Errorf("%d of the findings' clusters are not list items on lines of their own", inline)
			}
			// Teams past the first four are behind a summary anyone can open, not a mouse's title.
			more := browsertest.Eval[[]string](p, `(() => { const d = document.querySelector("table#findings tbody td[data-label=Teams] details.more");
				if (!d) return []; d.open = true; const shown = d.getBoundingClientRect().height;
				return [d.querySelector("summary").textContent, String(shown > 0), String(d.querySelectorAll(".team").length)]; })()`)
			if len(more) != 3 || !strings.HasPrefix(more[0], "and ") || !strings.HasSuffix(more[0], " more") || more[1] != "true" || more[2] == "0" {
				t.Errorf("a finding's teams past the first four: %q, want an \"and N more\" summary that opens to their names", more)
			}
			p.Follow("show warnings too", browsertest.SubmitWith("select#severity", "all"), "table#findings")
			if got := p.Attrs("table#findings tbody tr", "data-severity"); !strings.Contains(strings.Join(got, ","), "warning") {
				t.Errorf("severity=all lists %v, want the warning after the blockers", got)
			}
			p.Accessible("findings with warnings")
		})
	}
}
