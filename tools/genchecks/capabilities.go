package main

import (
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/open-policy-agent/opa/v1/rego"

	"github.com/upgradescope/upgradescope/bundles"
	"github.com/upgradescope/upgradescope/kb"
)

// Capability is one capability the inventory defines: its name, the doc comment of its
// constant, and whether report.rego requires it in files mode and live.
type Capability struct {
	Name, Doc      string
	Constant       string
	Files, Cluster bool
}

// InventoryCapabilities reads the exported Cap* string constants of the inventory package in
// dir with Go's parser, with their doc comments: the capability names collectors record, so
// a constant added there is known here without a list to keep in step.
func InventoryCapabilities(dir string) ([]Capability, error) {
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	var out []Capability
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("read the inventory package: %w", err)
		}
		f, err := parser.ParseFile(fset, name, src, parser.ParseComments)
		if err != nil {
			return nil, fmt.Errorf("parse the inventory package: %w", err)
		}
		out = append(out, capabilityConstants(f)...)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no Cap* constants in %s: is it the inventory package?", dir)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func capabilityConstants(f *ast.File) []Capability {
	var out []Capability
	for _, decl := range f.Decls {
		gen, ok := decl.(*ast.GenDecl)
		if !ok || gen.Tok != token.CONST {
			continue
		}
		for _, spec := range gen.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, ident := range vs.Names {
				if !strings.HasPrefix(ident.Name, "Cap") || !ident.IsExported() || i >= len(vs.Values) {
					continue
				}
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					continue
				}
				value, err := strconv.Unquote(lit.Value)
				if err != nil {
					continue
				}
				out = append(out, Capability{Name: value, Constant: ident.Name, Doc: constantDoc(ident.Name, gen, vs)})
			}
		}
	}
	return out
}

// constantDoc is a constant's doc comment without its leading "CapX:" label, on one line. A
// constant declared alone (const CapX = "x", no parentheses) has its comment on the
// declaration, not on the spec.
func constantDoc(name string, gen *ast.GenDecl, vs *ast.ValueSpec) string {
	doc := vs.Doc.Text()
	if doc == "" && !gen.Lparen.IsValid() {
		doc = gen.Doc.Text()
	}
	if doc == "" {
		doc = vs.Comment.Text()
	}
	doc = strings.Join(strings.Fields(doc), " ")
	doc = strings.TrimSpace(strings.TrimPrefix(doc, name+":"))
	if doc != "" {
		doc = strings.ToUpper(doc[:1]) + doc[1:]
	}
	return doc
}

// Probes are the probes the built-in kb bundle in fsys declares, by id ("kb/<id>").
func Probes(fsys fs.FS) (map[string]bool, error) {
	b, err := bundles.ReadFS(fsys)
	if err != nil {
		return nil, fmt.Errorf("read the kb bundle: %w", err)
	}
	k, err := kb.FromData("built-in", b.Data)
	if err != nil {
		return nil, fmt.Errorf("load the built-in kb: %w", err)
	}
	out := map[string]bool{}
	for _, p := range k.Probes() {
		out[p.ID] = true
	}
	return out, nil
}

// Required asks report.rego which capabilities it requires for an inventory of each source
// (files, cluster), so the page says what the report does rather than what it once did.
func Required(ctx context.Context, rules, kbfs fs.FS) (map[string]map[string]bool, error) {
	rb, err := bundles.ReadFS(rules)
	if err != nil {
		return nil, fmt.Errorf("read the rules bundle: %w", err)
	}
	kbb, err := bundles.ReadFS(kbfs)
	if err != nil {
		return nil, fmt.Errorf("read the kb bundle: %w", err)
	}
	query, err := rego.New(
		rego.Query("data.upgradescope.report.required_capabilities"),
		rego.ParsedBundle("rules", rb),
		rego.ParsedBundle("kb", kbb),
	).PrepareForEval(ctx)
	if err != nil {
		return nil, fmt.Errorf("prepare report.rego's required_capabilities: %w", err)
	}
	out := map[string]map[string]bool{}
	for _, source := range []string{"files", "cluster"} {
		rs, err := query.Eval(ctx, rego.EvalInput(map[string]any{"inventory": map[string]any{"source": source}}))
		if err != nil {
			return nil, fmt.Errorf("evaluate required_capabilities for %s: %w", source, err)
		}
		out[source] = map[string]bool{}
		if len(rs) == 0 || len(rs[0].Expressions) == 0 {
			continue
		}
		names, _ := rs[0].Expressions[0].Value.([]any)
		for _, n := range names {
			if s, ok := n.(string); ok {
				out[source][s] = true
			}
		}
	}
	return out, nil
}
