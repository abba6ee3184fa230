package mcpserver

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/upgradescope/upgradescope/convert"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/kb"
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
	Source       string     `json:"source"`
	Scan         string     `json:"scan,omitempty" jsonschema:"the scan the finding is of"`
	JudgedWith   []string   `json:"judgedWith" jsonschema:"the bundles and their revisions the finding comes from"`
	Key          string     `json:"key"`
	Target       string     `json:"target"`
	Severity     string     `json:"severity,omitempty"`
	Category     string     `json:"category,omitempty"`
	Title        string     `json:"title,omitempty"`
	Detail       string     `json:"detail,omitempty"`
	Remediation  string     `json:"remediation,omitempty"`
	Citations    []string   `json:"citations,omitempty"`
	Teams        []string   `json:"teams,omitempty"`
	Suppressed   string     `json:"suppressed,omitempty" jsonschema:"the rule that took the finding out of the score, with its reason"`
	Rule         *RuleFired `json:"rule,omitempty"`
	Fix          *FixChange `json:"fix,omitempty" jsonschema:"what upgradescope fix would change for this finding; absent when the scan read no files"`
	Clipped      []string   `json:"clipped,omitempty" jsonschema:"fields shortened to fit the answer; upgradescope scan -o json has them whole"`
	Objects      []string   `json:"objects" jsonschema:"the finding's objects as file:line Kind namespace/name, the kind the API's when the finding is about one"`
	ObjectsFirst int        `json:"objectsFirst" jsonschema:"index of the first object shown"`
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
	q, at, err := explainQuery(in)
	if err != nil {
		return ExplainAnswer{}, err
	}
	sc, err := s.reportAt(ctx, q.Scan, q.Cluster, q.Target)
	if err != nil {
		return ExplainAnswer{}, err
	}
	f, err := findFinding(sc, q.ExplainQuery)
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
	api, _ := findingAPI(s.cfg.Engine.KB(), f)
	objects := make([]string, len(f.Objects))
	for i, o := range f.Objects {
		objects[i] = objectLine(o, api.Kind)
	}
	if q.Cluster != "" {
		state := listState(objects, func(o string) string { return o })
		if in.Cursor != "" && q.State != state {
			return ExplainAnswer{}, errFleetChanged
		}
		q.State = state
	}
	if at > 0 {
		return objectsPage(a, objects, q, at), nil
	}
	e := explained{finding: f, rule: ruleFired(sc.rep, f)}
	if sc.files != "" {
		e.fix = s.fixFor(sc, f)
	}
	return firstPage(a, e, objects, q), nil
}

// explainCursor is what explain_finding's next carries: the query, and for a fleet
// cluster, whose report is read again for each page, the state of the objects paged.
type explainCursor struct {
	ExplainQuery
	State string `json:"state,omitempty"`
}

// explainQuery is the query in asks, from its cursor when it has one, and the index of the
// first object to show.
func explainQuery(in ExplainInput) (explainCursor, int, error) {
	q, at := explainCursor{ExplainQuery: in.ExplainQuery}, 0
	if in.Cursor != "" {
		var err error
		if q, at, err = decodeCursor[explainCursor](in.Cursor); err != nil {
			return q, 0, err
		}
	}
	if q.Key == "" {
		return q, 0, errors.New("key: name the finding, as scan and list_findings name it, e.g. \"removed-api/extensions/v1beta1/Ingress\"")
	}
	return q, at, nil
}

// explained is what the first page tells of a finding, whole; the page bounds it.
type explained struct {
	finding report.Finding
	rule    RuleFired
	fix     *fixPlanned // nil when the scan read no files
}

// findFinding is the finding q names in sc: among the findings and the suppressed ones, at
// q's target or at the only target that has it.
func findFinding(sc *scanned, q ExplainQuery) (report.Finding, error) {
	var found []report.Finding
	for _, t := range sc.rep.Targets {
		at, err := keyedAt(t, q.Key)
		if err != nil {
			return report.Finding{}, err
		}
		found = append(found, at...)
	}
	if len(found) == 0 {
		return report.Finding{}, noSuchKey(sc, q.Key)
	}
	return atTarget(sc, q, found)
}

// keyedAt is the finding of t whose key is key, else those whose key as a line shows it,
// clipped, is key: an assistant passes on what it was shown.
func keyedAt(t report.TargetResult, key string) ([]report.Finding, error) {
	var shown []report.Finding
	for _, f := range slices.Concat(t.Findings, t.Suppressed) {
		if f.Key == key {
			return []report.Finding{f}, nil
		}
		if clip(f.Key, maxLine) == key {
			shown = append(shown, f)
		}
	}
	if len(shown) > 1 {
		return nil, fmt.Errorf("key %q was cut short and names %d findings at %s: their keys differ past the %d bytes an answer shows; "+
			"pass a whole key, as upgradescope scan -o json names it", clip(key, maxLine), len(shown), t.Target, maxLine)
	}
	return shown, nil
}

// noSuchKey is the error for a key sc has at no target, naming the nearest keys it has.
func noSuchKey(sc *scanned, key string) error {
	var keys []string
	for _, t := range sc.rep.Targets {
		for _, f := range slices.Concat(t.Findings, t.Suppressed) {
			keys = append(keys, f.Key)
		}
	}
	slices.Sort(keys)
	return fmt.Errorf("key %q: %s has no such finding; nearest keys: %s (list_findings lists them all)",
		clip(key, maxLine), reportName(sc), strings.Join(near(key, slices.Compact(keys), nearShown), ", "))
}

// atTarget is the one of found, the findings of q's key, at q's target, or the only one when
// q names no target.
func atTarget(sc *scanned, q ExplainQuery, found []report.Finding) (report.Finding, error) {
	where := make([]string, len(found))
	for i, f := range found {
		where[i] = f.Target
	}
	if q.Target == "" {
		if len(found) > 1 {
			return report.Finding{}, fmt.Errorf("key %q is at %s: name one of them as target", clip(q.Key, maxLine), strings.Join(where, " and "))
		}
		return found[0], nil
	}
	minor, err := inventory.ParseTarget(strings.TrimSpace(q.Target))
	if err != nil {
		return report.Finding{}, fmt.Errorf("target: %w", err)
	}
	var judged []string
	for _, t := range sc.rep.Targets {
		judged = append(judged, t.Target)
	}
	if !slices.Contains(judged, minor) {
		return report.Finding{}, fmt.Errorf("target %s: %s judged %s; name one of them", minor, reportName(sc), strings.Join(judged, ", "))
	}
	if i := slices.Index(where, minor); i >= 0 {
		return found[i], nil
	}
	return report.Finding{}, fmt.Errorf("key %q is not at %s; it is at %s: name that target", clip(q.Key, maxLine), minor, strings.Join(where, ", "))
}

// reportName is how an error names sc: its scan id, or what it is of (a fleet cluster's
// report is kept under no id).
func reportName(sc *scanned) string {
	if sc.id != "" {
		return sc.id
	}
	return clip(sc.source, maxLine)
}

// findingAPI is the API version f's objects are written at, when its key names one: the
// knowledge base's group/version/Kind of a removed-api or deprecated-api finding
// ("removed-api/extensions/v1beta1/Ingress", ".../unserved" for one the target does not serve
// yet), or a custom resource's of a crd-version finding
// ("crd-version/unserved/example.com/v1alpha1/Widget"). Other findings are about something
// else their objects hold (an annotation, a feature gate, a budget). A Helm release's
// removed-api finding names a release, not an API the knowledge base knows.
func findingAPI(k *kb.KB, f report.Finding) (convert.GVK, bool) {
	rest, ok := strings.CutPrefix(f.Key, f.Category+"/")
	if !ok {
		return convert.GVK{}, false
	}
	switch f.Category {
	case "removed-api", "deprecated-api":
		parts := strings.SplitN(rest, "/", 4)
		if len(parts) < 3 {
			return convert.GVK{}, false
		}
		e, ok := k.API(strings.Join(parts[:3], "/"))
		return convert.GVK{Group: e.Group, Version: e.Version, Kind: e.Kind}, ok
	case "crd-version":
		parts := strings.Split(rest, "/")
		if len(parts) != 4 || parts[0] != "unserved" && parts[0] != "deprecated" {
			return convert.GVK{}, false
		}
		return convert.GVK{Group: parts[1], Version: parts[2], Kind: parts[3]}, true
	}
	return convert.GVK{}, false
}

// objectLine is an object as "file:line Kind namespace/name (rendered from …)"; kind is the
// object's when the report names none, as a removed-api finding's key names it for them all.
func objectLine(o inventory.ObjectRef, kind string) string {
	var b strings.Builder
	if o.File != "" {
		b.WriteString(o.File)
		if o.Line > 0 {
			b.WriteString(":" + strconv.Itoa(o.Line))
		}
		b.WriteString(" ")
	}
	if k := cmp.Or(o.Kind, kind); k != "" {
		b.WriteString(k + " ")
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
func objectsPage(a ExplainAnswer, objects []string, q explainCursor, at int) ExplainAnswer {
	a.ObjectsFirst = min(at, len(objects))
	return pageOf(objects, a.ObjectsFirst, q, func(shown []string, next string) ExplainAnswer {
		b := a
		b.Objects, b.Next = shown, next
		return b
	})
}

// budget bounds part of the first page: each long text to text bytes, each list to items.
type budget struct{ text, items int }

// budgets are a part's budgets, largest first.
var budgets = []budget{{800, 5}, {500, 4}, {320, 3}, {200, 2}, {100, 1}, {40, 1}}

// pageBudget bounds the first page: the finding's own text, and fix's summary.
type pageBudget struct{ finding, fix budget }

// pageBudgets are tried in turn until a first page fits: fix's budget gives way first, down
// to its smallest; only then the finding's by one step, fix's starting from its largest again.
var pageBudgets = func() []pageBudget {
	var out []pageBudget
	for _, finding := range budgets {
		for _, fix := range budgets {
			out = append(out, pageBudget{finding, fix})
		}
	}
	return out
}()

// firstPage is the finding in full within MaxAnswer. What gives way first is fix's diff, which
// takes the room left, then fix's lists, then the finding's own text: the first pageBudgets
// whose page fits with its first object; then its other first objects, then as much of the
// diff as the room left holds.
func firstPage(a ExplainAnswer, e explained, objects []string, q explainCursor) ExplainAnswer {
	first := objects[:min(len(objects), objectsFirstShown)]
	page := func(c ExplainAnswer, n int) ExplainAnswer {
		c.Objects = first[:n]
		if n < len(objects) {
			c.Next = encodeCursor(q, n)
		}
		return c
	}
	base := largestFitting(a, e, func(c ExplainAnswer) bool { return answerSize(page(c, min(len(first), 1))) <= MaxAnswer })
	out := page(base, fit(first, func(n int) any { return page(base, n) }))
	if out.Objects == nil {
		out.Objects = []string{}
	}
	if e.fix != nil && len(e.fix.hunks) > 0 {
		withDiff(&out, e.fix)
	}
	return out
}

// largestFitting is a with e in detail under the first pageBudgets that fits, or under the
// smallest when none does (the page as small as it gets).
func largestFitting(a ExplainAnswer, e explained, fits func(ExplainAnswer) bool) ExplainAnswer {
	var c ExplainAnswer
	for _, b := range pageBudgets {
		if c = detailed(a, e, b); fits(c) {
			break
		}
	}
	return c
}

// detailed is a with e's finding and rule under b.finding, and fix's summary under b.fix,
// naming what was clipped.
func detailed(a ExplainAnswer, e explained, b pageBudget) ExplainAnswer {
	var c clipper
	f, fb := e.finding, b.finding
	a.Severity, a.Category = f.Severity, f.Category
	a.Title = c.text("title", f.Title, min(fb.text, maxLine))
	a.Detail = c.text("detail", f.Detail, fb.text)
	a.Remediation = c.text("remediation", f.Remediation, fb.text)
	a.Citations = c.list("citations", f.Citations, fb)
	a.Teams = c.list("teams", f.Teams, fb)
	a.Suppressed = suppressedBy(f.Suppression)
	r := e.rule
	r.Title, r.Note = c.text("rule", r.Title, min(fb.text, maxLine)), c.text("rule", r.Note, min(fb.text, maxLine))
	a.Rule = &r
	if e.fix != nil {
		a.Fix = e.fix.summary(&c, b.fix)
	}
	a.Clipped = c.names()
	return a
}

// clipper clips an answer's fields to a budget and names those it shortened.
type clipper struct{ clipped []string }

// text is s within n bytes; name is the field, named when s is shortened.
func (c *clipper) text(name, s string, n int) string {
	if len(s) > n {
		c.clipped = append(c.clipped, name)
	}
	return clip(s, n)
}

// list is xs within b: at most b.items, the last saying how many more there are, each
// within b.text.
func (c *clipper) list(name string, xs []string, b budget) []string {
	n := len(xs)
	if n > b.items {
		c.clipped = append(c.clipped, name)
		n = b.items - 1
	}
	out := make([]string, 0, n+1)
	for _, x := range xs[:n] {
		out = append(out, c.text(name, x, min(b.text, 2*maxLine)))
	}
	if n < len(xs) {
		out = append(out, fmt.Sprintf("and %d more", len(xs)-n))
	}
	return out
}

// names are the fields shortened, sorted, each once.
func (c *clipper) names() []string {
	slices.Sort(c.clipped)
	return slices.Compact(c.clipped)
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
