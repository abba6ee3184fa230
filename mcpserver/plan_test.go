package mcpserver_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/mcpserver"
	"github.com/upgradescope/upgradescope/report"
)

// cliPlan judges dir as scan --files DIR --plan --from from --target (the last hop) does.
func cliPlan(t *testing.T, dir, from string, hops ...string) *report.Report {
	t.Helper()
	return cliReport(t, builtinEngine(t), dir, hops, engine.WithPlan(from))
}

// newBlockers are the keys of h's new findings that are blockers at h's target.
func newBlockers(h report.Hop, tr report.TargetResult) []string {
	var out []string
	for _, f := range tr.Findings {
		if f.Severity == report.SeverityBlocker && slices.Contains(h.New, f.Key) {
			out = append(out, f.Key)
		}
	}
	slices.Sort(out)
	return out
}

// changes are h's changed findings as "key: before → after", those turned blocker first,
// the severities read from the CLI's report at the hop's two ends; and how many turned blocker.
func changes(h report.Hop, before, after report.TargetResult) ([]string, int) {
	was, is := map[string]string{}, map[string]string{}
	for _, f := range before.Findings {
		was[f.Key] = f.Severity
	}
	for _, f := range after.Findings {
		is[f.Key] = f.Severity
	}
	var blockers, others []string
	for _, k := range h.Changed {
		c := k + ": " + was[k] + " → " + is[k]
		if is[k] == report.SeverityBlocker {
			blockers = append(blockers, c)
		} else {
			others = append(others, c)
		}
	}
	return append(blockers, others...), len(blockers)
}

// checkHops holds got, hops from the first, to the CLI's plan.
func checkHops(t *testing.T, got []mcpserver.HopSummary, first int, want *report.Report) {
	t.Helper()
	for i, h := range got {
		w, tr := want.Plan[first+i], want.Targets[first+i]
		nb := newBlockers(w, tr)
		var before report.TargetResult
		if first+i > 0 {
			before = want.Targets[first+i-1]
		}
		ch, became := changes(w, before, tr)
		if h.From != w.From || h.To != w.To || h.Verdict != w.Verdict || h.New != len(w.New) || h.Changed != len(w.Changed) ||
			h.Resolved != len(w.Resolved) || h.NewBlockers != len(nb) || !slices.Equal(h.FirstNew, nb[:min(len(nb), 3)]) {
			t.Errorf("hop %d = %+v, the CLI's %+v with new blockers %v", first+i, h, w, nb)
		}
		if h.BecameBlockers != became || !slices.Equal(h.ChangedKeys, ch[:min(len(ch), 3)]) {
			t.Errorf("hop %d: changed %v (%d became blockers), the CLI's %v (%d)", first+i, h.ChangedKeys, h.BecameBlockers, ch, became)
		}
		if (h.Score == nil) != (w.Verdict == report.VerdictUnknown) || h.Score != nil && *h.Score != w.Score {
			t.Errorf("hop %s score %v, the CLI's %d (verdict %s)", h.To, h.Score, w.Score, w.Verdict)
		}
	}
}

func TestPlanUpgradeAnswersTheHopsScanPlanJudges(t *testing.T) {
	root := repoRoot(t)
	want := cliPlan(t, filepath.Join(root, "examples", "manifests"), "1.33", "1.34", "1.35", "1.36", "1.37")
	for _, tr := range transports {
		t.Run(string(tr), func(t *testing.T) {
			cs := connect(t, newServer(t, root), tr)
			a, _ := call[mcpserver.PlanAnswer](t, cs, "plan_upgrade", map[string]any{"path": "examples/manifests", "from": "1.33", "target": "1.37"})
			if a.From != "1.33" || a.Target != "1.37" || a.Total != 4 || len(a.Hops) != 4 || a.Next != "" || a.Scan == "" || len(a.JudgedWith) != 2 {
				t.Fatalf("answer = %+v, want 4 hops from 1.33 to 1.37 in one page, a scan id and the bundles", a)
			}
			checkHops(t, a.Hops, 0, want)
			// The plan is kept as a scan: its findings are listed and explained by its id.
			l, _ := call[mcpserver.FindingsAnswer](t, cs, "list_findings", map[string]any{"scan": a.Scan, "target": "1.34"})
			if l.Total != len(want.Targets[0].Findings) {
				t.Errorf("list_findings of %s at 1.34: %d, the CLI's %d", a.Scan, l.Total, len(want.Targets[0].Findings))
			}
			i := slices.IndexFunc(a.Hops, func(h mcpserver.HopSummary) bool { return len(h.FirstNew) > 0 })
			if i < 0 {
				t.Fatalf("hops = %+v, want a new blocker to explain", a.Hops)
			}
			key := a.Hops[i].FirstNew[0]
			e, _ := call[mcpserver.ExplainAnswer](t, cs, "explain_finding", map[string]any{"scan": a.Scan, "key": key, "target": a.Hops[i].To})
			if e.Key != key || e.Severity != report.SeverityBlocker {
				t.Errorf("explain_finding of %s: %+v", key, e)
			}
		})
	}
}

func TestPlanUpgradeStartsAtTheInventorysServerVersion(t *testing.T) {
	root := repoRoot(t)
	const file = "testdata/preflight-live-stalls/inventory.json"
	doc, err := inventory.ReadFile(filepath.Join(root, file))
	if err != nil {
		t.Fatal(err)
	}
	v, err := inventory.ParseVersion(doc.ServerVersion)
	if err != nil {
		t.Fatal(err)
	}
	from, end := v.MinorString(), inventory.Version{Major: 1, Minor: v.Minor + 2}
	hops := v.MinorsAfter(end)
	want, err := builtinEngine(t).Evaluate(t.Context(), doc, hops, now, engine.WithPlan(from))
	if err != nil {
		t.Fatal(err)
	}
	cs := connect(t, newServer(t, root), pipes)
	a, _ := call[mcpserver.PlanAnswer](t, cs, "plan_upgrade", map[string]any{"inventory": file, "target": end.MinorString()})
	if a.From != from || len(a.Hops) != len(hops) {
		t.Fatalf("answer = %+v, want %d hops from the server version's minor %s", a, len(hops), from)
	}
	checkHops(t, a.Hops, 0, want)
}

func TestPlanUpgradePagesALongPlan(t *testing.T) {
	root := repoRoot(t)
	var hops []string
	for m := 21; m <= 37; m++ {
		hops = append(hops, "1."+strconv.Itoa(m))
	}
	want := cliPlan(t, filepath.Join(root, "examples", "manifests"), "1.20", hops...)
	cs := connect(t, newServer(t, root), pipes)
	args := map[string]any{"path": "examples/manifests", "from": "1.20", "target": "1.37"}
	var got []mcpserver.HopSummary
	for pages := 0; ; pages++ {
		if pages > len(hops) {
			t.Fatal("pages do not end")
		}
		a, _ := call[mcpserver.PlanAnswer](t, cs, "plan_upgrade", args)
		if a.First != len(got) || a.Total != len(hops) {
			t.Fatalf("page from %d of %d, want from %d of %d", a.First, a.Total, len(got), len(hops))
		}
		checkHops(t, a.Hops, a.First, want)
		got = append(got, a.Hops...)
		if a.Next == "" {
			if pages == 0 {
				t.Errorf("%d hops in one page, want the test to page", len(hops))
			}
			break
		}
		args = map[string]any{"cursor": a.Next}
	}
	if len(got) != len(hops) {
		t.Errorf("%d hops paged, want %d", len(got), len(hops))
	}
}

func TestPlanUpgradeRefuses(t *testing.T) {
	root := repoRoot(t)
	inv, err := os.ReadFile(filepath.Join(root, "testdata", "preflight-live-stalls", "inventory.json"))
	if err != nil {
		t.Fatal(err)
	}
	const version = `"serverVersion": "v1.34.3",`
	if !bytes.Contains(inv, []byte(version)) {
		t.Fatalf("the inventory does not name its server version as %s", version)
	}
	dir := writeFiles(t, map[string]string{
		"inventory.json":   string(inv),
		"no-version.json":  string(bytes.Replace(inv, []byte(version), nil, 1)),
		"bad-version.json": string(bytes.Replace(inv, []byte(version), []byte(`"serverVersion": "latest",`), 1)),
	})
	if err := os.CopyFS(filepath.Join(dir, "examples", "manifests"), os.DirFS(filepath.Join(root, "examples", "manifests"))); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, newServer(t, dir), pipes)
	for _, tc := range []struct {
		name      string
		args      map[string]any
		want, not string
	}{
		{"manifests without from, which carry no server version", map[string]any{"path": "examples/manifests", "target": "1.37"}, "from: manifests carry no server version; give from", "inventory"},
		{"an inventory naming no server version, without from", map[string]any{"inventory": "no-version.json", "target": "1.37"}, "from: the inventory names no server version: give from", "manifests"},
		{"an inventory whose server version is not a version, without from", map[string]any{"inventory": "bad-version.json", "target": "1.37"}, "the inventory's serverVersion \"latest\"", "manifests"},
		{"a target that is not after from", map[string]any{"path": "examples/manifests", "from": "1.37", "target": "1.36"}, "target 1.36 is not after from 1.37", "--"},
		{"a target that is not a minor", map[string]any{"path": "examples/manifests", "from": "1.33", "target": "next"}, "target:", "--"},
		{"no target", map[string]any{"path": "examples/manifests", "from": "1.33"}, "target: name the one minor", "--"},
		{"a from that is not a version", map[string]any{"path": "examples/manifests", "from": "one", "target": "1.37"}, "from:", "--"},
		{"two sources", map[string]any{"path": "examples/manifests", "inventory": "inventory.json", "target": "1.37"}, "exactly one source", "--"},
		{"a path outside the root", map[string]any{"path": "../", "from": "1.33", "target": "1.37"}, "outside the root", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if msg := callError(t, cs, "plan_upgrade", tc.args); !strings.Contains(msg, tc.want) || tc.not != "" && strings.Contains(msg, tc.not) {
				t.Errorf("error %q, want it to say %q and not %q", msg, tc.want, tc.not)
			}
		})
	}
}

func TestPlanUpgradeNamesAFindingThatBecomesABlocker(t *testing.T) {
	root := repoRoot(t)
	want := cliPlan(t, filepath.Join(root, "examples", "manifests"), "1.34", "1.35", "1.36", "1.37")
	const gate = "feature-gates/removed/kube-apiserver/StructuredAuthenticationConfiguration"
	if last := want.Plan[2]; !slices.Equal(last.Changed, []string{gate}) || len(last.New) != 0 {
		t.Fatalf("the CLI's hop to 1.37 = %+v, want %s changed alone", last, gate)
	}
	cs := connect(t, newServer(t, root), pipes)
	a, _ := call[mcpserver.PlanAnswer](t, cs, "plan_upgrade", map[string]any{"path": "examples/manifests", "from": "1.34", "target": "1.37"})
	checkHops(t, a.Hops, 0, want)
	last := a.Hops[len(a.Hops)-1]
	if last.NewBlockers != 0 || last.BecameBlockers != 1 || !slices.Equal(last.ChangedKeys, []string{gate + ": warning → blocker"}) {
		t.Errorf("hop to 1.37 = %+v, want the feature gate named turning warning → blocker", last)
	}
}
