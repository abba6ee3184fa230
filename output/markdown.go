package output

import (
	"cmp"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"

	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/report"
)

// maxMarkdownFindings bounds the rows of a target's findings table: a step summary or a pull
// request comment is read, not searched (GitHub refuses a summary past 1 MiB); the JSON
// report has them all.
const maxMarkdownFindings = 50

// markdownRenderer writes GitHub-flavoured Markdown for a CI step summary or a pull request
// comment: per target a verdict line, the findings as a table, most severe first, and what
// could not be assessed. Everything from a manifest or a cluster is escaped, so a title can
// neither break the table nor inject a link, an image or HTML.
type markdownRenderer struct{}

func (markdownRenderer) Render(w io.Writer, r *report.Report) error {
	var b strings.Builder
	b.WriteString("## upgradescope\n\n")
	b.WriteString(markdownSource(r) + "\n")
	if line := excludedLine(r); line != "" {
		b.WriteString("\nExcluded: " + md(line) + "\n")
	}
	for _, t := range r.Targets {
		writeMarkdownTarget(&b, t)
	}
	for _, rule := range r.ExpiredIgnores {
		fmt.Fprintf(&b, "\n> Expired ignore rule (line %d): %s, expired %s; its findings count again.\n",
			rule.Line, md(ruleSubject(rule)), md(rule.Expires))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// markdownSource is the line saying what was judged with what.
func markdownSource(r *report.Report) string {
	parts := []string{"Source " + md(r.Source)}
	if r.FilesBase != "" {
		parts[0] += " (`" + code(r.FilesBase) + "`)"
	}
	if r.KubeContext != "" {
		parts = append(parts, "Context "+md(r.KubeContext))
	}
	if r.APIServer != "" {
		parts = append(parts, "API server "+md(r.APIServer))
	}
	if r.ServerVersion != "" {
		parts = append(parts, "Version "+md(r.ServerVersion))
	}
	parts = append(parts, "KB "+md(r.KB.GeneratedFrom))
	var bundles []string
	for _, b := range r.Bundles {
		bundles = append(bundles, md(b.Name+" "+b.Revision))
	}
	parts = append(parts, "Bundles "+strings.Join(bundles, ", "))
	return strings.Join(parts, " · ")
}

var verdictMarks = map[string]string{report.VerdictReady: "✅", report.VerdictBlocked: "⛔", report.VerdictUnknown: "❔"}

// markdownScore is a verdict's score as a reader of a pull request's summary should take it:
// an unknown verdict's score counts only what was assessed, so it is not shown as a number
// that reads as ready (the dashboard and the HTML export say the same).
func markdownScore(verdict string, score int) string {
	if verdict == report.VerdictUnknown {
		return "score n/a (not assessed)"
	}
	return fmt.Sprintf("score %d/100", score)
}

func writeMarkdownTarget(b *strings.Builder, t report.TargetResult) {
	fmt.Fprintf(b, "\n### %s Kubernetes %s: %s, %s\n\n", verdictMarks[t.Verdict], md(t.Target), md(strings.ToUpper(t.Verdict)), markdownScore(t.Verdict, t.Score))
	fmt.Fprintf(b, "%s.\n", counts(t))
	if c := t.Cluster; c != nil {
		fmt.Fprintf(b, "\nThe findings marked *cluster* were already in cluster %s; with these manifests applied it is %s, %s (%s, %s).\n",
			md(c.Name), md(strings.ToUpper(c.Verdict)), markdownScore(c.Verdict, c.Score), report.Count(c.Blockers, "blocker"), report.Count(c.Warnings, "warning"))
	}
	if len(t.Findings) > 0 {
		b.WriteString("\n| severity | finding | objects | fix |\n|---|---|---|---|\n")
		for i, f := range introducedFirst(t) {
			if i == maxMarkdownFindings {
				fmt.Fprintf(b, "\n%s more in the JSON report (`--output json`).\n", report.Count(len(t.Findings)-i, "finding"))
				break
			}
			fmt.Fprintf(b, "| %s | %s | %s | %s |\n", markdownSeverity(f), markdownTitle(f), markdownObjects(f), md(f.Remediation+withChartFix(f)))
		}
	}
	if len(t.NotAssessed) > 0 {
		b.WriteString("\n**Not assessed**\n\n")
		for _, g := range t.NotAssessed {
			req := "optional"
			if g.Required {
				req = "required"
			}
			fmt.Fprintf(b, "- `%s` (%s): %s\n", code(g.Capability), req, md(g.Reason))
		}
	}
	if len(t.Suppressed) > 0 {
		fmt.Fprintf(b, "\n%s: %s\n", report.Count(len(t.Suppressed), "suppressed finding"), markdownSuppressed(t.Suppressed))
	}
}

// introducedFirst orders a gate's findings so the cut never hides what its manifests
// introduce behind what the cluster already had: introduced first, each part in the
// report's order.
func introducedFirst(t report.TargetResult) []report.Finding {
	if t.Cluster == nil {
		return t.Findings
	}
	out := slices.Clone(t.Findings)
	slices.SortStableFunc(out, func(a, b report.Finding) int {
		return cmp.Compare(boolRank(!a.Introduced()), boolRank(!b.Introduced()))
	})
	return out
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// markdownSeverity is a finding's severity, marked when a gated cluster already had it.
func markdownSeverity(f report.Finding) string {
	if !f.Introduced() {
		return f.Severity + " *cluster*"
	}
	return f.Severity
}

// markdownTitle is a finding's category and title, linked to its first citation when that is
// an https URL.
func markdownTitle(f report.Finding) string {
	title := "`" + code(f.Category) + "` " + md(f.Title)
	if len(f.Citations) > 0 && linkable(f.Citations[0]) {
		title += " ([source](" + f.Citations[0] + "))"
	}
	return title
}

// linkable says whether a citation may be a link target as it is: an https URL of plain
// characters. A custom pack's citation may quote a manifest.
func linkable(c string) bool {
	u, err := url.Parse(c)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return false
	}
	return !strings.ContainsFunc(c, func(r rune) bool {
		return r <= 0x20 || r >= 0x7f || strings.ContainsRune("()<>\"'`\\|[]", r)
	})
}

// markdownObjects is a finding's evidence cell: its objects, else the callers the audit log
// names (a pull request comment shows no detail, so the cell is where "who" can be read).
func markdownObjects(f report.Finding) string {
	if len(f.Objects) == 0 && (len(f.Callers) > 0 || f.CallersOmitted != nil) {
		return markdownCallers(f)
	}
	return objectsAs(f, func(o inventory.ObjectRef) string { return md(objectLabel(o)) })
}

// maxMarkdownCallers is how many callers a cell names, as many as a finding's detail does.
const maxMarkdownCallers = 3

// markdownCallers names the busiest callers with their counts, and counts the callers past
// them exactly as the report does (those listed and those it omitted).
func markdownCallers(f report.Finding) string {
	var parts []string
	for i, c := range f.Callers {
		if i == maxMarkdownCallers {
			break
		}
		parts = append(parts, md(fmt.Sprintf("%s (%s): %s", callerAgent(c), callerWho(c), report.Count(int(c.Count), "call"))))
	}
	more := int64(len(f.Callers) - len(parts))
	if f.CallersOmitted != nil {
		more += f.CallersOmitted.Callers
	}
	if more > 0 {
		parts = append(parts, "and "+report.Count(int(more), "more caller"))
	}
	return strings.Join(parts, ", ")
}

func callerAgent(c report.Caller) string {
	if c.UserAgent == "" {
		return "no user agent"
	}
	return c.UserAgent
}

func callerWho(c report.Caller) string {
	switch {
	case c.ServiceAccount != "":
		return "service account " + c.ServiceAccount
	case c.User != "":
		return "user " + c.User
	}
	return "no user"
}

func markdownSuppressed(fs []report.Finding) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = "`" + code(f.Key) + "` (" + md(f.Suppression.Reason) + ")"
	}
	return strings.Join(parts, ", ")
}

// mdEscaper escapes what Markdown and the HTML it allows would read as markup, and the pipe
// that ends a table cell; line breaks become spaces, since a cell is one line; "#" gets a
// zero width space too, so "#12" names no issue.
var mdEscaper = strings.NewReplacer(
	`\`, `\\`, "`", "\\`", "*", `\*`, "_", `\_`, "[", `\[`, "]", `\]`, "(", `\(`, ")", `\)`,
	"#", "\\#\u200b", "!", `\!`, "|", `\|`, "<", "&lt;", ">", "&gt;", "&", "&amp;", "~", `\~`,
	"\r\n", " ", "\n", " ", "\r", " ",
	// GitHub links bare URLs, www. names and e-mail addresses, and pings @mentions: a zero
	// width space after the marker keeps the text and drops the link or the ping.
	"://", ":\u200b//", "www.", "www\u200b.", "@", "@\u200b",
)

// md is text from a report made safe for Markdown, with its control characters escaped.
func md(s string) string { return mdEscaper.Replace(esc(s)) }

// code is text for a code span: a backtick would end it and a pipe the table cell, so both
// are replaced, and line breaks become spaces.
func code(s string) string {
	return strings.NewReplacer("`", "'", "|", "¦", "\r\n", " ", "\n", " ", "\r", " ").Replace(esc(s))
}
