package mcpserver

import (
	"slices"
	"strings"
	"sync"

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
