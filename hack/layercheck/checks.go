package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// violation is one broken rule, at the line to look at.
type violation struct {
	pos string // file:line relative to the module root, or the package's folder when no line fits
	msg string
}

func (v violation) String() string { return v.pos + ": " + v.msg }

// checkNoOPA holds each noOPA package to linking nothing under the forbidden prefix,
// naming the import chain that links it. A listed package the module lacks is a violation
// too: a renamed or mistyped path would otherwise turn its rule off without a word.
func checkNoOPA(m *module, r rules) ([]violation, error) {
	var found []violation
	for _, rel := range r.noOPA {
		p, ok := m.all[m.abs(rel)]
		if !ok || p.DepOnly {
			found = append(found, violation{rel, "no such package, but the no-OPA rule lists it, so the rule checks nothing: correct or drop the path in the rules"})
			continue
		}
		chain := importChain(m, p.ImportPath, func(path string) bool { return strings.HasPrefix(path, r.forbiddenPrefix) })
		if chain == nil {
			continue
		}
		pos, err := importPos(m, p, p.GoFiles, chain[1])
		if err != nil {
			return nil, err
		}
		for i := range chain {
			chain[i] = m.short(chain[i])
		}
		found = append(found, violation{pos, fmt.Sprintf("%s must not link OPA, but links it: %s", rel, strings.Join(chain, " → "))})
	}
	return found, nil
}

// importChain answers the shortest chain of imports from the package from to one that
// forbidden matches, from included, or nil when there is none.
func importChain(m *module, from string, forbidden func(string) bool) []string {
	parent := map[string]string{from: ""}
	queue := []string{from}
	for len(queue) > 0 {
		cur := queue[0]
		queue = queue[1:]
		p, ok := m.all[cur]
		if !ok || p.Standard {
			continue
		}
		for _, imp := range p.Imports {
			if _, seen := parent[imp]; seen {
				continue
			}
			parent[imp] = cur
			if forbidden(imp) {
				var chain []string
				for at := imp; at != ""; at = parent[at] {
					chain = append(chain, at)
				}
				slices.Reverse(chain)
				return chain
			}
			queue = append(queue, imp)
		}
	}
	return nil
}

// checkNoCmdImports refuses an import of a package under cmdDir by a package outside it,
// tests included.
func checkNoCmdImports(m *module, r rules) ([]violation, error) {
	if r.cmdDir == "" {
		return nil, nil
	}
	under := func(importPath string) bool {
		rel := m.rel(importPath)
		return importPath != m.path && (rel == r.cmdDir || strings.HasPrefix(rel, r.cmdDir+"/")) &&
			strings.HasPrefix(importPath, m.path+"/")
	}
	var found []violation
	for _, p := range m.own {
		if under(p.ImportPath) {
			continue
		}
		files := slices.Concat(p.GoFiles, p.CgoFiles, p.TestGoFiles, p.XTestGoFiles)
		for _, imp := range slices.Concat(p.Imports, p.TestImports, p.XTestImports) {
			if !under(imp) {
				continue
			}
			pos, err := importPos(m, p, files, imp)
			if err != nil {
				return nil, err
			}
			found = append(found, violation{pos, fmt.Sprintf("%s imports %s: only packages under %s/ may; move what it needs out of %s/",
				m.rel(p.ImportPath), m.rel(imp), r.cmdDir, r.cmdDir)})
		}
	}
	return found, nil
}

// importPos answers file:line of the import of imp in p's files, or p's folder when no
// file spells it.
func importPos(m *module, p *pkg, files []string, imp string) (string, error) {
	fset := token.NewFileSet()
	for _, name := range files {
		f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.ImportsOnly)
		if err != nil {
			return "", fmt.Errorf("parse %s: %w", name, err)
		}
		for _, spec := range f.Imports {
			if path, _ := strconv.Unquote(spec.Path.Value); path == imp {
				return m.position(fset.Position(spec.Pos())), nil
			}
		}
	}
	return m.relDir(p.Dir), nil
}

// checkMethodCounts holds every named type declared in the packages under methodsUnder to
// maxMethods declared methods, pointer and value receivers together; promoted methods of
// embedded fields are not counted.
func checkMethodCounts(m *module, r rules) ([]violation, error) {
	if r.methodsUnder == "" {
		return nil, nil
	}
	var found []violation
	for _, p := range m.own {
		rel := m.rel(p.ImportPath)
		if rel != r.methodsUnder && !strings.HasPrefix(rel, r.methodsUnder+"/") {
			continue
		}
		counts, err := countMethods(p)
		if err != nil {
			return nil, err
		}
		for _, c := range counts {
			if c.methods <= r.maxMethods || slices.Contains(r.methodsExempt, rel+"."+c.name) {
				continue
			}
			found = append(found, violation{m.position(c.pos), fmt.Sprintf("%s.%s has %d methods, more than %d: split it into types that each hold what their methods use",
				rel, c.name, c.methods, r.maxMethods)})
		}
	}
	return found, nil
}

// typeMethods is one named type's declared method count.
type typeMethods struct {
	name    string
	pos     token.Position // the type's declaration, else its first method
	methods int
}

// countMethods counts the methods declared on each of p's named types (test files aside),
// answering them sorted by name.
func countMethods(p *pkg) ([]typeMethods, error) {
	fset := token.NewFileSet()
	byName := map[string]*typeMethods{}
	get := func(name string, pos token.Pos) *typeMethods {
		c, ok := byName[name]
		if !ok {
			c = &typeMethods{name: name, pos: fset.Position(pos)}
			byName[name] = c
		}
		return c
	}
	for _, name := range slices.Concat(p.GoFiles, p.CgoFiles) {
		f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, fmt.Errorf("parse %s: %w", name, err)
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					if ts, ok := spec.(*ast.TypeSpec); ok {
						get(ts.Name.Name, ts.Name.Pos()).pos = fset.Position(ts.Name.Pos())
					}
				}
			case *ast.FuncDecl:
				if d.Recv != nil && len(d.Recv.List) == 1 {
					get(receiverName(d.Recv.List[0].Type), d.Name.Pos()).methods++
				}
			}
		}
	}
	counts := make([]typeMethods, 0, len(byName))
	for _, c := range byName {
		counts = append(counts, *c)
	}
	sort.Slice(counts, func(i, j int) bool { return counts[i].name < counts[j].name })
	return counts, nil
}

// receiverName answers the type name of a receiver: T, *T, T[P] or *T[P, Q].
func receiverName(e ast.Expr) string {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.ParenExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.Ident:
			return t.Name
		default:
			return fmt.Sprintf("%T", e)
		}
	}
}

// short answers a module package's path relative to the module, any other as is.
func (m *module) short(importPath string) string {
	if strings.HasPrefix(importPath, m.path+"/") {
		return m.rel(importPath)
	}
	return importPath
}

// position answers pos as file:line relative to the module root.
func (m *module) position(pos token.Position) string {
	return fmt.Sprintf("%s:%d", m.relDir(pos.Filename), pos.Line)
}

// relDir answers path relative to the module root, as is when it lies outside.
func (m *module) relDir(path string) string {
	if rel, err := filepath.Rel(m.dir, path); err == nil && !strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(rel)
	}
	return path
}
