package output

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/inventory"
)

// maxTableObjects is how many objects a finding lists in the table; JSON has them all.
const maxTableObjects = 10

// Table writes plain, aligned text with no colour.
func Table(w io.Writer, r *engine.Report) error {
	bw := bufio.NewWriter(w)
	writeHeader(bw, r)
	writePlan(bw, r.Plan)
	for _, t := range r.Targets {
		writeTarget(bw, t)
	}
	for _, rule := range r.ExpiredIgnores {
		fmt.Fprintf(bw, "\nEXPIRED IGNORE RULE (line %d): %s, expired %s; its findings count again\n", rule.Line, ruleSubject(rule), rule.Expires)
	}
	return bw.Flush()
}

func writeHeader(w io.Writer, r *engine.Report) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "upgradescope report")
	source := r.Source
	if r.FilesBase != "" {
		source += " (" + r.FilesBase + ")"
	}
	fmt.Fprintf(tw, "Source:\t%s\n", source)
	if r.KubeContext != "" {
		fmt.Fprintf(tw, "Context:\t%s\n", r.KubeContext)
	}
	if r.APIServer != "" {
		fmt.Fprintf(tw, "Server:\t%s\n", r.APIServer)
	}
	if r.ClusterID != "" && r.ClusterID != "files" {
		fmt.Fprintf(tw, "Cluster:\t%s\n", r.ClusterID)
	}
	if r.ServerVersion != "" {
		fmt.Fprintf(tw, "Version:\t%s\n", r.ServerVersion)
	}
	fmt.Fprintf(tw, "KB:\t%s (horizon %s)\n", r.KB.GeneratedFrom, r.KB.Horizon)
	var bundles []string
	for _, b := range r.Bundles {
		bundles = append(bundles, b.Name+" "+b.Revision)
	}
	fmt.Fprintf(tw, "Bundles:\t%s\n", strings.Join(bundles, ", "))
	_ = tw.Flush()
}

func writeTarget(w io.Writer, t engine.TargetResult) {
	fmt.Fprintf(w, "\nTARGET %s  VERDICT %s  SCORE %d/100  (%d blocker, %d warning, %d info, %d suppressed)\n",
		t.Target, strings.ToUpper(t.Verdict), t.Score, t.Blockers, t.Warnings, t.Infos, t.SuppressedCount)
	if len(t.Findings) == 0 {
		fmt.Fprintln(w, "\nNo findings.")
	}
	for _, sev := range []string{engine.SeverityBlocker, engine.SeverityWarning, engine.SeverityInfo} {
		var fs []engine.Finding
		for _, f := range t.Findings {
			if f.Severity == sev {
				fs = append(fs, f)
			}
		}
		if len(fs) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s (%d)\n", strings.ToUpper(sev), len(fs))
		for _, f := range fs {
			writeFinding(w, f)
		}
	}
	writeTeams(w, t.Teams)
	writeGaps(w, t.NotAssessed)
	if len(t.Suppressed) > 0 {
		fmt.Fprintf(w, "\nSUPPRESSED (%d)\n", len(t.Suppressed))
		for _, f := range t.Suppressed {
			fmt.Fprintf(w, "  [%s] %s\n      reason (%s): %s\n", f.Category, f.Title, f.Suppression.Source, f.Suppression.Reason)
		}
	}
}

// writeTeams lists teams alphabetically with the unattributed bucket last.
func writeTeams(w io.Writer, teams map[string]engine.TeamResult) {
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
		fmt.Fprintf(tw, "  %s\t%d/100\t%s\t%d\t%d\n", n, t.Score, t.Verdict, t.Blockers, t.Warnings)
	}
	_ = tw.Flush()
}

const unattributed = "(unattributed)"

func writePlan(w io.Writer, hops []engine.Hop) {
	if len(hops) == 0 {
		return
	}
	fmt.Fprintln(w, "\nPLAN")
	for _, h := range hops {
		fmt.Fprintf(w, "  %s -> %s  %s  %d/100\n", h.From, h.To, strings.ToUpper(h.Verdict), h.Score)
		for _, k := range h.New {
			fmt.Fprintf(w, "      new: %s\n", k)
		}
		for _, k := range h.Changed {
			fmt.Fprintf(w, "      severity changed: %s\n", k)
		}
	}
}

func writeFinding(w io.Writer, f engine.Finding) {
	fmt.Fprintf(w, "  [%s] %s\n", f.Category, f.Title)
	if f.Detail != "" {
		fmt.Fprintf(w, "      %s\n", f.Detail)
	}
	if len(f.Objects) > 0 {
		fmt.Fprintf(w, "      objects: %s\n", objectList(f))
	}
	if len(f.Calls) > 0 {
		fmt.Fprintf(w, "      still called: %s\n", strings.Join(f.Calls, ", "))
	}
	if len(f.Teams) > 0 {
		fmt.Fprintf(w, "      teams: %s\n", strings.Join(f.Teams, ", "))
	}
	if f.SuppressedObjects > 0 {
		fmt.Fprintf(w, "      %d object(s) suppressed\n", f.SuppressedObjects)
	}
	if f.Remediation != "" {
		fmt.Fprintf(w, "      fix: %s\n", f.Remediation)
	}
	for _, c := range f.Citations {
		fmt.Fprintf(w, "      see: %s\n", c)
	}
}

func objectList(f engine.Finding) string {
	var parts []string
	for i, o := range f.Objects {
		if i == maxTableObjects {
			break
		}
		parts = append(parts, objectName(o))
	}
	if more := len(f.Objects) - len(parts) + f.ObjectsOmitted; more > 0 {
		parts = append(parts, fmt.Sprintf("and %d more", more))
	}
	return strings.Join(parts, ", ")
}

func objectName(o inventory.ObjectRef) string {
	name := o.Name
	if name == "" {
		name = "(unnamed)"
	}
	if o.Namespace != "" {
		name = o.Namespace + "/" + name
	}
	if o.File != "" {
		name += fmt.Sprintf(" (%s:%d)", o.File, o.Line)
	}
	return name
}

func writeGaps(w io.Writer, gaps []engine.Gap) {
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
		fmt.Fprintf(tw, "  %s\t%s\t%s\n", g.Capability, req, g.Reason)
	}
	_ = tw.Flush()
}

func ruleSubject(r engine.IgnoreRule) string {
	if r.Key != "" {
		return "key " + r.Key
	}
	return "category " + r.Category
}
