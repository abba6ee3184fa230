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
		return customRule(rep, f)
	}
	r, ok := rulesBundle(rep)
	if !ok {
		return r
	}
	pkgs, err := embeddedRulePackages()
	if err != nil {
		r.Note = "the rules bundle's packages could not be read: " + err.Error()
		return r
	}
	var title string
	r.Packages, title = makers(pkgs, f)
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

// customRule names the custom pack that made f: the package its pack field spells, in the
// bundle rooted at it.
func customRule(rep *report.Report, f report.Finding) RuleFired {
	path := "upgradescope/" + f.Pack
	r := RuleFired{Pack: f.Pack, Packages: []string{"data." + strings.ReplaceAll(path, "/", ".")}}
	for _, b := range rep.Bundles {
		for _, root := range b.Roots {
			if path == root || strings.HasPrefix(path, root+"/") {
				r.Bundle = bundleLine(b.Name, b.Revision)
			}
		}
	}
	return r
}

// rulesBundle names rep's built-in rules bundle, and says whether its packages are the
// embedded bundle's, which are indexed here; a rules bundle read from elsewhere may declare
// others, and the note says so.
func rulesBundle(rep *report.Report) (RuleFired, bool) {
	var r RuleFired
	var rules *report.BundleInfo
	for i, b := range rep.Bundles {
		if slices.Contains(b.Roots, "upgradescope/rules") {
			rules = &rep.Bundles[i]
			r.Bundle = bundleLine(b.Name, b.Revision)
		}
	}
	if rules == nil || rules.Source != "embedded" || rules.Revision != policies.RulesRevision {
		r.Note = "built-in rules from a bundle other than the embedded one: their packages are not indexed here"
		return r, false
	}
	return r, true
}

// makers are the packages of pkgs that may have made f, and the title of the first: of those
// declaring f's category, the ones whose key literal matches most of f's key (helm's removed-api
// keys start "removed-api/helm-release/", the apis pack's "removed-api/").
func makers(pkgs []rulePackage, f report.Finding) ([]string, string) {
	best := -1
	var paths []string
	var title string
	for _, p := range pkgs {
		if !slices.Contains(p.categories, f.Category) {
			continue
		}
		switch n := p.matches(f.Key); {
		case n > best:
			best, paths, title = n, []string{p.path}, p.title
		case n == best:
			paths = append(paths, p.path)
		}
	}
	return paths, title
}

// rulePackage is a package of the rules bundle: what its METADATA declares, and how its
// findings' keys start.
type rulePackage struct {
	path, title string
	categories  []string
	// keys are the literals of the keys its findings rules write: a string, a sprintf's
	// format, "" for a key built otherwise (it may be anything).
	keys []string
}

// matches is the length of the longest literal start of p's keys that key starts with and
// has the shape of, -1 for none: as many "/"-separated segments as the literal, or at least
// as many when it ends with a verb, whose value may hold "/" ("chart-incompat/%s/%s/%s" is
// not "chart-incompat/istio/1.19").
func (p rulePackage) matches(key string) int {
	n := -1
	for _, k := range p.keys {
		if k == "" { // built otherwise: it may be anything
			n = max(n, 0)
			continue
		}
		start, _, verb := strings.Cut(k, "%")
		if !strings.HasPrefix(key, start) {
			continue
		}
		segments, want := strings.Count(key, "/"), strings.Count(k, "/")
		if segments == want || verb && strings.HasSuffix(k, "%s") && segments > want {
			n = max(n, len(start))
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
					p.keys = append(p.keys, keyLiteral(v))
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

// keyLiteral is a key term's literal: a string, sprintf's format, "" for anything else.
func keyLiteral(v *ast.Term) string {
	switch x := v.Value.(type) {
	case ast.String:
		return string(x)
	case ast.Call:
		if len(x) > 1 && x[0].String() == "sprintf" {
			if format, ok := x[1].Value.(ast.String); ok {
				return string(format)
			}
		}
	}
	return ""
}
