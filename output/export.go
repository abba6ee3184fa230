package output

import (
	_ "embed"
	"encoding/csv"
	"fmt"
	"html"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/upgradescope/upgradescope/report"
)

// Export is one stored evaluation of one cluster at one target, as an auditor downloads it.
type Export struct {
	Cluster     string
	Target      string
	EvaluatedAt time.Time
	Result      report.TargetResult
	KBVersion   string
	// History is the target's scores, oldest first, for the HTML sparkline.
	History []int
	// Bundles judged the report, and Collector is what the agent that collected its inventory
	// said it collects with: a probe gap's fix names both (report.ProbeFix).
	Bundles   []report.BundleInfo
	Collector report.Collector
}

// csvHeader are the export's columns; a new column goes last, so that readers of the
// earlier ones by position keep working.
var csvHeader = []string{"cluster", "target", "evaluatedAt", "kbVersion", "verdict", "score", "severity",
	"category", "key", "title", "detail", "remediation", "teams", "namespaces", "citations", "objects"}

// maxCSVObjects bounds the objects a finding's row names; the rest are counted.
const maxCSVObjects = 20

// WriteCSV writes the export as CSV: a summary row, a row per finding, most severe first, and
// a row per capability not assessed. Multiple values are joined with ";"; a finding's
// objects ("Kind namespace/name") are bounded at maxCSVObjects and "and N more". Every
// cell a spreadsheet could take for a formula is defused (csvCell).
func WriteCSV(w io.Writer, e Export) error {
	cw := csv.NewWriter(w)
	t := e.Result
	base := []string{e.Cluster, e.Target, e.EvaluatedAt.UTC().Format(time.RFC3339), e.KBVersion, t.Verdict, strconv.Itoa(t.Score)}
	row := func(cells ...string) error {
		out := make([]string, 0, len(csvHeader))
		for _, c := range append(append([]string{}, base...), cells...) {
			out = append(out, csvCell(c))
		}
		return cw.Write(out)
	}
	if err := cw.Write(csvHeader); err != nil {
		return err
	}
	if err := row("summary", "", "", counts(t), "", "", "", "", "", ""); err != nil {
		return err
	}
	for _, f := range t.Findings {
		if err := row(f.Severity, f.Category, f.Key, f.Title, f.Detail, f.Remediation+withChartFix(f),
			strings.Join(f.Teams, ";"), strings.Join(f.Namespaces, ";"), strings.Join(f.Citations, ";"), csvObjects(f)); err != nil {
			return err
		}
	}
	for _, g := range t.NotAssessed {
		req := "optional"
		if g.Required {
			req = "required"
		}
		if err := row("not-assessed", g.Capability, "not-assessed/"+g.Capability, req, g.Reason, "", "", "", "", ""); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// csvObjects is a finding's objects as one cell: the first maxCSVObjects, ";"-joined, and
// how many more there are.
func csvObjects(f report.Finding) string {
	parts := make([]string, 0, min(len(f.Objects), maxCSVObjects)+1)
	for _, o := range f.Objects[:min(len(f.Objects), maxCSVObjects)] {
		parts = append(parts, objectLabel(o))
	}
	if more := len(f.Objects) - len(parts) + f.ObjectsOmitted; more > 0 {
		parts = append(parts, fmt.Sprintf("and %d more", more))
	}
	return strings.Join(parts, ";")
}

// csvCell defuses a cell a spreadsheet would read as a formula: one starting with = + - @
// (or their full-width forms), a tab or a carriage return, also after leading white space, is
// prefixed with '. Every ";"-separated part is defused alike: the export joins lists with ";",
// which a spreadsheet in a locale whose separator it is splits into cells of their own.
// Finding titles and details quote manifests, which anyone who can open a pull request writes.
func csvCell(s string) string {
	parts := strings.Split(s, ";")
	for i, p := range parts {
		parts[i] = defuse(p)
	}
	return strings.Join(parts, ";")
}

func defuse(s string) string {
	if s == "" {
		return s
	}
	if s[0] == '\t' || s[0] == '\r' {
		return "'" + s
	}
	trimmed := strings.TrimLeftFunc(s, unicode.IsSpace)
	if r, _ := utf8.DecodeRuneInString(trimmed); strings.ContainsRune("=+-@＝＋－＠", r) {
		return "'" + s
	}
	return s
}

// sparkline is the polyline points of scores (0–100) in a width×height box, oldest at the
// left; one point is drawn as a flat line.
func sparkline(scores []int, width, height int) string {
	if len(scores) == 0 {
		return ""
	}
	if len(scores) == 1 {
		scores = []int{scores[0], scores[0]}
	}
	pts := make([]string, len(scores))
	for i, s := range scores {
		x := float64(i) * float64(width-2) / float64(len(scores)-1)
		y := float64(height-2) - float64(min(max(s, 0), 100))*float64(height-4)/100
		pts[i] = fmt.Sprintf("%.1f,%.1f", x+1, y)
	}
	return strings.Join(pts, " ")
}

//go:embed templates/export.css
var exportCSS string

// WriteHTML writes the export as one self-contained HTML file: no script, nothing loaded from
// anywhere (citations are text, not links), print CSS, the verdict and score as badges, the
// score history as an inline SVG line, findings by severity and what was not assessed. Every
// value is escaped with html.EscapeString. (Not html/template: linking it keeps every method
// of every type in the binary, 31 MB and 15 MiB of a scan's peak memory.)
func WriteHTML(w io.Writer, e Export) error {
	t := e.Result
	h := html.EscapeString
	var b strings.Builder
	title := fmt.Sprintf("upgradescope: %s at Kubernetes %s", e.Cluster, e.Target)
	fmt.Fprintf(&b, `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>%s</title>
<style>
%s</style>
</head>
<body>
<h1>%s: upgrade to Kubernetes %s</h1>
<p class="meta">Evaluated %s · knowledge base %s</p>
<div class="badges">
<span class="badge %s">Verdict: %s</span>
%s
<span>%s</span>
`, h(title), exportCSS, h(e.Cluster), h(e.Target), e.EvaluatedAt.UTC().Format(time.RFC3339), h(e.KBVersion),
		verdictClass(t.Verdict), h(t.Verdict), scoreBadge(t), h(counts(t)))
	if spark := sparkline(lastN(e.History, 100), 260, 48); spark != "" {
		fmt.Fprintf(&b, `<svg class="spark" width="260" height="48" viewBox="0 0 260 48" role="img" aria-label="Score history, oldest to newest"><polyline fill="none" stroke="#0969da" stroke-width="2" points="%s"/></svg>
`, spark)
	}
	b.WriteString("</div>\n")
	// An unknown verdict's cause is what the reader needs first: above the findings, which
	// cover only what was assessed.
	unknown := t.Verdict == report.VerdictUnknown
	if unknown {
		writeHTMLGaps(&b, e, true)
	}
	writeHTMLFindings(&b, t.Findings)
	if !unknown {
		writeHTMLGaps(&b, e, false)
	}
	b.WriteString("</body>\n</html>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// writeHTMLFindings writes the findings under one heading per severity, most severe first.
func writeHTMLFindings(b *strings.Builder, findings []report.Finding) {
	h := html.EscapeString
	if len(findings) == 0 {
		b.WriteString("<p>No findings.</p>\n")
	}
	for sev, fs := range severityGroups(findings) {
		fmt.Fprintf(b, "<h2>%ss (%d)</h2>\n", strings.ToUpper(sev[:1])+sev[1:], len(fs))
		for _, f := range fs {
			fmt.Fprintf(b, "<div class=\"finding %s\">\n<h3><span class=\"category\">[%s]</span> %s</h3>\n", sev, h(f.Category), h(f.Title))
			if f.Detail != "" {
				fmt.Fprintf(b, "<p>%s</p>\n", h(f.Detail))
			}
			if len(f.Objects) > 0 {
				fmt.Fprintf(b, "<p class=\"objects\">Objects: %s</p>\n", h(objectList(f)))
			}
			fmt.Fprintf(b, "<p class=\"owners\">Owners: %s</p>\n", h(owners(f)))
			if f.Remediation != "" {
				fmt.Fprintf(b, "<p><strong>Fix:</strong> %s</p>\n", h(f.Remediation))
			}
			if f.Fix != nil {
				fmt.Fprintf(b, "<p class=\"chart-fix\"><strong>Chart fix:</strong> %s</p>\n", h(f.Fix.Summary(f.Target)))
			}
			if len(f.Citations) > 0 {
				fmt.Fprintf(b, "<p class=\"citations\">Sources: %s</p>\n", h(strings.Join(f.Citations, "; ")))
			}
			b.WriteString("</div>\n")
		}
	}
}

// scoreBadge is the score as a badge: an unknown verdict's is not assessed, in no verdict's
// colour, since its number counts only what was assessed and would read as ready.
func scoreBadge(t report.TargetResult) string {
	if t.Verdict == report.VerdictUnknown {
		return `<span class="badge na" title="the score counts only what was assessed">Score n/a (not assessed)</span>`
	}
	return fmt.Sprintf(`<span class="badge %s">Score %d/100</span>`, scoreClass(t.Score), t.Score)
}

// writeHTMLGaps writes what was not assessed, grouped by cause (report.GroupGaps) with a
// probe group's fix, as the dashboard's cluster page shows it. As an unknown verdict's
// cause (cause true) it says so and how many required inputs are missing.
func writeHTMLGaps(b *strings.Builder, e Export, cause bool) {
	h := html.EscapeString
	gaps := e.Result.NotAssessed
	if len(gaps) == 0 {
		return
	}
	groups := report.GroupGaps(gaps)
	if !cause {
		fmt.Fprintf(b, "<h2>Not assessed (%d)</h2>\n", len(gaps))
	} else {
		required, causes := 0, 0
		for _, g := range groups {
			if g.Required {
				required, causes = required+len(g.Capabilities), causes+1
			}
		}
		verb := "were"
		if required == 1 {
			verb = "was"
		}
		fmt.Fprintf(b, "<h2>Why the verdict is unknown</h2>\n<p class=\"cause\">%s %s not assessed, from %s. The score and the findings cover only what was assessed: they do not mean ready.</p>\n",
			report.Count(required, "required input"), verb, report.Count(causes, "cause"))
	}
	b.WriteString("<ul class=\"gaps\">\n")
	for _, g := range groups {
		kind := "optional"
		if g.Required {
			kind = "required"
		}
		if g.Partial {
			kind += ", partial"
		}
		bundle, probes := g.Probes()
		if probes && len(g.Capabilities) > 1 {
			fmt.Fprintf(b, "<li><strong>%d probes of %s</strong> (%s): %s", len(g.Capabilities), h(bundle), kind, h(g.Reason))
		} else {
			fmt.Fprintf(b, "<li><strong>%s</strong> (%s): %s", h(g.Capabilities[0]), kind, h(g.Reason))
		}
		if fix := report.ProbeFix(g, e.Bundles, e.Collector); fix != "" {
			fmt.Fprintf(b, "\n<p class=\"fix\">%s</p>", h(fix))
		}
		if len(g.Skipped) > 0 {
			fmt.Fprintf(b, "\n<p class=\"objects\">Skipped: %s</p>", h(strings.Join(g.Skipped, ", ")))
		}
		if probes && len(g.Capabilities) > 1 {
			fmt.Fprintf(b, "\n<p class=\"objects\">The probes: %s</p>", h(strings.Join(g.Capabilities, ", ")))
		}
		b.WriteString("</li>\n")
	}
	b.WriteString("</ul>\n")
}

// owners says who must act on a finding: the teams owning its namespaces, or that none does.
func owners(f report.Finding) string {
	if len(f.Teams) == 0 {
		return "no owning team"
	}
	return strings.Join(f.Teams, ", ")
}

func verdictClass(v string) string {
	switch v {
	case report.VerdictReady:
		return "ok"
	case report.VerdictBlocked:
		return "bad"
	}
	return "warn"
}

// scoreClass colours a score as the reference does: ok from 90, warn from 70, else bad.
func scoreClass(score int) string {
	switch {
	case score >= 90:
		return "ok"
	case score >= 70:
		return "warn"
	}
	return "bad"
}

func lastN(xs []int, n int) []int {
	if len(xs) > n {
		return xs[len(xs)-n:]
	}
	return xs
}
