package mcpserver

import (
	"slices"
	"strings"
	"sync"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/upgradescope/upgradescope/bundles"
	"github.com/upgradescope/upgradescope/policies"
	"github.com/upgradescope/upgradescope/report"
)

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
	// Of the packages declaring the category, those whose key literal matches most of f's key:
	// helm's removed-api keys start "removed-api/helm-release/", the apis pack's "removed-api/".
	best := -1
	var title string
	for _, p := range pkgs {
		if !slices.Contains(p.categories, f.Category) {
			continue
		}
		n := p.matches(f.Key)
		switch {
		case n > best:
			best, r.Packages, title = n, []string{p.path}, p.title
		case n == best:
			r.Packages = append(r.Packages, p.path)
		}
	}
	switch len(r.Packages) {
	case 0:
		r.Note = "no package of the rules bundle declares category " + f.Category
	case 1:
		r.Title = title
	default:
		r.Note = "each of these packages makes " + f.Category + " findings with keys like this one"
	}
	return r
}

// rulePackage is a package of the rules bundle: what its METADATA declares, and how its
// findings' keys start.
type rulePackage struct {
	path, title string
	categories  []string
	// keys are the literal starts of the keys its findings rules write: a string's whole, a
	// sprintf's format up to its first verb, "" for a key built otherwise (it may be anything).
	keys []string
}

// matches is the length of the longest of p's key starts that f's key starts with, -1 for none.
func (p rulePackage) matches(key string) int {
	n := -1
	for _, k := range p.keys {
		if strings.HasPrefix(key, k) {
			n = max(n, len(k))
		}
	}
	return n
}

// embeddedRulePackages reads the embedded rules bundle's packages once (about 50 ms): their
// custom.category METADATA says which categories of findings each makes, the "key" fields of
// their object literals how those findings' keys start.
var embeddedRulePackages = sync.OnceValues(func() ([]rulePackage, error) {
	b, err := bundles.ReadFS(policies.Rules)
	if err != nil {
		return nil, err
	}
	byPath := map[string]*rulePackage{}
	for _, m := range b.Modules {
		path := m.Parsed.Package.Path.String()
		if !strings.HasPrefix(path, "data.upgradescope.rules.") {
			continue
		}
		p := byPath[path]
		if p == nil {
			p = &rulePackage{path: path}
			byPath[path] = p
		}
		for _, a := range m.Parsed.Annotations {
			if a.Scope != "package" {
				continue
			}
			p.title = a.Title
			if c, ok := a.Custom["category"].(string); ok {
				for _, c := range strings.Split(c, ",") {
					p.categories = append(p.categories, strings.TrimSpace(c))
				}
			}
		}
		ast.WalkTerms(m.Parsed, func(t *ast.Term) bool {
			if obj, ok := t.Value.(ast.Object); ok {
				if v := obj.Get(ast.InternedTerm("key")); v != nil {
					p.keys = append(p.keys, keyStart(v))
				}
			}
			return false
		})
	}
	out := make([]rulePackage, 0, len(byPath))
	for _, p := range byPath {
		out = append(out, *p)
	}
	slices.SortFunc(out, func(a, b rulePackage) int { return strings.Compare(a.path, b.path) })
	return out, nil
})

// keyStart is the literal start of a key term: a string whole, sprintf's format up to its
// first verb, "" for anything else.
func keyStart(v *ast.Term) string {
	switch x := v.Value.(type) {
	case ast.String:
		return string(x)
	case ast.Call:
		if len(x) > 1 && x[0].String() == "sprintf" {
			if format, ok := x[1].Value.(ast.String); ok {
				before, _, _ := strings.Cut(string(format), "%")
				return before
			}
		}
	}
	return ""
}
