package mcpserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/upgradescope/upgradescope/bundles"
	"github.com/upgradescope/upgradescope/collectors/files"
	"github.com/upgradescope/upgradescope/fix"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/policies"
	"github.com/upgradescope/upgradescope/report"
)

// objectsFirstShown is how many objects the first answer shows beside the finding; the
// next pages hold as many as fit.
const objectsFirstShown = 3

// minDiff is the least of a diff worth showing clipped; with less room the answer says how
// to see it instead.
const minDiff = 160

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

// RuleFired names what made a finding. A built-in finding comes from a package
// data.upgradescope.rules.<pack> of the rules bundle, and carries no pack; a custom
// finding's pack is custom/<name>[/<sub>], the package data.upgradescope.custom.<name>[.<sub>]
// of the bundle rooted there.
type RuleFired struct {
	Bundle   string   `json:"bundle" jsonschema:"the bundle and revision the rule is in"`
	Pack     string   `json:"pack,omitempty" jsonschema:"a custom pack's name, as the report's pack field spells it"`
	Packages []string `json:"packages,omitempty" jsonschema:"the Rego package that made the finding; several when more than one declares its category"`
	Title    string   `json:"title,omitempty" jsonschema:"the package's METADATA title"`
	Note     string   `json:"note,omitempty"`
}

// FixChange is what upgradescope fix would do for this finding's objects alone: the
// conversions, what needs a person, the notes and the diff of the lines they change.
// Nothing is written.
type FixChange struct {
	Command  string   `json:"command" jsonschema:"the command that shows or writes the whole fix"`
	Changes  string   `json:"changes" jsonschema:"what fix would do for this finding, in a sentence"`
	Files    []string `json:"files,omitempty" jsonschema:"files fix would rewrite for this finding"`
	Objects  []string `json:"objects,omitempty" jsonschema:"per object: file:line kind name: apiVersion before → after, or why a person must"`
	Manual   []string `json:"manual,omitempty" jsonschema:"what needs a person, left untouched"`
	Notes    []string `json:"notes,omitempty" jsonschema:"what a reader of the rewritten files must know"`
	Diff     string   `json:"diff,omitempty" jsonschema:"unified diff of the hunks that change this finding's objects"`
	DiffNote string   `json:"diffNote,omitempty"`
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
	sc, err := s.reportFor(ctx, q.Scan, q.Cluster)
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
	return s.firstPage(a, f, ruleFired(sc.rep, f), fc, objects, q), nil
}

// findFinding is the finding q names in sc: among the findings and the suppressed ones, at
// q's target or at the only target that has it.
func findFinding(sc *scanned, q ExplainQuery) (report.Finding, error) {
	var targets, keys []string
	var found []report.Finding
	for _, t := range sc.rep.Targets {
		targets = append(targets, t.Target)
		for _, f := range slices.Concat(t.Findings, t.Suppressed) {
			keys = append(keys, f.Key)
			if f.Key == q.Key {
				found = append(found, f)
				break
			}
		}
	}
	if len(found) == 0 {
		slices.Sort(keys)
		return report.Finding{}, fmt.Errorf("key %q: %s has no such finding; nearest keys: %s (list_findings lists them all)",
			clip(q.Key, maxLine), sc.id, strings.Join(near(q.Key, slices.Compact(keys), nearShown), ", "))
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
		return report.Finding{}, fmt.Errorf("target %s: %s judged %s; name one of them", minor, sc.id, strings.Join(targets, ", "))
	}
	for _, f := range found {
		if f.Target == minor {
			return f, nil
		}
	}
	return report.Finding{}, fmt.Errorf("key %q is not at %s; it is at %s", clip(q.Key, maxLine), minor, strings.Join(where, ", "))
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

// budget bounds the first page's text: each long field to text bytes, each list to items.
type budget struct{ text, items int }

// budgets are tried in turn until the finding and its first object fit in MaxAnswer.
var budgets = []budget{{800, 5}, {500, 4}, {320, 3}, {200, 2}, {100, 1}, {40, 1}}

// firstPage is the finding in full within MaxAnswer: its fields under the first budget that
// fits, its first objects, then as much of fix's diff as the room left holds.
func (s *Server) firstPage(a ExplainAnswer, f report.Finding, rule RuleFired, fc *fixPlanned, objects []string, q ExplainQuery) ExplainAnswer {
	first := objects[:min(len(objects), objectsFirstShown)]
	var base ExplainAnswer
	for _, b := range budgets {
		base = detailed(a, f, rule, fc, b)
		base.Objects = first[:min(len(first), 1)]
		if answerSize(base) <= MaxAnswer {
			break
		}
	}
	page := func(n int) ExplainAnswer {
		c := base
		c.Objects = first[:n]
		if n < len(objects) {
			c.Next = encodeCursor(q, n)
		}
		return c
	}
	out := page(fit(first, func(n int) any { return page(n) }))
	if out.Objects == nil {
		out.Objects = []string{}
	}
	if fc != nil && len(fc.hunks) > 0 {
		withDiff(&out, fc)
	}
	return out
}

// detailed is a with f's fields, the rule and fix's summary under b, naming what was clipped.
func detailed(a ExplainAnswer, f report.Finding, rule RuleFired, fc *fixPlanned, b budget) ExplainAnswer {
	var clipped []string
	text := func(name, s string, n int) string {
		if len(s) > n {
			clipped = append(clipped, name)
		}
		return clip(s, n)
	}
	list := func(name string, xs []string, n int) []string {
		if len(xs) <= n {
			n = len(xs)
		} else {
			clipped = append(clipped, name)
			n = max(n-1, 0)
		}
		out := make([]string, 0, n+1)
		for _, x := range xs[:n] {
			out = append(out, text(name, x, min(b.text, maxLine)))
		}
		if n < len(xs) {
			out = append(out, fmt.Sprintf("and %d more", len(xs)-n))
		}
		return out
	}
	a.Severity, a.Category = f.Severity, f.Category
	a.Title = text("title", f.Title, min(b.text, maxLine))
	a.Detail = text("detail", f.Detail, b.text)
	a.Remediation = text("remediation", f.Remediation, b.text)
	a.Citations = list("citations", f.Citations, b.items)
	a.Teams = list("teams", f.Teams, b.items)
	a.Suppressed = suppressedBy(f.Suppression)
	r := rule
	r.Title, r.Note = text("rule", r.Title, min(b.text, maxLine)), text("rule", r.Note, min(b.text, maxLine))
	a.Rule = &r
	if fc != nil {
		a.Fix = &FixChange{Command: fc.command, Changes: text("fix", fc.changes, max(b.text, maxLine)),
			Files: list("fix", fc.files, b.items), Objects: list("fix", fc.objects, b.items),
			Manual: list("fix", fc.manual, b.items), Notes: list("fix", fc.notes, b.items)}
		if len(fc.hunks) > 0 {
			a.Fix.DiffNote = "left out to stay within 4 KB: run the command to see it"
		}
	}
	a.Clipped = slices.Compact(clipped)
	return a
}

// withDiff puts as much of fc's diff into a as fits: whole, else its first hunks, else the
// first hunk clipped at a line, else nothing (the note set by detailed says how to see it).
func withDiff(a *ExplainAnswer, fc *fixPlanned) {
	with := func(diff, note string) (ExplainAnswer, bool) {
		b := *a
		fx := *a.Fix
		fx.Diff, fx.DiffNote = diff, strings.TrimPrefix(fc.diffNote+"; "+note, "; ")
		b.Fix = &fx
		return b, answerSize(b) <= MaxAnswer
	}
	if b, ok := with(strings.Join(fc.hunks, ""), ""); ok {
		*a = b
		return
	}
	firstHunks := func(n int) (ExplainAnswer, bool) {
		return with(strings.Join(fc.hunks[:n], ""), fmt.Sprintf("the first %d of %d hunks, to fit 4 KB: run the command for the rest", n, len(fc.hunks)))
	}
	if n := sort.Search(len(fc.hunks), func(n int) bool { _, ok := firstHunks(n + 1); return !ok }); n > 0 {
		*a, _ = firstHunks(n)
		return
	}
	// The first hunk alone is too long: the longest clip of it at a line end that fits.
	note := "the first hunk clipped to fit 4 KB: run the command for the whole diff"
	first := fc.hunks[0]
	cut := sort.Search(len(first), func(n int) bool {
		_, ok := with(clip(first, n+1), note)
		return !ok
	})
	diff := clip(first, cut)
	if i := strings.LastIndexByte(diff, '\n'); i >= 0 {
		diff = diff[:i+1] + "…"
	}
	if b, ok := with(diff, note); ok && len(diff) >= minDiff {
		*a = b
	}
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

// ruleFired names the bundle and package that made f, as rep names its bundles.
func ruleFired(rep *report.Report, f report.Finding) RuleFired {
	if f.Pack != "" {
		path := "upgradescope/" + f.Pack
		r := RuleFired{Pack: f.Pack, Packages: []string{"data." + strings.ReplaceAll(path, "/", ".")}}
		for _, b := range rep.Bundles {
			for _, root := range b.Roots {
				if path == root || strings.HasPrefix(path, root+"/") {
					r.Bundle = b.Name + " " + b.Revision
				}
			}
		}
		return r
	}
	var r RuleFired
	var rules *report.BundleInfo
	for i, b := range rep.Bundles {
		if slices.Contains(b.Roots, "upgradescope/rules") {
			rules = &rep.Bundles[i]
			r.Bundle = b.Name + " " + b.Revision
		}
	}
	// The packages are indexed from the embedded rules bundle's METADATA; a rules bundle
	// read from elsewhere may declare others.
	if rules == nil || rules.Source != "embedded" || rules.Revision != policies.RulesRevision {
		r.Note = "built-in rules from a bundle other than the embedded one: their packages are not indexed here"
		return r
	}
	pkgs, err := embeddedRulePackages()
	if err != nil {
		r.Note = "the rules bundle's packages could not be read: " + err.Error()
		return r
	}
	var title string
	for _, p := range pkgs {
		if slices.Contains(p.categories, f.Category) {
			r.Packages = append(r.Packages, p.path)
			title = p.title
		}
	}
	switch len(r.Packages) {
	case 0:
		r.Note = "no package of the rules bundle declares category " + f.Category
	case 1:
		r.Title = title
	default:
		r.Note = "each of these packages makes " + f.Category + " findings; the key's shape tells which (docs/concepts.md)"
	}
	return r
}

// rulePackage is a package of the rules bundle and what its METADATA declares.
type rulePackage struct {
	path, title string
	categories  []string
}

// embeddedRulePackages reads the embedded rules bundle's packages once (about 50 ms): their
// custom.category METADATA says which categories of findings each makes.
var embeddedRulePackages = sync.OnceValues(func() ([]rulePackage, error) {
	b, err := bundles.ReadFS(policies.Rules)
	if err != nil {
		return nil, err
	}
	var out []rulePackage
	for _, m := range b.Modules {
		path := m.Parsed.Package.Path.String()
		if !strings.HasPrefix(path, "data.upgradescope.rules.") {
			continue
		}
		for _, a := range m.Parsed.Annotations {
			if a.Scope != "package" {
				continue
			}
			p := rulePackage{path: path, title: a.Title}
			if c, ok := a.Custom["category"].(string); ok {
				for _, c := range strings.Split(c, ",") {
					p.categories = append(p.categories, strings.TrimSpace(c))
				}
			}
			out = append(out, p)
		}
	}
	slices.SortFunc(out, func(a, b rulePackage) int { return strings.Compare(a.path, b.path) })
	return out, nil
})

// fixPlanned is what fix would do for one finding, whole; the answer bounds it.
type fixPlanned struct {
	command, changes              string
	files, objects, manual, notes []string
	// hunks are the diff's, the first of each file with its header.
	hunks    []string
	diffNote string
}

// fixFor plans upgradescope fix over the files sc read, at f's target, as the CLI plans it,
// and keeps what concerns f's objects. Nothing is written.
func (s *Server) fixFor(sc *scanned, f report.Finding) *fixPlanned {
	fp := &fixPlanned{command: fmt.Sprintf("upgradescope fix --files %s --target %s", s.shown(sc.files), f.Target)}
	plan, err := s.planFix(sc.files, f.Target)
	if err != nil {
		fp.changes = "not planned: " + err.Error()
		return fp
	}
	mine := map[string]bool{}
	for _, o := range f.Objects {
		if o.File != "" {
			mine[o.File+":"+strconv.Itoa(o.Line)] = true
		}
	}
	shared := false
	sub := &fix.Plan{Root: plan.Root, Target: plan.Target}
	for _, file := range plan.Files {
		var docs []fix.Doc
		for _, d := range file.Docs {
			if mine[file.Path+":"+strconv.Itoa(d.ObjectLine())] {
				docs = append(docs, d)
			}
		}
		if len(docs) == 0 {
			continue
		}
		hunks, sh := findingHunks(file, docs)
		fp.hunks, shared = append(fp.hunks, hunks...), shared || sh
		file.Docs = docs
		sub.Files = append(sub.Files, file)
	}
	rep := sub.Report()
	converted := 0
	for _, d := range rep.Documents {
		line := fmt.Sprintf("%s:%d %s %s: ", d.File, d.Line, d.Kind, strings.Trim(d.Namespace+"/"+d.Name, "/"))
		switch {
		case d.Converted:
			converted++
			line += d.From + " → " + d.To
			if !slices.Contains(fp.files, d.File) {
				fp.files = append(fp.files, d.File)
			}
		case d.Skip != "":
			line += "left for a person: " + d.Skip
		default:
			line += d.From + ": left for a person"
		}
		fp.objects = append(fp.objects, line)
	}
	for _, it := range rep.Manual {
		fp.manual = append(fp.manual, it.String())
	}
	for _, it := range rep.Notes {
		fp.notes = append(fp.notes, it.String())
	}
	fp.changes = fixSentence(f, len(rep.Documents), converted, len(fp.files), len(rep.Manual))
	if shared {
		fp.diffNote = "a hunk shown also changes another finding's object near this one"
	}
	return fp
}

// fixSentence says what fix does for f: docs of its objects fix names, converted of them in
// files files, manual items left for a person.
func fixSentence(f report.Finding, docs, converted, files, manual int) string {
	var s string
	switch {
	case len(f.Objects) == 0:
		return "upgradescope fix changes nothing for this finding: it names no object in the files"
	case docs == 0:
		return fmt.Sprintf("upgradescope fix changes nothing for this finding: it rewrites only objects at an API %s does not serve, and this finding's objects are not", f.Target)
	case converted > 0:
		s = fmt.Sprintf("upgradescope fix would rewrite %s in %s", report.Count(converted, "object"), report.Count(files, "file"))
	default:
		s = "upgradescope fix would rewrite none of this finding's objects"
	}
	if manual > 0 {
		s += fmt.Sprintf("; %s for a person, left untouched", report.Count(manual, "item"))
	}
	if f.ObjectsOmitted > 0 {
		s += fmt.Sprintf(" (for the %d objects the finding lists; the %d it omits are not matched: run the command for all)", len(f.Objects), f.ObjectsOmitted)
	}
	return s
}

// planFix plans fix over abs, a path the scan read under the root, as upgradescope fix
// --files abs --target target plans it: the same files, exclusions and byte budget, the
// engine's knowledge base. fix's walk follows a symlinked file wherever it leads, so a file
// leading out of the root (the scan skipped it) is refused before anything is read.
func (s *Server) planFix(abs, target string) (*fix.Plan, error) {
	ex, err := s.exclusions(abs)
	if err != nil {
		return nil, err
	}
	listing, err := files.List(abs, s.cfg.Files.MaxBytes, ex)
	if err != nil {
		return nil, err
	}
	for _, p := range listing.Paths {
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			return nil, err
		}
		if !inside(s.root, real) {
			return nil, fmt.Errorf("%s leads out of the root, and fix would read it: run the command yourself", s.shown(p))
		}
	}
	return fix.Scan(abs, fix.Options{KB: s.cfg.Engine.KB(), Target: target, MaxBytes: s.cfg.Files.MaxBytes,
		SkipServed: true, Retain: fix.RetainDiff, Exclude: ex})
}

// findingHunks are the hunks of file's diff that change docs, the first with the file's
// header: those with a changed line in one of them. A changed line belongs to the named document it falls in (the one starting at
// or before it; an added line to the line before it), and shared says a kept hunk changes
// another document too.
func findingHunks(file fix.File, docs []fix.Doc) ([]string, bool) {
	var buf bytes.Buffer
	one := fix.Plan{Files: []fix.File{file}}
	if err := one.WriteDiff(&buf); err != nil || buf.Len() == 0 {
		return nil, false
	}
	var starts []int
	for _, d := range file.Docs {
		starts = append(starts, d.Line)
	}
	slices.Sort(starts)
	owner := func(line int) int {
		i, found := slices.BinarySearch(starts, line)
		switch {
		case found:
			return starts[i]
		case i == 0:
			return 0
		}
		return starts[i-1]
	}
	ours := map[int]bool{}
	for _, d := range docs {
		ours[d.Line] = true
	}
	lines := strings.SplitAfter(buf.String(), "\n")
	var out []string
	head, shared := "", false
	for i := 0; i < len(lines); {
		if !strings.HasPrefix(lines[i], "@@") {
			head += lines[i]
			i++
			continue
		}
		old := hunkStart(lines[i])
		j, mine, theirs := i+1, false, false
		for ; j < len(lines) && !strings.HasPrefix(lines[j], "@@"); j++ {
			l := lines[j]
			switch {
			case strings.HasPrefix(l, "-"):
				mine, theirs = mine || ours[owner(old)], theirs || !ours[owner(old)]
				old++
			case strings.HasPrefix(l, "+"):
				at := owner(old - 1)
				if at == 0 { // added before the first document's first line
					at = owner(old)
				}
				mine, theirs = mine || ours[at], theirs || !ours[at]
			case l != "":
				old++
			}
		}
		if mine {
			out = append(out, head+strings.Join(lines[i:j], ""))
			head, shared = "", shared || theirs
		}
		i = j
	}
	return out, shared
}

// hunkStart is the first old line of a unified diff hunk header "@@ -a,b +c,d @@".
func hunkStart(header string) int {
	rest, _ := strings.CutPrefix(header, "@@ -")
	end := strings.IndexAny(rest, ", ")
	if end < 0 {
		return 0
	}
	n, _ := strconv.Atoi(rest[:end])
	return n
}
