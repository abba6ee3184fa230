package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/report"
)

// objectsFirstShown is how many objects the first answer shows beside the finding; the
// next pages hold as many as fit.
const objectsFirstShown = 3

// ExplainQuery chooses one finding of a report.
type ExplainQuery struct {
	Scan    string `json:"scan,omitempty" jsonschema:"a scan's id (default: the latest scan)"`
	Cluster string `json:"cluster,omitempty" jsonschema:"a fleet cluster's name, read from the fleet server instead of a scan"`
	Target  string `json:"target,omitempty" jsonschema:"the minor the finding is at; needed only when its key is at several"`
	Key     string `json:"key,omitempty" jsonschema:"the finding's key, as scan and list_findings name it (required unless cursor is given)"`
}

// ExplainInput is explain_finding's input: a query, or the cursor of a previous page.
type ExplainInput struct {
	ExplainQuery
	Cursor string `json:"cursor,omitempty" jsonschema:"the next of a previous answer, for more of the finding's objects; the query travels in it"`
}

// ExplainAnswer is one finding in full. The first page holds the finding, the rule that made
// it, what upgradescope fix would change and its first objects; the next pages (cursor) hold
// its other objects only.
type ExplainAnswer struct {
	Source      string     `json:"source"`
	Scan        string     `json:"scan,omitempty" jsonschema:"the scan the finding is of"`
	JudgedWith  []string   `json:"judgedWith" jsonschema:"the bundles and their revisions the finding comes from"`
	Key         string     `json:"key"`
	Target      string     `json:"target"`
	Severity    string     `json:"severity,omitempty"`
	Category    string     `json:"category,omitempty"`
	Title       string     `json:"title,omitempty"`
	Detail      string     `json:"detail,omitempty"`
	Remediation string     `json:"remediation,omitempty"`
	Citations   []string   `json:"citations,omitempty"`
	Teams       []string   `json:"teams,omitempty"`
	Suppressed  string     `json:"suppressed,omitempty" jsonschema:"the rule that took the finding out of the score, with its reason"`
	Rule        *RuleFired `json:"rule,omitempty"`
	Fix         *FixChange `json:"fix,omitempty" jsonschema:"what upgradescope fix would change for this finding; absent when the scan read no files"`
	Clipped     []string   `json:"clipped,omitempty" jsonschema:"fields shortened to fit the answer; upgradescope scan -o json has them whole"`
	Objects     []string   `json:"objects" jsonschema:"the finding's objects as file:line kind namespace/name"`
	ObjectsFrom int        `json:"objectsFrom" jsonschema:"index of the first object shown"`
	// ObjectsTotal counts the objects the report omitted too: those it lists can be paged,
	// the omitted ones only counted.
	ObjectsTotal   int    `json:"objectsTotal" jsonschema:"the finding's objects in all, those the report omitted included"`
	ObjectsOmitted int    `json:"objectsOmitted,omitempty" jsonschema:"objects the report counted but did not list"`
	Next           string `json:"next,omitempty" jsonschema:"cursor of the next page of objects"`
}

var explainFindingTool = &mcp.Tool{
	Name:  "explain_finding",
	Title: "Explain one finding",
	Description: "One finding of a scan (default: the latest) or of a fleet cluster in full: detail, remediation, citations, teams, " +
		"the rule that fired, its objects with file:line (paged: pass next as cursor), and for scanned manifests what " +
		"upgradescope fix would change for it (nothing is written).",
}

// explainFinding answers the finding q names: in full on the first page, its objects on the next.
func (s *Server) explainFinding(ctx context.Context, in ExplainInput) (ExplainAnswer, error) {
	q, at := in.ExplainQuery, 0
	if in.Cursor != "" {
		var err error
		if q, at, err = decodeCursor[ExplainQuery](in.Cursor); err != nil {
			return ExplainAnswer{}, err
		}
	}
	if q.Key == "" {
		return ExplainAnswer{}, errors.New("key: name the finding, as scan and list_findings name it, e.g. \"removed-api/extensions/v1beta1/Ingress\"")
	}
	sc, err := s.reportAt(ctx, q.Scan, q.Cluster, q.Target)
	if err != nil {
		return ExplainAnswer{}, err
	}
	f, err := findFinding(sc, q)
	if err != nil {
		return ExplainAnswer{}, err
	}
	// The cursor names the scan and target found, so a later scan does not change the pages.
	if q.Cluster == "" {
		q.Scan = sc.id
	}
	q.Target = f.Target
	a := ExplainAnswer{Source: clip(sc.source, maxLine), Scan: sc.id, JudgedWith: judgedWith(sc.rep), Key: clip(f.Key, maxLine),
		Target: f.Target, ObjectsTotal: len(f.Objects) + f.ObjectsOmitted, ObjectsOmitted: f.ObjectsOmitted}
	objects := make([]string, len(f.Objects))
	for i, o := range f.Objects {
		objects[i] = objectLine(o)
	}
	if at > 0 {
		return objectsPage(a, objects, q, at), nil
	}
	var fc *fixPlanned
	if sc.files != "" {
		fc = s.fixFor(sc, f)
	}
	return firstPage(a, f, ruleFired(sc.rep, f), fc, objects, q), nil
}

// findFinding is the finding q names in sc: among the findings and the suppressed ones, at
// q's target or at the only target that has it.
func findFinding(sc *scanned, q ExplainQuery) (report.Finding, error) {
	var targets, keys []string
	var found []report.Finding
	for _, t := range sc.rep.Targets {
		targets = append(targets, t.Target)
		// A key as a line shows it, clipped, names its finding too: an assistant passes on
		// what it was shown.
		var at []report.Finding
		for _, f := range slices.Concat(t.Findings, t.Suppressed) {
			keys = append(keys, f.Key)
			if f.Key == q.Key {
				at = []report.Finding{f}
				break
			}
			if clip(f.Key, maxLine) == q.Key {
				at = append(at, f)
			}
		}
		if len(at) > 1 {
			return report.Finding{}, fmt.Errorf("key %q was cut short and names %d findings at %s: their keys differ past the %d bytes an answer shows",
				clip(q.Key, maxLine), len(at), t.Target, maxLine)
		}
		found = append(found, at...)
	}
	if len(found) == 0 {
		slices.Sort(keys)
		return report.Finding{}, fmt.Errorf("key %q: %s has no such finding; nearest keys: %s (list_findings lists them all)",
			clip(q.Key, maxLine), reportName(sc), strings.Join(near(q.Key, slices.Compact(keys), nearShown), ", "))
	}
	where := make([]string, len(found))
	for i, f := range found {
		where[i] = f.Target
	}
	if q.Target == "" {
		if len(found) > 1 {
			return report.Finding{}, fmt.Errorf("key %q is at %s: name the target", clip(q.Key, maxLine), strings.Join(where, " and "))
		}
		return found[0], nil
	}
	minor, err := inventory.ParseTarget(strings.TrimSpace(q.Target))
	if err != nil {
		return report.Finding{}, fmt.Errorf("target: %w", err)
	}
	if !slices.Contains(targets, minor) {
		return report.Finding{}, fmt.Errorf("target %s: %s judged %s; name one of them", minor, reportName(sc), strings.Join(targets, ", "))
	}
	for _, f := range found {
		if f.Target == minor {
			return f, nil
		}
	}
	return report.Finding{}, fmt.Errorf("key %q is not at %s; it is at %s", clip(q.Key, maxLine), minor, strings.Join(where, ", "))
}

// reportName is how an error names sc: its scan id, or what it is of (a fleet cluster's
// report is kept under no id).
func reportName(sc *scanned) string {
	if sc.id != "" {
		return sc.id
	}
	return clip(sc.source, maxLine)
}

// objectLine is an object as "file:line Kind namespace/name (rendered from …)".
func objectLine(o inventory.ObjectRef) string {
	var b strings.Builder
	if o.File != "" {
		b.WriteString(o.File)
		if o.Line > 0 {
			b.WriteString(":" + strconv.Itoa(o.Line))
		}
		b.WriteString(" ")
	}
	if o.Kind != "" {
		b.WriteString(o.Kind + " ")
	}
	if o.Namespace != "" {
		b.WriteString(o.Namespace + "/")
	}
	b.WriteString(o.Name)
	if o.RenderedFrom != "" {
		b.WriteString(" (rendered from " + o.RenderedFrom + ")")
	}
	return clip(b.String(), maxLine)
}

// objectsPage is a later page: the objects from at, as many as fit.
func objectsPage(a ExplainAnswer, objects []string, q ExplainQuery, at int) ExplainAnswer {
	a.ObjectsFrom = min(at, len(objects))
	rest := objects[a.ObjectsFrom:]
	page := func(n int) ExplainAnswer {
		b := a
		b.Objects = rest[:n]
		if a.ObjectsFrom+n < len(objects) {
			b.Next = encodeCursor(q, a.ObjectsFrom+n)
		}
		return b
	}
	a = page(fit(rest, func(n int) any { return page(n) }))
	if a.Objects == nil {
		a.Objects = []string{}
	}
	return a
}

// budget bounds part of the first page: each long text to text bytes, each list to items.
type budget struct{ text, items int }

// budgets are tried in turn, largest first, until the page fits in MaxAnswer.
var budgets = []budget{{800, 5}, {500, 4}, {320, 3}, {200, 2}, {100, 1}, {40, 1}}

// firstPage is the finding in full within MaxAnswer. What gives way first is fix's diff, which
// takes the room left, then fix's lists, then the finding's own text: the first pair of
// budgets (the finding's, fix's) whose page fits with its first object; then its other first
// objects, then as much of the diff as the room left holds.
func firstPage(a ExplainAnswer, f report.Finding, rule RuleFired, fc *fixPlanned, objects []string, q ExplainQuery) ExplainAnswer {
	first := objects[:min(len(objects), objectsFirstShown)]
	page := func(c ExplainAnswer, n int) ExplainAnswer {
		c.Objects = first[:n]
		if n < len(objects) {
			c.Next = encodeCursor(q, n)
		}
		return c
	}
	base := choose(func(fb, xb budget) (ExplainAnswer, bool) {
		c := detailed(a, f, rule, fc, fb, xb)
		return c, answerSize(page(c, min(len(first), 1))) <= MaxAnswer
	})
	out := page(base, fit(first, func(n int) any { return page(base, n) }))
	if out.Objects == nil {
		out.Objects = []string{}
	}
	if fc != nil && len(fc.hunks) > 0 {
		withDiff(&out, fc)
	}
	return out
}

// choose is the first page try builds that fits, the finding's budget giving way only after
// fix's is at its smallest.
func choose(try func(finding, fix budget) (ExplainAnswer, bool)) ExplainAnswer {
	var last ExplainAnswer
	for _, fb := range budgets {
		for _, xb := range budgets {
			c, ok := try(fb, xb)
			if ok {
				return c
			}
			last = c
		}
	}
	return last // even the smallest budgets overflow: the page as small as it gets
}

// detailed is a with f's fields and the rule under fb, and fix's summary under xb, naming what
// was clipped.
func detailed(a ExplainAnswer, f report.Finding, rule RuleFired, fc *fixPlanned, fb, xb budget) ExplainAnswer {
	var clipped []string
	text := func(name, s string, n int) string {
		if len(s) > n {
			clipped = append(clipped, name)
		}
		return clip(s, n)
	}
	list := func(name string, xs []string, b budget) []string {
		n := len(xs)
		if n > b.items {
			clipped = append(clipped, name)
			n = b.items - 1
		}
		out := make([]string, 0, n+1)
		for _, x := range xs[:n] {
			out = append(out, text(name, x, min(b.text, 2*maxLine)))
		}
		if n < len(xs) {
			out = append(out, fmt.Sprintf("and %d more", len(xs)-n))
		}
		return out
	}
	a.Severity, a.Category = f.Severity, f.Category
	a.Title = text("title", f.Title, min(fb.text, maxLine))
	a.Detail = text("detail", f.Detail, fb.text)
	a.Remediation = text("remediation", f.Remediation, fb.text)
	a.Citations = list("citations", f.Citations, fb)
	a.Teams = list("teams", f.Teams, fb)
	a.Suppressed = suppressedBy(f.Suppression)
	r := rule
	r.Title, r.Note = text("rule", r.Title, min(fb.text, maxLine)), text("rule", r.Note, min(fb.text, maxLine))
	a.Rule = &r
	if fc != nil {
		a.Fix = &FixChange{Command: fc.command, Changes: text("fix", fc.changes, max(xb.text, maxLine)),
			Files: list("fix", fc.files, xb), Objects: list("fix", fc.objects, xb),
			Manual: list("fix", fc.manual, xb), Notes: list("fix", fc.notes, xb)}
		if len(fc.hunks) > 0 {
			a.Fix.DiffNote = "left out to stay within 4 KB: run the command to see it"
		}
	}
	slices.Sort(clipped)
	a.Clipped = slices.Compact(clipped)
	return a
}

// suppressedBy is how an answer names the rule that suppressed a finding.
func suppressedBy(sp *report.Suppression) string {
	if sp == nil {
		return ""
	}
	where := sp.Source
	if sp.Source == "config" {
		where = fmt.Sprintf("ignore rule %d", sp.Index)
	}
	s := where + ": " + sp.Reason
	if sp.Expires != "" {
		s += " (until " + sp.Expires + ")"
	}
	return clip(s, maxLine)
}
