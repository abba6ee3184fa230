package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/upgradescope/upgradescope/policies"
)

// TestEveryBuiltInFindingsRuleDeclaresCompleteFamilies holds the built-in packs to the
// convention docs/checks.md is generated from: every findings rule declares its families (or
// a coverage notice), every family has every field, ids are unique, capabilities are ones
// the inventory defines, and every probe of the knowledge base belongs to a family. A new
// rule, pack or behaviour entry cannot land undocumented.
func TestEveryBuiltInFindingsRuleDeclaresCompleteFamilies(t *testing.T) {
	page, err := build(context.Background(), "../../inventory")
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Families) == 0 {
		t.Fatal("the built-in packs declare no family")
	}
	for _, id := range []string{"removed-api-objects", "kubelet-skew", "in-tree-volumes-csi-migrated"} {
		if !hasFamily(page.Families, id) {
			t.Errorf("family %s is missing from the built-in packs' declarations", id)
		}
	}
	for _, n := range page.Notices {
		if hasFamily(page.Families, n.Category) {
			t.Errorf("coverage notice %s is counted as a family", n.Category)
		}
	}
}

// TestTheInventoryCapabilitiesAreReadFromItsConstants guards the parse of the inventory
// package: the names are the constants' values, with their doc comments.
func TestTheInventoryCapabilitiesAreReadFromItsConstants(t *testing.T) {
	caps, err := InventoryCapabilities("../../inventory")
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]Capability{}
	for _, c := range caps {
		byName[c.Name] = c
	}
	for name, constant := range map[string]string{
		"api-usage": "CapAPIUsage", "disruption-budgets": "CapDisruptionBudgets", "kubelet-config": "CapKubeletConfig",
		"audit-log": "CapAuditLog", // declared alone, its comment on the declaration
	} {
		c, ok := byName[name]
		if !ok || c.Constant != constant {
			t.Errorf("capability %s: got %+v, want it read from inventory.%s", name, c, constant)
		}
		if c.Doc == "" || strings.HasPrefix(c.Doc, constant) {
			t.Errorf("capability %s: doc %q, want the constant's doc comment without its label", name, c.Doc)
		}
	}
	if _, err := InventoryCapabilities(t.TempDir()); err == nil {
		t.Error("a directory without Cap* constants was read as the inventory package")
	}
}

// A pack that covers the test's one kb probe, so each case below shows only its own problem.
const basePack = `package upgradescope.rules.base

# METADATA
# custom:
#   families:
#     - id: base-family
#       title: A family reading the probe
#       category: base
#       reads: [inventory.apiUsage]
#       capabilities: [api-usage, probes/kb/p1]
#       modes: [files, cluster]
#       severity: blocker always
#       citations: [https://kubernetes.io/docs/reference/using-api/deprecation-guide/]
findings contains 1 if true
`

// family writes one METADATA block declaring a family, with fields replaced or, when the
// value is "", left out.
func family(id string, fields map[string]string) string {
	lines := []string{"# METADATA", "# custom:", "#   families:", "#     - id: " + id}
	for _, kv := range [][2]string{
		{"title", "A failure mode"}, {"category", "cat"}, {"reads", "[inventory.apiUsage]"},
		{"capabilities", "[api-usage]"}, {"modes", "[files, cluster]"}, {"severity", "blocker always"},
		{"citations", "[https://kubernetes.io/releases/version-skew-policy/]"},
	} {
		v, ok := fields[kv[0]]
		if !ok {
			v = kv[1]
		}
		if v != "" {
			lines = append(lines, "#       "+kv[0]+": "+v)
		}
	}
	for k, v := range fields {
		if !strings.Contains("title category reads capabilities modes severity citations", k) {
			lines = append(lines, "#       "+k+": "+v)
		}
	}
	return strings.Join(lines, "\n") + "\n"
}

func pack(name, body string) string {
	return "package upgradescope.rules." + name + "\n\n" + body
}

func readPacks(t *testing.T, known Known, packs ...string) *Catalog {
	t.Helper()
	fsys := fstest.MapFS{"upgradescope/rules/base/base.rego": {Data: []byte(basePack)}}
	for i, p := range packs {
		fsys["upgradescope/rules/p"+string(rune('a'+i))+"/p.rego"] = &fstest.MapFile{Data: []byte(p)}
	}
	c, err := Read(fsys, known)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func testKnown() Known {
	return Known{
		Capabilities: map[string]bool{"api-usage": true, "versions": true},
		Probes:       map[string]bool{"kb/p1": true},
	}
}

func TestTheConventionRefuses(t *testing.T) {
	rule := "findings contains 1 if true\n"
	cases := []struct {
		name  string
		packs []string
		known func(*Known)
		want  string
	}{
		{name: "a findings rule that declares no family and no notice",
			packs: []string{pack("a", rule)},
			want:  "declares no family (custom.families) and no notice (custom.notice)"},
		{name: "a family without a title",
			packs: []string{pack("a", family("f", map[string]string{"title": ""})+rule)},
			want:  `family "f": no title`},
		{name: "a family without citations",
			packs: []string{pack("a", family("f", map[string]string{"citations": ""})+rule)},
			want:  `family "f": no citations`},
		{name: "a family without a severity rule",
			packs: []string{pack("a", family("f", map[string]string{"severity": ""})+rule)},
			want:  `family "f": no severity`},
		{name: "an id that is not kebab-case",
			packs: []string{pack("a", family("Removed_API", nil)+rule)},
			want:  "the id is not kebab-case"},
		{name: "an id two packs declare",
			packs: []string{pack("a", family("f", nil)+rule), pack("b", family("f", nil)+rule)},
			want:  `family "f" is declared again`},
		{name: "an id declared twice in a pack with different fields",
			packs: []string{pack("a", family("f", nil)+rule+"\n"+family("f", map[string]string{"title": "Another"})+"findings contains 2 if true\n")},
			want:  `family "f" is declared again`},
		{name: "a reference to a family no rule of the pack declares",
			packs: []string{pack("a", "# METADATA\n# custom:\n#   families: [{id: nowhere}]\n"+rule)},
			want:  `family "nowhere" is referred to but not declared in full in a`},
		{name: "a capability the inventory does not define",
			packs: []string{pack("a", family("f", map[string]string{"capabilities": "[drain-everything]"})+rule)},
			want:  `capability "drain-everything" is not one the inventory defines`},
		{name: "a probe the built-in bundles do not declare",
			packs: []string{pack("a", family("f", map[string]string{"capabilities": "[probes/kb/p9]"})+rule)},
			want:  `capability "probes/kb/p9" names a probe the built-in bundles do not declare`},
		{name: "a probe of the knowledge base no family reads",
			known: func(k *Known) { k.Probes["kb/p2"] = true },
			want:  "probe kb/p2 is read by no family"},
		{name: "a misspelt field",
			packs: []string{pack("a", family("f", map[string]string{"capability": "[api-usage]"})+rule)},
			want:  `unknown field "capability"`},
		{name: "a mode that is neither files nor cluster",
			packs: []string{pack("a", family("f", map[string]string{"modes": "[live]"})+rule)},
			want:  `mode "live" is neither files nor cluster`},
		{name: "a citation that is not an https URL",
			packs: []string{pack("a", family("f", map[string]string{"citations": "[KEP-4006]"})+rule)},
			want:  `citation "KEP-4006" is not an https URL`},
		{name: "a category the pack's METADATA does not list",
			packs: []string{"# METADATA\n# title: A\n# custom:\n#   category: drain\n" + pack("a", family("f", map[string]string{"category": "webhook"})+rule)},
			want:  `category "webhook" is not one the pack's METADATA lists (custom.category: drain)`},
		{name: "a rule that declares families and a notice",
			packs: []string{pack("a", strings.Replace(family("f", nil), "# custom:\n", "# custom:\n#   notice: {category: cat, why: cannot judge}\n", 1)+rule)},
			want:  "declares both families and a notice"},
		{name: "a notice that does not say why",
			packs: []string{pack("a", "# METADATA\n# custom:\n#   notice: {category: cat}\n"+rule)},
			want:  "needs the category of its findings and why they are not a failure mode"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			known := testKnown()
			if tc.known != nil {
				tc.known(&known)
			}
			c := readPacks(t, known, tc.packs...)
			if len(c.Problems) != 1 || !strings.Contains(c.Problems[0], tc.want) {
				t.Errorf("problems:\n  %s\nwant exactly one saying %q", strings.Join(c.Problems, "\n  "), tc.want)
			}
		})
	}
}

func TestAFamilyIsCountedOnceWhateverRulesMakeIt(t *testing.T) {
	cases := []struct {
		name string
		body string
	}{
		{name: "declared on one rule and referred to by id on another",
			body: family("f", nil) + "findings contains 1 if true\n\n# METADATA\n# custom:\n#   families: [{id: f}]\nfindings contains 2 if true\n"},
		{name: "declared identically on two rules of its pack",
			body: family("f", nil) + "findings contains 1 if true\n\n" + family("f", nil) + "findings contains 2 if true\n"},
		{name: "declared once for every findings rule with document scope",
			body: strings.Replace(family("f", nil), "# custom:", "# scope: document\n# custom:", 1) + "findings contains 1 if true\n\nfindings contains 2 if true\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := readPacks(t, testKnown(), pack("a", tc.body))
			if len(c.Problems) > 0 {
				t.Fatalf("problems: %s", strings.Join(c.Problems, "; "))
			}
			if n := countFamily(c.Families, "f"); n != 1 {
				t.Errorf("family f is listed %d times, want once", n)
			}
		})
	}
}

func TestACoverageNoticeIsListedNotCounted(t *testing.T) {
	notice := "# METADATA\n# custom:\n#   notice: {category: cat-no-data, why: nothing to judge}\n"
	c := readPacks(t, testKnown(), pack("a", notice+"findings contains 1 if true\n\n"+notice+"findings contains 2 if true\n"))
	if len(c.Problems) > 0 {
		t.Fatalf("problems: %s", strings.Join(c.Problems, "; "))
	}
	if len(c.Families) != 1 || c.Families[0].ID != "base-family" {
		t.Errorf("families %v, want the base family only", c.Families)
	}
	if len(c.Notices) != 1 || c.Notices[0].Category != "cat-no-data" || len(c.Notices[0].Where) != 2 || len(c.Notices[0].Files) != 1 {
		t.Errorf("notices %+v, want one notice of category cat-no-data made by two rules of one file", c.Notices)
	}
}

// TestThePageListsFamiliesByCategoryThenID checks the table's order, its count and that a
// value cannot break a row.
func TestThePageListsFamiliesByCategoryThenID(t *testing.T) {
	c := readPacks(t, testKnown(),
		pack("a", family("zeta", map[string]string{"category": "alpha"})+"findings contains 1 if true\n"),
		pack("b", family("beta", map[string]string{"category": "omega", "title": `"A | B"`})+"findings contains 1 if true\n"),
		pack("c", family("alpha", map[string]string{"category": "omega"})+"findings contains 1 if true\n"),
	)
	if len(c.Problems) > 0 {
		t.Fatalf("problems: %s", strings.Join(c.Problems, "; "))
	}
	var out bytes.Buffer
	if err := NewPage(c, nil, nil).Render(&out); err != nil {
		t.Fatal(err)
	}
	page := out.String()
	if !strings.Contains(page, "**4 check families**") || !strings.Contains(page, "## The families (4)") {
		t.Errorf("the page does not count 4 families:\n%s", page)
	}
	last := -1
	for _, id := range []string{"zeta", "base-family", "alpha", "beta"} { // alpha, base, omega, omega
		i := strings.Index(page, "| `"+id+"`<br>")
		if i < last {
			t.Errorf("family %s is out of order (category, then id)", id)
		}
		last = i
	}
	if !strings.Contains(page, `A \| B`) {
		t.Error("a pipe in a title is not escaped in its table cell")
	}
}

func TestCapabilityCellsFoldProbes(t *testing.T) {
	got := capabilityCell([]string{"versions", "probes/kb/a", "probes/kb/b"})
	if want := "`versions`, `probes/kb/…` (2): a, b"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := capabilityCell([]string{"probes/kb/a"}); got != "`probes/kb/a`" {
		t.Errorf("one probe: got %q", got)
	}
}

func TestReportRegoDecidesWhatIsRequired(t *testing.T) {
	required, err := Required(context.Background(), policies.Rules, policies.KB)
	if err != nil {
		t.Fatal(err)
	}
	if !required["files"]["api-usage"] || !required["cluster"]["api-usage"] {
		t.Error("api-usage is required in both modes by report.rego, but not here")
	}
	if required["files"]["versions"] || !required["cluster"]["versions"] {
		t.Errorf("versions: got files %v, cluster %v; report.rego requires it live only", required["files"]["versions"], required["cluster"]["versions"])
	}
}

func hasFamily(fs []Family, id string) bool { return countFamily(fs, id) > 0 }

func countFamily(fs []Family, id string) int {
	n := 0
	for _, f := range fs {
		if f.ID == id {
			n++
		}
	}
	return n
}
