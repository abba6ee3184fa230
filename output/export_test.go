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
