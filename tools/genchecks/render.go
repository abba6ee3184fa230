package main

import (
	_ "embed"
	"fmt"
	"io"
	"strings"
	"text/template"
)

//go:embed checks.md.tmpl
var page string

// Page is what docs/checks.md is rendered from.
type Page struct {
	Families     []Family
	Notices      []Notice
	Capabilities []Capability
	// Categories counts the families by category, in category order.
	Categories []CategoryCount
}

// CategoryCount is how many families one category has.
type CategoryCount struct {
	Category string
	Count    int
}

// NewPage puts a catalog and the inventory's capabilities, with what report.rego requires,
// in the order the page lists them.
func NewPage(c *Catalog, caps []Capability, required map[string]map[string]bool) Page {
	p := Page{Families: c.Families, Notices: c.Notices}
	for _, cap := range caps {
		cap.Files = required["files"][cap.Name]
		cap.Cluster = required["cluster"][cap.Name]
		p.Capabilities = append(p.Capabilities, cap)
	}
	for _, f := range c.Families {
		if n := len(p.Categories); n > 0 && p.Categories[n-1].Category == f.Category {
			p.Categories[n-1].Count++
			continue
		}
		p.Categories = append(p.Categories, CategoryCount{Category: f.Category, Count: 1})
	}
	return p
}

var funcs = template.FuncMap{
	"cell":         cell,
	"code":         func(s string) string { return "`" + strings.ReplaceAll(s, "`", "") + "`" },
	"codes":        codes,
	"capabilities": capabilityCell,
	"links":        links,
	"required":     required,
	"inc":          func(i int) int { return i + 1 },
}

// Render writes the page.
func (p Page) Render(w io.Writer) error {
	t, err := template.New("checks.md").Funcs(funcs).Parse(page)
	if err != nil {
		return fmt.Errorf("parse the page template: %w", err)
	}
	return t.Execute(w, p)
}

// cell is text made safe for one Markdown table cell: one line, pipes escaped.
func cell(s string) string {
	return strings.ReplaceAll(strings.Join(strings.Fields(s), " "), "|", `\|`)
}

func codes(items []string) string {
	out := make([]string, len(items))
	for i, s := range items {
		out[i] = "`" + cell(strings.ReplaceAll(s, "`", "")) + "`"
	}
	return strings.Join(out, ", ")
}

// capabilityCell lists a family's capabilities, its probes folded into one item so a family
// that reads twenty of them stays readable: `probes/kb/…` (n): id, id, ….
func capabilityCell(caps []string) string {
	var plain, probes []string
	for _, c := range caps {
		if id, ok := strings.CutPrefix(c, probePrefix+"kb/"); ok {
			probes = append(probes, id)
			continue
		}
		plain = append(plain, c)
	}
	out := codes(plain)
	if len(probes) > 0 {
		if out != "" {
			out += ", "
		}
		if len(probes) == 1 {
			return out + "`" + probePrefix + "kb/" + probes[0] + "`"
		}
		out += fmt.Sprintf("`%skb/…` (%d): %s", probePrefix, len(probes), strings.Join(probes, ", "))
	}
	return out
}

func links(urls []string) string {
	out := make([]string, len(urls))
	for i, u := range urls {
		out[i] = "<" + cell(u) + ">"
	}
	return strings.Join(out, "<br>")
}

func required(r bool) string {
	if r {
		return "required"
	}
	return "optional"
}
