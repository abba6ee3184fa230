package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/upgradescope/upgradescope/bundles"
)

// Family is one failure mode a built-in pack judges, as the METADATA of the rule that makes
// its findings declares it under custom.families.
type Family struct {
	ID           string   `json:"id"`
	Title        string   `json:"title"`
	Category     string   `json:"category"`
	Reads        []string `json:"reads"`
	Capabilities []string `json:"capabilities"`
	Modes        []string `json:"modes"`
	Severity     string   `json:"severity"`
	Citations    []string `json:"citations"`

	// Pack is the package that declares the family (apis for upgradescope.rules.apis), and
	// Where the file and line of the declaring rule.
	Pack  string `json:"-"`
	Where string `json:"-"`
}

// Notice is a findings rule that reports what could not be judged (custom.notice) rather
// than a failure mode: it is listed, and not counted as a family.
type Notice struct {
	Pack     string
	Category string
	Why      string
	// Where are the rules that make the notice's findings (file:line), Files their files.
	Where []string
	Files []string
}

// Catalog is what the built-in packs declare: their families sorted by category then id,
// their notices in pack order, and every way the declarations break the convention.
type Catalog struct {
	Families []Family
	Notices  []Notice
	Problems []string
}

// Known is what a family may name as a capability: the inventory's capability names, and the
// probes the built-in bundles declare (ids "kb/<id>", named "probes/kb/<id>").
type Known struct {
	Capabilities map[string]bool
	Probes       map[string]bool
}

// Capabilities a family may name besides the inventory's: the report's gap for a target past
// the knowledge base's horizon. Probes are named "probes/<probe id>".
const (
	capKBCoverage = "kb-coverage"
	probePrefix   = "probes/"
)

var (
	kebab = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)
	modes = map[string]bool{"files": true, "cluster": true}
)

// declaration is one entry of custom.families as written: every field, or the id alone to
// refer to a family declared in full on another findings rule of the same pack.
type declaration struct {
	ID           string   `json:"id"`
	Title        string   `json:"title"`
	Category     string   `json:"category"`
	Reads        []string `json:"reads"`
	Capabilities []string `json:"capabilities"`
	Modes        []string `json:"modes"`
	Severity     string   `json:"severity"`
	Citations    []string `json:"citations"`
}

func (d declaration) reference() bool {
	return d.Title == "" && d.Category == "" && d.Severity == "" &&
		len(d.Reads)+len(d.Capabilities)+len(d.Modes)+len(d.Citations) == 0
}

// Read reads the rule packs of the rules bundle in fsys (packages under upgradescope.rules)
// with OPA's bundle reader and annotation processing, and collects the families and notices
// their findings rules declare. It returns an error only when the bundle cannot be read;
// declarations that break the convention are the catalog's Problems.
func Read(fsys fs.FS, known Known) (*Catalog, error) {
	b, err := bundles.ReadFS(fsys)
	if err != nil {
		return nil, fmt.Errorf("read the rules bundle: %w", err)
	}
	modules := make([]*ast.Module, 0, len(b.Modules))
	for _, m := range b.Modules {
		modules = append(modules, m.Parsed)
	}
	sort.Slice(modules, func(i, j int) bool { return modules[i].Package.Location.File < modules[j].Package.Location.File })
	as, errs := ast.BuildAnnotationSet(modules)
	if len(errs) > 0 {
		return nil, fmt.Errorf("read the rules' annotations: %w", errs)
	}
	r := reader{known: known, as: as, declared: map[string]Family{}}
	for _, m := range modules {
		r.module(m)
	}
	return r.catalog(), nil
}

type reader struct {
	known    Known
	as       *ast.AnnotationSet
	declared map[string]Family
	refs     []reference
	notices  []Notice
	problems []string
	seen     map[*ast.Annotations]bool
}

type reference struct{ pack, id, where string }

func (r *reader) problem(where, format string, args ...any) {
	r.problems = append(r.problems, where+": "+fmt.Sprintf(format, args...))
}

// module reads the findings rules of one rule pack; other packages (the report, the library)
// make no findings.
func (r *reader) module(m *ast.Module) {
	path := m.Package.Path.String()
	pack, ok := strings.CutPrefix(path, "data.upgradescope.rules.")
	if !ok {
		return
	}
	categories := packCategories(r.as.GetPackageScope(m.Package))
	r.seen = map[*ast.Annotations]bool{}
	for _, rule := range m.Rules {
		if rule.Head.Ref().String() != "findings" {
			continue
		}
		r.findings(pack, categories, rule)
	}
}

// findings reads one findings rule: the families and the notice of its rule-scoped
// annotations and of the document-scoped one all findings rules of the pack share.
func (r *reader) findings(pack string, categories map[string]bool, rule *ast.Rule) {
	where := location(rule.Location)
	var families, notices int
	for _, ref := range r.as.Chain(rule) {
		a := ref.Annotations
		if a == nil || (a.Scope != "rule" && a.Scope != "document") {
			continue
		}
		if raw, ok := a.Custom["families"]; ok {
			families++
			if !r.seen[a] {
				r.declarations(pack, categories, location(a.Location), raw)
			}
		}
		if raw, ok := a.Custom["notice"]; ok {
			notices++
			if !r.seen[a] {
				r.notice(pack, categories, location(a.Location), raw)
			}
		}
		r.seen[a] = true
	}
	switch {
	case families == 0 && notices == 0:
		r.problem(where, "findings rule of %s declares no family (custom.families) and no notice (custom.notice)", pack)
	case families > 0 && notices > 0:
		r.problem(where, "findings rule of %s declares both families and a notice: a rule that judges a failure mode makes no coverage notices", pack)
	}
}

func (r *reader) declarations(pack string, categories map[string]bool, where string, raw any) {
	var decls []declaration
	if err := decodeStrict(raw, &decls); err != nil {
		r.problem(where, "custom.families of %s: %v", pack, err)
		return
	}
	if len(decls) == 0 {
		r.problem(where, "custom.families of %s is empty", pack)
	}
	for _, d := range decls {
		if d.ID == "" {
			r.problem(where, "a family of %s has no id", pack)
			continue
		}
		if d.reference() {
			r.refs = append(r.refs, reference{pack: pack, id: d.ID, where: where})
			continue
		}
		f := Family{
			ID: d.ID, Title: d.Title, Category: d.Category, Reads: d.Reads,
			Capabilities: d.Capabilities, Modes: d.Modes, Severity: strings.TrimSpace(d.Severity),
			Citations: d.Citations, Pack: pack, Where: where,
		}
		r.check(f, categories)
		if prev, ok := r.declared[f.ID]; ok {
			if prev.Pack != f.Pack || !sameDeclaration(prev, f) {
				r.problem(where, "family %q is declared again (first at %s): declare it once and refer to it from other rules of the pack with `- id: %s`", f.ID, prev.Where, f.ID)
			}
			continue
		}
		r.declared[f.ID] = f
	}
}

// check reports what a family declared in full lacks or gets wrong.
func (r *reader) check(f Family, categories map[string]bool) {
	at := func(format string, args ...any) {
		r.problem(f.Where, "family %q: %s", f.ID, fmt.Sprintf(format, args...))
	}
	if !kebab.MatchString(f.ID) {
		at("the id is not kebab-case")
	}
	for field, empty := range map[string]bool{
		"title": f.Title == "", "category": f.Category == "", "severity": f.Severity == "",
		"reads": len(f.Reads) == 0, "capabilities": len(f.Capabilities) == 0,
		"modes": len(f.Modes) == 0, "citations": len(f.Citations) == 0,
	} {
		if empty {
			at("no %s", field)
		}
	}
	if f.Category != "" && len(categories) > 0 && !categories[f.Category] {
		at("category %q is not one the pack's METADATA lists (custom.category: %s)", f.Category, strings.Join(slices.Sorted(maps.Keys(categories)), ", "))
	}
	for _, m := range f.Modes {
		if !modes[m] {
			at("mode %q is neither files nor cluster", m)
		}
	}
	for _, c := range f.Capabilities {
		if err := r.known.capability(c); err != nil {
			at("%v", err)
		}
	}
	for _, c := range f.Citations {
		if u, err := url.Parse(c); err != nil || u.Scheme != "https" || u.Host == "" {
			at("citation %q is not an https URL", c)
		}
	}
}

func (r *reader) notice(pack string, categories map[string]bool, where string, raw any) {
	var n struct {
		Category string `json:"category"`
		Why      string `json:"why"`
	}
	if err := decodeStrict(raw, &n); err != nil {
		r.problem(where, "custom.notice of %s: %v", pack, err)
		return
	}
	n.Why = strings.TrimSpace(n.Why)
	switch {
	case n.Category == "" || n.Why == "":
		r.problem(where, "custom.notice of %s needs the category of its findings and why they are not a failure mode (category, why)", pack)
		return
	case len(categories) > 0 && !categories[n.Category]:
		r.problem(where, "notice of %s: category %q is not one the pack's METADATA lists", pack, n.Category)
	}
	for i, prev := range r.notices {
		if prev.Pack == pack && prev.Category == n.Category && prev.Why == n.Why {
			r.notices[i].Where = append(r.notices[i].Where, where)
			if file := fileOf(where); !slices.Contains(prev.Files, file) {
				r.notices[i].Files = append(r.notices[i].Files, file)
			}
			return
		}
	}
	r.notices = append(r.notices, Notice{Pack: pack, Category: n.Category, Why: n.Why, Where: []string{where}, Files: []string{fileOf(where)}})
}

// capability says why c is not a capability a family may name.
func (k Known) capability(c string) error {
	switch {
	case k.Capabilities[c], c == capKBCoverage:
		return nil
	case strings.HasPrefix(c, probePrefix):
		if id := strings.TrimPrefix(c, probePrefix); !k.Probes[id] {
			return fmt.Errorf("capability %q names a probe the built-in bundles do not declare", c)
		}
		return nil
	}
	return fmt.Errorf("capability %q is not one the inventory defines (inventory.Cap*), probes/<id> or %s", c, capKBCoverage)
}

func (r *reader) catalog() *Catalog {
	c := &Catalog{Notices: r.notices}
	for _, ref := range r.refs {
		if f, ok := r.declared[ref.id]; !ok || f.Pack != ref.pack {
			r.problem(ref.where, "family %q is referred to but not declared in full in %s", ref.id, ref.pack)
		}
	}
	named := map[string]bool{}
	for _, f := range r.declared {
		c.Families = append(c.Families, f)
		for _, cap := range f.Capabilities {
			named[cap] = true
		}
	}
	// A data-driven rule judges entries the knowledge base adds without a rule change: every
	// probe it declares must belong to a family, or an entry slips in undocumented.
	for _, id := range slices.Sorted(maps.Keys(r.known.Probes)) {
		if !named[probePrefix+id] {
			r.problem("policies/kb", "probe %s is read by no family: list %s%s in the capabilities of the family its entry belongs to", id, probePrefix, id)
		}
	}
	sort.Slice(c.Families, func(i, j int) bool {
		a, b := c.Families[i], c.Families[j]
		if a.Category != b.Category {
			return a.Category < b.Category
		}
		return a.ID < b.ID
	})
	sort.Strings(r.problems)
	c.Problems = r.problems
	return c
}

// packCategories reads the categories a pack's package METADATA lists (custom.category, a
// comma-separated string or a list); none when it lists none.
func packCategories(a *ast.Annotations) map[string]bool {
	out := map[string]bool{}
	if a == nil {
		return out
	}
	switch v := a.Custom["category"].(type) {
	case string:
		for _, c := range strings.Split(v, ",") {
			if c = strings.TrimSpace(c); c != "" {
				out[c] = true
			}
		}
	case []any:
		for _, c := range v {
			if s, ok := c.(string); ok {
				out[strings.TrimSpace(s)] = true
			}
		}
	}
	return out
}

// decodeStrict decodes a METADATA value (YAML decoded to JSON values) into out, refusing
// fields out does not have, so a misspelt field is an error rather than a silent omission.
func decodeStrict(raw, out any) error {
	data, err := json.Marshal(raw)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(out)
}

func sameDeclaration(a, b Family) bool {
	a.Where, b.Where = "", ""
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// location names a rule or annotation as policies/rules/<path>:<line>.
func location(l *ast.Location) string {
	if l == nil {
		return "?"
	}
	return fmt.Sprintf("policies/rules/%s:%d", strings.TrimPrefix(l.File, "/"), l.Row)
}

// fileOf is the file of a file:line location: the page names files, not lines, so an edit
// that moves a rule does not make it stale.
func fileOf(where string) string {
	if i := strings.LastIndexByte(where, ':'); i > 0 {
		return where[:i]
	}
	return where
}
