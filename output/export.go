package output

import (
	_ "embed"
	"encoding/csv"
	"fmt"
	"html/template"
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
}

// csvHeader are the export's columns.
var csvHeader = []string{"cluster", "target", "evaluatedAt", "kbVersion", "verdict", "score", "severity",
	"category", "key", "title", "detail", "remediation", "teams", "namespaces", "citations"}

// WriteCSV writes the export as CSV: a summary row, a row per finding, most severe first, and
// a row per capability not assessed. Multiple values are joined with ";". Every cell a
// spreadsheet could take for a formula is defused (csvCell).
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
	if err := row("summary", "", "", counts(t), "", "", "", "", ""); err != nil {
		return err
	}
	for _, f := range t.Findings {
		if err := row(f.Severity, f.Category, f.Key, f.Title, f.Detail, f.Remediation,
			strings.Join(f.Teams, ";"), strings.Join(f.Namespaces, ";"), strings.Join(f.Citations, ";")); err != nil {
			return err
		}
	}
	for _, g := range t.NotAssessed {
		req := "optional"
		if g.Required {
			req = "required"
		}
		if err := row("not-assessed", g.Capability, "not-assessed/"+g.Capability, req, g.Reason, "", "", "", ""); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
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

//go:embed templates/export.html
var exportHTML string

var exportTemplate = template.Must(template.New("export").Parse(exportHTML))

// htmlFinding is a finding as the HTML export shows it.
type htmlFinding struct {
	Severity, Category, Title, Detail, Objects, Remediation string
	Citations                                               []string
}

type htmlGroup struct {
	Title    string
	Findings []htmlFinding
}

// WriteHTML writes the export as one self-contained HTML file: no script, nothing loaded from
// anywhere (citations are text, not links), print CSS, the verdict and score as badges, the
// score history as an inline SVG line, findings by severity and what was not assessed.
// html/template escapes every value.
func WriteHTML(w io.Writer, e Export) error {
	t := e.Result
	data := map[string]any{
		"Cluster": e.Cluster, "Target": e.Target, "EvaluatedAt": e.EvaluatedAt.UTC().Format(time.RFC3339),
		"KBVersion": e.KBVersion, "Verdict": t.Verdict, "Score": t.Score, "Counts": counts(t),
		"VerdictClass": verdictClass(t.Verdict), "ScoreClass": scoreClass(t.Score),
		"Spark": sparkline(lastN(e.History, 100), 260, 48), "NotAssessed": t.NotAssessed,
	}
	var groups []htmlGroup
	for _, sev := range []string{report.SeverityBlocker, report.SeverityWarning, report.SeverityInfo} {
		g := htmlGroup{Title: strings.ToUpper(sev[:1]) + sev[1:] + "s"}
		for _, f := range t.Findings {
			if f.Severity == sev {
				g.Findings = append(g.Findings, htmlFinding{Severity: f.Severity, Category: f.Category, Title: f.Title,
					Detail: f.Detail, Objects: objectList(f), Remediation: f.Remediation, Citations: f.Citations})
			}
		}
		if len(g.Findings) > 0 {
			groups = append(groups, g)
		}
	}
	data["Groups"] = groups
	return exportTemplate.Execute(w, data)
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
