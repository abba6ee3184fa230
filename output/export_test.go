package output_test

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode"

	"golang.org/x/net/html"

	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/output"
	"github.com/upgradescope/upgradescope/report"
)

// hostileExport holds titles and names a pull request could write: formulas, markup, links.
func hostileExport() output.Export {
	finding := func(key, sev, title string) report.Finding {
		return report.Finding{Key: key, Category: "removed-api", Severity: sev, Target: "1.37", Title: title,
			Detail: "  =HYPERLINK(\"https://evil.example\")", Remediation: "@SUM(A1)",
			Teams: []string{"-payments", "a;=b"}, Namespaces: []string{"+shop", "web", "\u00a0=nbsp", "＝wide"},
			Citations: []string{"https://kubernetes.io/docs/reference/using-api/deprecation-guide/"},
			Objects: []inventory.ObjectRef{{Namespace: "shop", Name: `<img src="https://evil.example/x.png">`, File: "a.yaml", Line: 3},
				{Name: "=HYPERLINK(1)", File: "b.yaml", Line: 1}}}
	}
	return output.Export{
		Cluster: "=prod", Target: "1.37", EvaluatedAt: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC), KBVersion: "2026-11-30.1",
		History: []int{100, 75, 50, 25},
		Result: report.TargetResult{Target: "1.37", Verdict: report.VerdictBlocked, Score: 25, Blockers: 2, Infos: 1,
			Findings: []report.Finding{
				finding("removed-api/a", report.SeverityBlocker, "=cmd|' /C calc'!A0"),
				finding("removed-api/b", report.SeverityBlocker, "\t+1"),
				finding("removed-api/c", report.SeverityInfo, `<script>alert(1)</script><a href="https://evil.example">x</a>`),
			},
			NotAssessed: []report.Gap{{Capability: "helm", Required: false, Reason: "\r-forbidden"}}},
	}
}

func TestACSVExportDefusesFormulasAndReadsBack(t *testing.T) {
	var b bytes.Buffer
	if err := output.WriteCSV(&b, hostileExport()); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatalf("encoding/csv cannot read the export back: %v", err)
	}
	if got := strings.Join(rows[0], ","); got != "cluster,target,evaluatedAt,kbVersion,verdict,score,severity,category,key,title,detail,remediation,teams,namespaces,citations,objects" {
		t.Errorf("header %s", got)
	}
	if len(rows) != 1+1+3+1 {
		t.Fatalf("%d rows, want a header, a summary, 3 findings and a not-assessed row", len(rows))
	}
	if rows[1][6] != "summary" || rows[1][9] != "2 blockers, 0 warnings, 1 info, 0 suppressed" || rows[5][6] != "not-assessed" || rows[5][7] != "helm" {
		t.Errorf("summary %q, last %q", rows[1], rows[5])
	}
	for _, row := range rows[1:] {
		for i, cell := range row {
			for _, part := range strings.Split(cell, ";") { // a ";" locale splits there
				trimmed := strings.TrimLeftFunc(part, unicode.IsSpace)
				if part != "" && (strings.ContainsAny(part[:1], "\t\r") || trimmed != "" && strings.ContainsAny(trimmed[:len(string([]rune(trimmed)[0]))], "=+-@＝＋－＠")) {
					t.Errorf("column %s holds a live formula: %q", rows[0][i], cell)
				}
			}
		}
	}
	if rows[2][9] != "'=cmd|' /C calc'!A0" || rows[3][9] != "'\t+1" || rows[2][0] != "'=prod" ||
		rows[2][13] != "'+shop;web;'\u00a0=nbsp;'＝wide" || rows[2][12] != "'-payments;a;'=b" ||
		rows[2][15] != `shop/<img src="https://evil.example/x.png"> (a.yaml:3);'=HYPERLINK(1) (b.yaml:1)` {
		t.Errorf("defused cells %q %q %q %q %q: want the text kept after a leading '", rows[2][9], rows[3][9], rows[2][0], rows[2][13], rows[2][15])
	}
}

func TestACSVExportNamesAFindingsObjectsUpToTwentyAndCountsTheRest(t *testing.T) {
	for _, tc := range []struct {
		name    string
		objects int
		omitted int
		want    string
	}{
		{"no objects", 0, 0, ""},
		{"one object", 1, 0, "Ingress shop/o0"},
		{"twenty objects, all named", 20, 0, "Ingress shop/o19"},
		{"twenty-five objects", 25, 0, "Ingress shop/o19;and 5 more"},
		{"objects the report already left out are counted", 2, 40, "Ingress shop/o1;and 40 more"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := report.Finding{Key: "removed-api/x", Severity: report.SeverityBlocker, Title: "x", ObjectsOmitted: tc.omitted}
			for i := range tc.objects {
				f.Objects = append(f.Objects, inventory.ObjectRef{Kind: "Ingress", Namespace: "shop", Name: fmt.Sprintf("o%d", i)})
			}
			var b bytes.Buffer
			e := output.Export{Cluster: "prod", Target: "1.37", Result: report.TargetResult{Findings: []report.Finding{f}}}
			if err := output.WriteCSV(&b, e); err != nil {
				t.Fatal(err)
			}
			rows, err := csv.NewReader(&b).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			cell := rows[2][15]
			if !strings.HasSuffix(cell, tc.want) || strings.Count(cell, "Ingress ") != min(tc.objects, 20) {
				t.Errorf("objects %q, want %d named, ending %q", cell, min(tc.objects, 20), tc.want)
			}
		})
	}
}

func TestAnHTMLExportIsOneSelfContainedPage(t *testing.T) {
	var b bytes.Buffer
	if err := output.WriteHTML(&b, hostileExport()); err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	var walk func(*html.Node)
	var text strings.Builder
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			switch n.Data {
			case "script", "link", "iframe", "object", "embed", "img", "base", "a", "form", "frame", "audio", "video", "source":
				t.Errorf("element <%s>: the page must load and link nothing", n.Data)
			}
			for _, a := range n.Attr {
				switch strings.ToLower(a.Key) {
				case "src", "href", "xlink:href", "srcset", "action", "formaction", "background", "poster", "data":
					t.Errorf("<%s %s=%q>: a reference out of the page", n.Data, a.Key, a.Val)
				}
				if strings.HasPrefix(strings.ToLower(a.Key), "on") {
					t.Errorf("<%s %s>: an event handler", n.Data, a.Key)
				}
			}
		}
		if n.Type == html.TextNode {
			text.WriteString(n.Data)
			if n.Parent != nil && n.Parent.Data == "style" && (strings.Contains(n.Data, "url(") || strings.Contains(n.Data, "@import")) {
				t.Error("the style sheet loads something")
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	page := text.String()
	for _, want := range []string{"Verdict: blocked", "Score 25/100", "Blockers (2)", "Infos (1)", "<script>alert(1)</script>",
		"Fix: @SUM(A1)", "Owners: -payments, a;=b", "Sources: https://kubernetes.io/docs/reference/using-api/deprecation-guide/", "Not assessed (1)", "helm"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page's text lacks %q", want)
		}
	}
	if !bytes.Contains(b.Bytes(), []byte(`<svg class="spark" width="260" height="48"`)) || !bytes.Contains(b.Bytes(), []byte("<polyline")) {
		t.Error("no score history sparkline")
	}
	if !bytes.Contains(b.Bytes(), []byte("@media print")) {
		t.Error("no print style")
	}
}

// unknownExport is a cluster whose agent predates the server's kb: sixty kb probes not
// collected (required), one optional capability forbidden, and one warning.
func unknownExport() output.Export {
	notCollected := "not collected: the inventory holds no observation of this probe; collect it again with the loaded bundles"
	var gaps []report.Gap
	for i := range 60 {
		gaps = append(gaps, report.Gap{Capability: fmt.Sprintf("probes/kb/p%02d", i), Required: true, Reason: notCollected})
	}
	gaps = append(gaps, report.Gap{Capability: "helm", Reason: "forbidden: secrets"})
	return output.Export{
		Cluster: "data-lake-2", Target: "1.36", EvaluatedAt: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC), KBVersion: "2026-11-30.1",
		History:   []int{100, 100},
		Bundles:   []report.BundleInfo{{Name: "rules", Revision: "2026-11-30.4"}, {Name: "kb", Revision: "2026-11-30.1"}},
		Collector: report.Collector{Version: "v0.8.0", KB: "2026-06-01.1"},
		Result: report.TargetResult{Target: "1.36", Verdict: report.VerdictUnknown, Score: 95, Warnings: 1,
			Findings: []report.Finding{{Key: "deprecated-api/x", Category: "deprecated-api", Severity: report.SeverityWarning,
				Target: "1.36", Title: "x is deprecated", Teams: []string{"data"}}},
			NotAssessed: gaps},
	}
}

func TestAnUnknownVerdictsHTMLExportPutsItsCauseFirstAndReadsNoScore(t *testing.T) {
	var b bytes.Buffer
	if err := output.WriteHTML(&b, unknownExport()); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	matchesGolden(t, "export-unknown.html", b.Bytes())
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"the score is not assessed, in no verdict's colour", strings.Contains(page, `<span class="badge na" title="the score counts only what was assessed">Score n/a (not assessed)</span>`)},
		{"no number is shown as the score", !strings.Contains(page, "Score 95") && !strings.Contains(page, "/100")},
		{"nothing is coloured ready", !strings.Contains(page, `class="badge ok"`)},
		{"the cause comes before the findings", strings.Index(page, "Why the verdict is unknown") < strings.Index(page, "Warnings (1)")},
		{"the cause counts the required inputs and their causes", strings.Contains(page, "60 required inputs were not assessed, from 1 cause.")},
		{"sixty probe gaps are one line", strings.Count(page, "<li>") == 2 && strings.Contains(page, "<strong>60 probes of kb</strong> (required)")},
		{"with one fix naming the kb that judged and the agent", strings.Count(page, `class="fix"`) == 1 &&
			strings.Contains(page, "the agent (upgradescope v0.8.0, kb 2026-06-01.1) predates them. Fix: upgrade the agent to a release whose kb is 2026-11-30.1 or later")},
	} {
		if !tc.ok {
			t.Errorf("%s: it does not, in\n%s", tc.name, page)
		}
	}
}

func TestAnUnknownVerdictsCSVSummarySaysUnknown(t *testing.T) {
	var b bytes.Buffer
	if err := output.WriteCSV(&b, unknownExport()); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	// The score column stays a number for readers by position; the verdict beside it
	// says it is not ready. Gaps stay a row each: the CSV is data, not a summary.
	if rows[1][4] != "unknown" || rows[1][6] != "summary" || len(rows) != 1+1+1+61 {
		t.Errorf("summary %q and %d rows; want verdict unknown and a row per gap", rows[1], len(rows))
	}
}
