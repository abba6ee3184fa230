package registry

import (
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"strings"
)

// ProviderFiles are the managed-Kubernetes support calendars (EKS, GKE, AKS).
//
//go:embed providers/*.yaml
var ProviderFiles embed.FS

// Provider is one managed Kubernetes offering's support calendar: when each minor leaves
// standard support and when its extended support ends, with the list price of the extended
// period where one can be cited.
type Provider struct {
	SchemaVersion       int                        `yaml:"schema_version" json:"-"`
	ID                  string                     `yaml:"id" json:"id"`
	Name                string                     `yaml:"display_name" json:"name"`
	EndOfLifeProduct    string                     `yaml:"endoflife_product" json:"-"`
	ExtendedSupportNote string                     `yaml:"extended_support_note" json:"extendedSupportNote"`
	Citations           []string                   `yaml:"citations" json:"citations"`
	Pricing             *Pricing                   `yaml:"pricing" json:"pricing,omitempty"`
	Versions            []ProviderVersion          `yaml:"versions" json:"-"`
	ByMinor             map[string]ProviderVersion `yaml:"-" json:"versions"`
}

// Pricing is a cited list price per cluster-hour in standard and in extended support.
type Pricing struct {
	Currency               string   `yaml:"currency" json:"currency"`
	StandardPerClusterHour float64  `yaml:"standard_per_cluster_hour" json:"standardPerClusterHour"`
	ExtendedPerClusterHour float64  `yaml:"extended_per_cluster_hour" json:"extendedPerClusterHour"`
	AsOf                   string   `yaml:"as_of" json:"asOf"`
	Note                   string   `yaml:"note" json:"note,omitempty"`
	Citations              []string `yaml:"citations" json:"citations"`
}

// ProviderVersion is one minor's dates; ExtendedEnd is empty where none is published.
type ProviderVersion struct {
	Minor       string `yaml:"minor" json:"minor"`
	StandardEnd string `yaml:"standard_end" json:"standardEnd"`
	ExtendedEnd string `yaml:"extended_end" json:"extendedEnd,omitempty"`
}

// LoadProviders reads and validates every providers/*.yaml calendar of fsys, keyed by id.
func LoadProviders(fsys fs.FS) (map[string]Provider, error) {
	out, problems := loadAll(fsys, "providers/*.yaml", func(p *Provider) (string, []string) { return p.ID, validateProvider(p) })
	if len(problems) > 0 {
		sort.Strings(problems)
		return nil, fmt.Errorf("invalid provider calendars:\n  %s", strings.Join(problems, "\n  "))
	}
	return out, nil
}

// validateProvider checks every claim and indexes the versions by minor.
func validateProvider(p *Provider) []string {
	var problems []string
	add := func(field, format string, args ...any) {
		problems = append(problems, field+": "+fmt.Sprintf(format, args...))
	}
	if p.SchemaVersion != 1 {
		add("schema_version", "%d is not 1", p.SchemaVersion)
	}
	if p.Name == "" {
		add("display_name", "required")
	}
	checkCitations(add, "citations", p.Citations)
	if pr := p.Pricing; pr != nil {
		checkDate(add, "pricing.as_of", pr.AsOf, false)
		checkCitations(add, "pricing.citations", pr.Citations)
		if pr.Currency == "" || pr.StandardPerClusterHour < 0 || pr.ExtendedPerClusterHour < pr.StandardPerClusterHour {
			add("pricing", "needs a currency and an extended price at least the standard one")
		}
	}
	p.ByMinor = map[string]ProviderVersion{}
	for i, v := range p.Versions {
		f := fmt.Sprintf("versions[%d]", i)
		if !minorRE.MatchString(v.Minor) {
			add(f+".minor", "%q is not a minor such as 1.33", v.Minor)
		}
		if _, dup := p.ByMinor[v.Minor]; dup {
			add(f+".minor", "%s is listed twice", v.Minor)
		}
		checkDate(add, f+".standard_end", v.StandardEnd, false)
		if v.ExtendedEnd != "" {
			checkDate(add, f+".extended_end", v.ExtendedEnd, false)
			if v.ExtendedEnd < v.StandardEnd {
				add(f+".extended_end", "%s is before standard_end %s", v.ExtendedEnd, v.StandardEnd)
			}
		}
		p.ByMinor[v.Minor] = v
	}
	return problems
}
