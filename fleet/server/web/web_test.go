package web

import (
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/kb"
	"github.com/upgradescope/upgradescope/report"
)

func TestThousandsSeparatesWithCommas(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -1000: "-1,000"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestFindingSlugsAreIDSafeAndUniqueOnAPage(t *testing.T) {
	s := slugger{}
	for _, tc := range []struct{ key, want string }{
		{"removed-api/extensions/v1beta1/Ingress", "removed-api-extensions-v1beta1-ingress"},
		{"removed-api/extensions/v1beta1/INGRESS", "removed-api-extensions-v1beta1-ingress-2"},
		{`<script>"`, "script"},
		{"///", "x"},
	} {
		if got := s.of(tc.key); got != tc.want {
			t.Errorf("slug of %q = %q, want %q", tc.key, got, tc.want)
		}
	}
}

func TestOnlyHTTPCitationsBecomeLinksWithShortText(t *testing.T) {
	var d doc
	d.citations([]string{"javascript:alert(1)", "https://www.example.com/a/very/long/path/that/goes/on/and/on/and/on/forever/", "data:text/html,x"})
	got := d.String()
	if strings.Count(got, "<a ") != 1 || !strings.Contains(got, `href="https://www.example.com/a/very/long/path/that/goes/on/and/on/and/on/forever/"`) {
		t.Errorf("citations: %s", got)
	}
	if !strings.Contains(got, ">example.com/a/very/long/path/that/goes/on/and/o…</a>") {
		t.Errorf("the link text is not the shortened host and path: %s", got)
	}
}

func TestParseFleetQueryNamesTheBadParameter(t *testing.T) {
	q, err := ParseFleetQuery(url.Values{})
	if err != nil || q.Sort != "name" || q.Page != 1 {
		t.Errorf("defaults: %+v %v", q, err)
	}
	for raw, want := range map[string]string{"verdict=green": "verdict", "sort=x": "sort", "page=-1": "page", "q=" + strings.Repeat("a", 300): "q"} {
		v, _ := url.ParseQuery(raw)
		if _, err := ParseFleetQuery(v); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%.20s: %v, want an error naming %s", raw, err, want)
		}
	}
}

func TestTheScoreChartDrawsOnePointPerEvaluation(t *testing.T) {
	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	svg := ScoreChart([]HistoryPoint{{At: at, Score: 100, Verdict: "ready"}, {At: at.Add(time.Hour), Score: 0, Verdict: "blocked"}}, "1.34")
	for _, want := range []string{`role="img"`, "over 2 evaluations, from 100 to 0 (latest blocked)", `points="36.0,10.0 628.0,172.0"`, "<title>2026-11-01 01:00:00: blocked, score 0</title>"} {
		if !strings.Contains(svg, want) {
			t.Errorf("the chart lacks %s: %s", want, svg)
		}
	}
	if strings.Count(svg, "<circle") != 2 {
		t.Errorf("want a dot per evaluation")
	}
	if got := ScoreChart(nil, "1.34"); !strings.HasPrefix(got, "<svg") || !strings.Contains(got, "No stored evaluation") {
		t.Errorf("an empty history: %s", got)
	}
}

// An unknown evaluation's score counts only what was assessed: plotted it would sit at 100
// and read as ready. It is a gap in the line, marked and titled as not assessed.
func TestTheScoreChartMarksAnUnknownEvaluationAsNotAssessed(t *testing.T) {
	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	svg := ScoreChart([]HistoryPoint{{At: at, Score: 40, Verdict: "blocked"}, {At: at.Add(time.Hour), Score: 100, Verdict: "unknown"},
		{At: at.Add(2 * time.Hour), Score: 100, Verdict: "ready"}}, "1.34")
	for _, want := range []string{"over 3 evaluations, from 40 to 100, 1 not assessed (no score) (latest ready)",
		`<line class="chart-na" x1="332.0"`, "<title>2026-11-01 01:00:00: unknown, score not assessed</title>", ">dashed: not assessed</text>"} {
		if !strings.Contains(svg, want) {
			t.Errorf("the chart lacks %s: %s", want, svg)
		}
	}
	if strings.Count(svg, "<circle") != 2 || strings.Count(svg, "<polyline") != 2 || strings.Contains(svg, "unknown, score 100") {
		t.Errorf("want dots and line pieces for the two assessed evaluations only, none at the unknown one's 100: %s", svg)
	}
	only := ScoreChart([]HistoryPoint{{At: at, Score: 100, Verdict: "unknown"}}, "1.34")
	if !strings.Contains(only, "over 1 evaluation, 1 not assessed (no score) (latest unknown: not assessed)") || strings.Contains(only, "<circle") ||
		strings.Contains(only, "<polyline") {
		t.Errorf("a history of one unknown evaluation: %s", only)
	}
}

func TestTheClusterQueryNamesTheSameTooLongParameterEveryTime(t *testing.T) {
	long := strings.Repeat("x", 513)
	v := url.Values{"q": {long}, "category": {long}, "team": {long}, "finding": {long}}
	for range 50 {
		if _, err := ParseClusterQuery(v); err == nil || err.Error() != "q: at most 512 bytes" {
			t.Fatalf("four parameters too long: %v, want q named first every time", err)
		}
	}
}

// A page's #hash is the reader's to write: decodeURIComponent throws on a malformed escape
// (#%E0%A4%A), and a throw after the fragment is in would reach the fetch's .catch, which
// replaces the loaded view with an error. Without a JavaScript engine in Go tests, this
// checks the two guards are in the script; the browser tests exercise it.
func TestTheScriptDecodesAHashAndSettlesAViewWithoutThrowing(t *testing.T) {
	for i, line := range strings.Split(string(scriptAsset.body), "\n") {
		trimmed := strings.TrimSpace(line)
		decodes := strings.Contains(line, "decodeURIComponent(")
		settles := strings.Contains(line, "settle(") && !strings.HasPrefix(trimmed, "function ") && !strings.HasPrefix(trimmed, "//")
		if (decodes || settles) && !strings.Contains(line, "try {") {
			t.Errorf("app.js:%d: %s outside a try", i+1, trimmed)
		}
	}
}

// Who must act on a finding: its teams, and "no team" when some cluster's objects of it are
// in no team's namespaces; never an empty cell that reads as nobody.
func TestTheFindingsPageNamesNoTeamForWhatNoTeamOwns(t *testing.T) {
	for _, tt := range []struct {
		name string
		row  FindingRow
		want string
	}{
		{"owned on one cluster, unowned on another", FindingRow{Teams: []string{"payments"},
			Clusters: []FindingCluster{{Teams: []string{"payments"}}, {}}}, `<span class="team">payments</span>, <span class="team muted">no team</span>`},
		{"owned by no team anywhere", FindingRow{Teams: []string{}, Clusters: []FindingCluster{{}}}, `<td data-label="Teams"><span class="team muted">no team</span></td>`},
		{"owned everywhere", FindingRow{Teams: []string{"data"}, Clusters: []FindingCluster{{Teams: []string{"data"}}}}, `<td data-label="Teams"><span class="team">data</span></td>`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.row.Key, tt.row.Severity = "removed-api/x", "blocker"
			if got := string(RenderFindings(&Findings{Rows: []FindingRow{tt.row}})); !strings.Contains(got, tt.want) {
				t.Errorf("the row lacks %s:\n%s", tt.want, got)
			}
		})
	}
}

func TestAnIntervalOrKubernetesRangeOpenAtAnEndSaysSo(t *testing.T) {
	for _, tc := range []struct {
		versions map[string]string
		kube     *kb.KubeRange
		want     string
	}{
		{map[string]string{"from": "0.0.0"}, &kb.KubeRange{Max: "1.36"}, "any version; Kubernetes up to 1.36"},
		{nil, nil, "any version"},
		{map[string]string{"from": "0.10.0", "before": "0.18.0"}, &kb.KubeRange{Min: "1.19", Max: "1.32"}, "versions 0.10.0 to before 0.18.0; Kubernetes 1.19–1.32"},
		{map[string]string{"from": "2.0.0"}, &kb.KubeRange{Min: "1.30"}, "versions 2.0.0 and later; Kubernetes 1.30 and later"},
		{map[string]string{"before": "1.0.0"}, &kb.KubeRange{}, "versions before 1.0.0"},
		{map[string]string{"from": "0.0.0", "before": "1.0.0"}, nil, "versions before 1.0.0"},
	} {
		if got := versionRange(tc.versions) + kubeRange(tc.kube); got != tc.want {
			t.Errorf("%v %v reads %q, want %q", tc.versions, tc.kube, got, tc.want)
		}
	}
}

// A fleet whose clusters differ holds hundreds of finding keys: the page lists
// FindingsPageSize of them and pages through the rest, with the filters kept.
func TestTheFindingsPageListsFiftyFindingsAPageWithTheFiltersKept(t *testing.T) {
	rows := make([]FindingRow, 120)
	for i := range rows {
		rows[i] = FindingRow{Key: fmt.Sprintf("removed-api/k%03d", i), Severity: "blocker"}
	}
	for _, tt := range []struct {
		name             string
		page, rows       int
		first, last      string
		info             string
		prev, next, past bool
	}{
		{"the first page", 1, 50, "k000", "k049", "1–50 of 120", false, true, false},
		{"a middle page", 2, 50, "k050", "k099", "51–100 of 120", true, true, false},
		{"the last page", 3, 20, "k100", "k119", "101–120 of 120", true, false, false},
		{"a page past the last", 4, 0, "", "", "Page 4 is past the last page, page 3 (120 findings)", false, false, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := string(RenderFindings(&Findings{Rows: rows, Query: FindingsQuery{Team: "data", Page: tt.page}}))
			if n := strings.Count(got, "<tr data-key="); n != tt.rows {
				t.Errorf("page %d lists %d findings, want %d", tt.page, n, tt.rows)
			}
			for _, key := range []string{tt.first, tt.last} {
				if key != "" && !strings.Contains(got, `data-key="removed-api/`+key+`"`) {
					t.Errorf("page %d lacks %s", tt.page, key)
				}
			}
			if !strings.Contains(got, tt.info) {
				t.Errorf("page %d does not say %q:\n%s", tt.page, tt.info, got)
			}
			for _, link := range []struct {
				id   string
				want bool
			}{{`id="prev-page"`, tt.prev}, {`id="next-page"`, tt.next}, {`id="last-page"`, tt.past}} {
				if strings.Contains(got, link.id) != link.want {
					t.Errorf("page %d: %s shown %v, want %v", tt.page, link.id, !link.want, link.want)
				}
			}
			if tt.next && !strings.Contains(got, fmt.Sprintf("page=%d", tt.page+1)) || (tt.next || tt.prev) && !strings.Contains(got, "team=data") {
				t.Errorf("page %d's links do not keep the team filter or name the next page:\n%s", tt.page, got)
			}
		})
	}
}

// A finding the chart advisor answered shows the chart fix under its remediation, in the
// words every output uses (report.ChartFix.Summary), escaped; one without shows none.
func TestAClusterFindingShowsItsChartFix(t *testing.T) {
	fix := &report.ChartFix{Chart: "shop", From: "1.4.0", To: "1.6.0", FromAppVersion: "2.3.1", ToAppVersion: "2.5.0",
		APIsAdded: []string{"policy/v1 PodDisruptionBudget"}, Status: report.ChartFixUpgrade}
	unread := &report.ChartFix{Chart: "shop", From: "1.4.0", Status: report.ChartFixUnread, Reason: "offline: <no cache>"}
	for _, tt := range []struct {
		name string
		fix  *report.ChartFix
		want string
	}{
		{"an upgrade", fix, `<p class="chart-fix"><strong>Chart fix:</strong> upgrade chart shop 1.4.0 → 1.6.0 (appVersion 2.3.1 → 2.5.0; APIs: +policy/v1 PodDisruptionBudget)</p>`},
		{"a repository not read", unread, `<p class="chart-fix"><strong>Chart fix:</strong> repository not read: offline: &lt;no cache&gt;</p>`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := string(RenderCluster(clusterWithFinding(report.Finding{
				Key: "chart-incompat/helm-release/web/shop", Category: "chart-incompat", Severity: "blocker",
				Target: "1.33", Title: "Helm release web/shop", Remediation: "Upgrade chart shop from 1.4.0 to 1.6.0.", Fix: tt.fix,
			})))
			if !strings.Contains(got, tt.want) {
				t.Errorf("the finding lacks %s:\n%s", tt.want, got)
			}
		})
	}
	got := string(RenderCluster(clusterWithFinding(report.Finding{Key: "removed-api/x", Severity: "blocker", Target: "1.33", Title: "x"})))
	if strings.Contains(got, `class="chart-fix"`) {
		t.Errorf("a finding without a fix shows one:\n%s", got)
	}
}

func clusterWithFinding(f report.Finding) *Cluster {
	return &Cluster{Name: "prod", Target: f.Target, Result: &report.TargetResult{Target: f.Target, Verdict: "blocked", Findings: []report.Finding{f}}}
}
