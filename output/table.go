package output

import (
	"bytes"
	"fmt"
	"io"
	"iter"
	"sort"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/report"
)

const (
	// maxTableObjects is how many objects a finding lists in the table; JSON has them all.
	maxTableObjects = 10
	// lineWidth is where finding lines wrap: evidence of hundreds of characters stays readable
	// in a terminal and a CI log.
	lineWidth = 100
	// findingIndent starts every line under a finding's title.
	findingIndent = "      "
)

// tableRenderer writes plain, aligned text with no colour. A plan lists each hop with the
// findings it adds, changes and resolves, then the destination's teams and gaps; without a
// plan every target is listed in full.
type tableRenderer struct{}

func (tableRenderer) Render(w io.Writer, r *report.Report) error {
	var bw bytes.Buffer
	writeTable(&bw, r)
	_, err := w.Write(escapeControls(bw.Bytes(), true))
	return err
}

func writeTable(bw io.Writer, r *report.Report) {
	writeHeader(bw, r)
	if len(r.Plan) > 0 && len(r.Plan) == len(r.Targets) {
		writePlan(bw, r)
	} else {
		for _, t := range r.Targets {
			writeTarget(bw, t)
		}
	}
	for _, rule := range r.ExpiredIgnores {
		fmt.Fprintf(bw, "\nEXPIRED IGNORE RULE (line %d): %s, expired %s; its findings count again\n", rule.Line, esc(ruleSubject(rule)), esc(rule.Expires))
	}
}

// esc is a value from a manifest or a cluster with its control characters escaped.
func esc(s string) string { return string(escapeControls([]byte(s), false)) }

// escapeControls shows every control character but the line break as an escape (\x1b,
// \u009b): names, namespaces and titles come from manifests and clusters, and raw escape
// sequences in them could clear a terminal or draw a fake verdict over the real one.
// Values are escaped with their line breaks (esc) before they are laid out, and the whole
// table once more without them.
func escapeControls(b []byte, keepLineBreaks bool) []byte {
	out := make([]byte, 0, len(b))
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		switch {
		case r == '\n' && keepLineBreaks:
			out = append(out, '\n')
		case r < 0x20 || r == 0x7f:
			out = fmt.Appendf(out, "\\x%02x", r)
		case r >= 0x80 && r <= 0x9f || reorders(r):
			out = fmt.Appendf(out, "\\u%04x", r)
		case r == utf8.RuneError && size == 1:
			out = fmt.Appendf(out, "\\x%02x", b[0])
		default:
			out = append(out, b[:size]...)
		}
		b = b[size:]
	}
	return out
}

// reorders is true for the bidirectional controls and the line and paragraph separators:
// they make a terminal draw a row's text in another order, or on another line, than it has.
func reorders(r rune) bool {
	return r == 0x061c || r == 0x200e || r == 0x200f || r >= 0x202a && r <= 0x202e ||
		r >= 0x2066 && r <= 0x2069 || r == 0x2028 || r == 0x2029
}

func writeHeader(w io.Writer, r *report.Report) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "upgradescope report")
	source := r.Source
	if r.FilesBase != "" {
		source += " (" + r.FilesBase + ")"
	}
	fmt.Fprintf(tw, "Source:\t%s\n", esc(source))
	if line := excludedLine(r); line != "" {
		fmt.Fprintf(tw, "Excluded:\t%s\n", esc(line))
	}
	if r.KubeContext != "" {
		fmt.Fprintf(tw, "Context:\t%s\n", esc(r.KubeContext))
	}
	if r.APIServer != "" {
		fmt.Fprintf(tw, "Server:\t%s\n", esc(r.APIServer))
	}
	if r.ClusterID != "" && r.ClusterID != "files" {
		fmt.Fprintf(tw, "Cluster:\t%s\n", esc(r.ClusterID))
	}
	if r.ServerVersion != "" {
		fmt.Fprintf(tw, "Version:\t%s\n", esc(r.ServerVersion))
	}
	fmt.Fprintf(tw, "KB:\t%s (horizon %s)\n", esc(r.KB.GeneratedFrom), esc(r.KB.Horizon))
	var bundles []string
	for _, b := range r.Bundles {
		bundles = append(bundles, bundleLine(b))
	}
	fmt.Fprintf(tw, "Bundles:\t%s\n", esc(strings.Join(bundles, ", ")))
	_ = tw.Flush()
}

// maxExcludedShown is how many excluded paths the header names; -o json lists them all.
const maxExcludedShown = 5

// excludedLine names the paths exclusion patterns left unread, "" when none was: an
// exclusion changes what is judged, so it is never silent.
func excludedLine(r *report.Report) string {
	total := len(r.FilesExcluded) + r.FilesExcludedOmitted
	if total == 0 {
		return ""
	}
	var shown []string
	for _, x := range r.FilesExcluded[:min(len(r.FilesExcluded), maxExcludedShown)] {
		shown = append(shown, fmt.Sprintf("%s (%s)", x.Path, x.Pattern))
	}
	line := fmt.Sprintf("%s not read: %s", report.Count(total, "path"), strings.Join(shown, ", "))
	if more := total - len(shown); more > 0 {
		line += fmt.Sprintf(", and %d more (-o json lists them)", more)
	}
	return line
}

// bundleLine names a bundle's revision, where it came from and, for a signed bundle, whether
// its signature was checked: "kb 2027-01-05.1 (kb.tar.gz, signature verified)".
func bundleLine(b report.BundleInfo) string {
	origin := b.Source
	if b.Signature != "" {
		origin += ", signature " + b.Signature
	}
	return fmt.Sprintf("%s %s (%s)", b.Name, b.Revision, origin)
}

func writeTarget(w io.Writer, t report.TargetResult) {
	fmt.Fprintf(w, "\nTARGET %s  VERDICT %s  SCORE %d/100  (%s)\n", esc(t.Target), esc(strings.ToUpper(t.Verdict)), t.Score, counts(t))
	if c := t.Cluster; c != nil {
		fmt.Fprintf(w, "CLUSTER %s with these manifests: VERDICT %s  SCORE %d/100  (%s, %s)\n", esc(c.Name),
			esc(strings.ToUpper(c.Verdict)), c.Score, report.Count(c.Blockers, "blocker"), report.Count(c.Warnings, "warning"))
	}
	if len(t.Findings) == 0 {
		fmt.Fprintln(w, "\nNo findings.")
	}
	writeBySeverity(w, t.Findings)
	writeTeams(w, t.Teams)
	writeGaps(w, t.NotAssessed)
	writeSuppressed(w, t.Suppressed)
}

func counts(t report.TargetResult) string {
	return fmt.Sprintf("%s, %s, %d info, %d suppressed",
		report.Count(t.Blockers, "blocker"), report.Count(t.Warnings, "warning"), t.Infos, t.SuppressedCount)
}

// severityGroups yields the findings of each severity that has any, most severe first, each
// group in the report's order.
func severityGroups(findings []report.Finding) iter.Seq2[string, []report.Finding] {
	return func(yield func(string, []report.Finding) bool) {
		for _, sev := range []string{report.SeverityBlocker, report.SeverityWarning, report.SeverityInfo} {
			var fs []report.Finding
			for _, f := range findings {
				if f.Severity == sev {
					fs = append(fs, f)
				}
			}
			if len(fs) > 0 && !yield(sev, fs) {
				return
			}
		}
	}
}

// writeBySeverity lists findings under one heading per severity, most severe first.
func writeBySeverity(w io.Writer, findings []report.Finding) {
	for sev, fs := range severityGroups(findings) {
		fmt.Fprintf(w, "\n%s (%d)\n", strings.ToUpper(sev), len(fs))
		for _, f := range fs {
			writeFinding(w, "", f)
		}
	}
}

func writeSuppressed(w io.Writer, suppressed []report.Finding) {
	if len(suppressed) == 0 {
		return
	}
	fmt.Fprintf(w, "\nSUPPRESSED (%d)\n", len(suppressed))
	for _, f := range suppressed {
		fmt.Fprintf(w, "  [%s] %s\n", esc(f.Category), esc(f.Title))
		writeWrapped(w, esc(fmt.Sprintf("reason (%s): %s", f.Suppression.Source, f.Suppression.Reason)))
	}
}

// writeTeams lists teams alphabetically with the unattributed bucket last.
func writeTeams(w io.Writer, teams map[string]report.TeamResult) {
	if len(teams) == 0 {
		return
	}
	names := make([]string, 0, len(teams))
	for n := range teams {
		if n != unattributed {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	if _, ok := teams[unattributed]; ok {
		names = append(names, unattributed)
	}
	fmt.Fprintln(w, "\nTEAMS")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  TEAM\tSCORE\tVERDICT\tBLOCKERS\tWARNINGS")
	for _, n := range names {
		t := teams[n]
		fmt.Fprintf(tw, "  %s\t%d/100\t%s\t%d\t%d\n", esc(n), t.Score, esc(t.Verdict), t.Blockers, t.Warnings)
	}
	_ = tw.Flush()
}

const unattributed = "(unattributed)"

// writeFinding writes a finding's title line (after tag, when one is given) and its details.
func writeFinding(w io.Writer, tag string, f report.Finding) {
	fmt.Fprintf(w, "  %s[%s] %s\n", tag, esc(f.Category), esc(f.Title))
	if f.Detail != "" && f.Detail != f.Title {
		writeWrapped(w, esc(f.Detail))
	}
	if len(f.Objects) > 0 {
		writeWrapped(w, "objects: "+objectList(f))
	}
	if len(f.Calls) > 0 {
		writeWrapped(w, esc("still called: "+strings.Join(f.Calls, ", ")))
	}
	if len(f.Teams) > 0 {
		writeWrapped(w, esc("teams: "+strings.Join(f.Teams, ", ")))
	}
	if f.SuppressedObjects > 0 {
		writeWrapped(w, report.Count(f.SuppressedObjects, "object")+" suppressed")
	}
	if f.Remediation != "" {
		writeWrapped(w, esc("fix: "+f.Remediation))
	}
	if f.Fix != nil {
		writeWrapped(w, esc("chart fix: "+f.Fix.Summary(f.Target)))
	}
	if !f.Introduced() {
		writeWrapped(w, alreadyInCluster)
	}
	for _, c := range f.Citations {
		fmt.Fprintf(w, "%ssee: %s\n", findingIndent, esc(c))
	}
}

// writeWrapped writes text under a finding, wrapped at lineWidth on spaces (only spaces: a
// line break inside a name is escaped later, not wrapped away); continuation
// lines are indented two more. A word longer than the line (a digest, a URL) stays whole.
func writeWrapped(w io.Writer, text string) {
	width := lineWidth - len(findingIndent)
	line, indent := "", findingIndent
	for _, word := range strings.FieldsFunc(text, func(r rune) bool { return r == ' ' }) {
		if line != "" && len(line)+1+len(word) > width {
			fmt.Fprintf(w, "%s%s\n", indent, line)
			line, indent, width = "", findingIndent+"  ", lineWidth-len(findingIndent)-2
		}
		if line != "" {
			line += " "
		}
		line += word
	}
	if line != "" {
		fmt.Fprintf(w, "%s%s\n", indent, line)
	}
}

func objectList(f report.Finding) string { return objectsAs(f, objectName) }

// objectsAs lists a finding's first maxTableObjects objects, each as name writes it, and how
// many more there are.
func objectsAs(f report.Finding, name func(inventory.ObjectRef) string) string {
	var parts []string
	for i, o := range f.Objects {
		if i == maxTableObjects {
			break
		}
		parts = append(parts, name(o))
	}
	if more := len(f.Objects) - len(parts) + f.ObjectsOmitted; more > 0 {
		parts = append(parts, fmt.Sprintf("and %d more", more))
	}
	return strings.Join(parts, ", ")
}

func objectName(o inventory.ObjectRef) string {
	return esc(objectLabel(o))
}

func objectLabel(o inventory.ObjectRef) string {
	name := o.Name
	if name == "" {
		name = "(unnamed)"
	}
	if o.Namespace != "" {
		name = o.Namespace + "/" + name
	}
	if o.Kind != "" {
		name = o.Kind + " " + name
	}
	if o.File != "" {
		name += fmt.Sprintf(" (%s:%d)", o.File, o.Line)
	}
	return name
}

func writeGaps(w io.Writer, gaps []report.Gap) {
	if len(gaps) == 0 {
		return
	}
	fmt.Fprintln(w, "\nNOT ASSESSED")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, g := range gaps {
		req := "optional"
		if g.Required {
			req = "required"
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", esc(g.Capability), req, esc(g.Reason))
	}
	_ = tw.Flush()
}

func ruleSubject(r report.IgnoreRule) string {
	if r.Key != "" {
		return "key " + r.Key
	}
	return "category " + r.Category
}

// writePlan lists each hop with what it adds, changes and resolves against the hop before
// it, so a finding shows once, at the minor where it first matters; then the destination's
// teams, gaps and suppressions.
func writePlan(w io.Writer, r *report.Report) {
	first, last := r.Plan[0], r.Plan[len(r.Plan)-1]
	fmt.Fprintf(w, "\nPLAN %s -> %s  (%s)\n", esc(first.From), esc(last.To), report.Count(len(r.Plan), "hop"))
	var prev report.TargetResult
	for i, h := range r.Plan {
		t := r.Targets[i]
		fmt.Fprintf(w, "\nHOP %s -> %s  VERDICT %s  SCORE %d/100  (%s)\n", esc(h.From), esc(h.To), esc(strings.ToUpper(t.Verdict)), t.Score, counts(t))
		writeHop(w, h, prev, t)
		if i == 0 || !sameGaps(prev.NotAssessed, t.NotAssessed) {
			writeGaps(w, t.NotAssessed)
		}
		prev = t
	}
	dest := r.Targets[len(r.Targets)-1]
	if len(dest.Teams) > 0 || len(dest.Suppressed) > 0 {
		fmt.Fprintf(w, "\nAT %s\n", esc(dest.Target))
	}
	writeTeams(w, dest.Teams)
	writeSuppressed(w, dest.Suppressed)
}

func writeHop(w io.Writer, h report.Hop, prev, t report.TargetResult) {
	if len(h.New)+len(h.Changed)+len(h.Resolved) == 0 {
		fmt.Fprintln(w, "\nNo change from the previous hop.")
		return
	}
	if len(h.New) > 0 {
		fmt.Fprintf(w, "\nADDS (%d)\n", len(h.New))
		for _, f := range bySeverity(pick(t.Findings, h.New)) {
			writeFinding(w, strings.ToUpper(f.Severity)+" ", f)
		}
	}
	if len(h.Changed) > 0 {
		fmt.Fprintf(w, "\nCHANGES SEVERITY (%d)\n", len(h.Changed))
		was := map[string]string{}
		for _, f := range prev.Findings {
			was[f.Key] = f.Severity
		}
		for _, f := range bySeverity(pick(t.Findings, h.Changed)) {
			writeFinding(w, strings.ToUpper(was[f.Key]+" -> "+f.Severity)+" ", f)
		}
	}
	if len(h.Resolved) > 0 {
		fmt.Fprintf(w, "\nRESOLVES (%d)\n", len(h.Resolved))
		for _, f := range pick(prev.Findings, h.Resolved) {
			fmt.Fprintf(w, "  [%s] %s\n", esc(f.Category), esc(f.Title))
		}
	}
}

// bySeverity orders findings blockers first, keeping the report's order within a severity.
func bySeverity(fs []report.Finding) []report.Finding {
	rank := map[string]int{report.SeverityBlocker: 0, report.SeverityWarning: 1, report.SeverityInfo: 2}
	sort.SliceStable(fs, func(i, j int) bool { return rank[fs[i].Severity] < rank[fs[j].Severity] })
	return fs
}

// pick returns the findings whose key is in keys, in the findings' order.
func pick(findings []report.Finding, keys []string) []report.Finding {
	want := map[string]bool{}
	for _, k := range keys {
		want[k] = true
	}
	var out []report.Finding
	for _, f := range findings {
		if want[f.Key] {
			out = append(out, f)
		}
	}
	return out
}

func sameGaps(a, b []report.Gap) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Capability != b[i].Capability || a[i].Required != b[i].Required || a[i].Reason != b[i].Reason {
			return false
		}
	}
	return true
}
