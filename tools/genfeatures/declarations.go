package main

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// spec is one entry of a gate's declaration: a featuregate.FeatureSpec as written, version
// "" when the map is unversioned (featuregate.FeatureSpec before 1.31 and in the few
// unversioned maps after it), else the minor it takes effect at.
type spec struct {
	Version minorVersion
	// HasVersion is whether Version was given (MajorMinor(0, 0) is a version).
	HasVersion    bool
	MinCompat     minorVersion
	HasMinCompat  bool
	Default       bool
	PreRelease    string
	LockToDefault bool
}

// declaration is one gate as one map declares it.
type declaration struct {
	Name  string
	Specs []spec
	// File is where the map is, "<module>@<version>/<path>", and Line the gate's line in it.
	File string
	Line int
}

// module is one downloaded module: its path, version and where its source is on disk.
type module struct {
	Path, Version, Dir string
	// Walk is the folder of the module read ("" for the whole module).
	Walk string
}

func (m module) String() string { return m.Path + "@" + m.Version }

// reader reads the feature gate maps of a set of modules with go/parser. It resolves a
// map's keys (constants of the map's package or of a package it imports from one of the
// modules) and the bool constants a spec's Default may name.
type reader struct {
	modules []module
	fset    *token.FileSet
	// consts caches each package's string and bool constants by import path.
	consts map[string]map[string]constant
}

// constant is a Go constant a declaration may name: a string (a gate's name) or a bool.
type constant struct {
	str    string
	isBool bool
	b      bool
}

func newReader(modules []module) *reader {
	return &reader{modules: modules, fset: token.NewFileSet(), consts: map[string]map[string]constant{}}
}

// mapFiles are the candidate files: Go source outside tests, generated code, vendor and
// testdata, that names a spec type at all. Parsing the rest of k8s.io/kubernetes's pkg/
// would take most of the run for nothing.
func (r *reader) mapFiles(m module) ([]string, error) {
	var files []string
	root := filepath.Join(m.Dir, filepath.FromSlash(m.Walk))
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (name == "vendor" || name == "testdata" || strings.HasPrefix(name, "_") || strings.HasPrefix(name, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") || strings.HasPrefix(name, "zz_generated") {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.Contains(b, []byte("FeatureSpec")) || bytes.Contains(b, []byte("VersionedSpecs")) {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("walk %s: %w", m, err)
	}
	slices.Sort(files)
	return files, nil
}

// read returns every gate the module's maps declare, and the files that hold a map.
func (r *reader) read(m module) ([]declaration, []string, error) {
	files, err := r.mapFiles(m)
	if err != nil {
		return nil, nil, err
	}
	var decls []declaration
	var held []string
	for _, p := range files {
		ds, n, err := r.readFile(m, p)
		if err != nil {
			return nil, nil, err
		}
		if n > 0 {
			rel, _ := filepath.Rel(m.Dir, p)
			held = append(held, m.String()+"/"+filepath.ToSlash(rel))
		}
		decls = append(decls, ds...)
	}
	return decls, held, nil
}

// readFile reads the gate maps of one file: map literals of a Feature key and a FeatureSpec
// or VersionedSpecs value that a top-level var holds or a top-level function returns, as
// the registries add them (kube's defaultKubernetesFeatureGates, component-base's
// featureGates()). A map built inside a function body for a test's own gate is not one.
// It returns the declarations and how many maps the file holds (an empty map counts).
func (r *reader) readFile(m module, p string) ([]declaration, int, error) {
	f, err := parser.ParseFile(r.fset, p, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, 0, fmt.Errorf("parse %s: %w", p, err)
	}
	rel, _ := filepath.Rel(m.Dir, p)
	pkg := path.Join(m.Path, path.Dir(filepath.ToSlash(rel)))
	imports := importsOf(f)
	var lits []*ast.CompositeLit
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.GenDecl:
			if d.Tok != token.VAR {
				continue
			}
			for _, s := range d.Specs {
				for _, v := range s.(*ast.ValueSpec).Values {
					if cl, ok := gateMap(v); ok {
						lits = append(lits, cl)
					}
				}
			}
		case *ast.FuncDecl:
			if d.Body == nil {
				continue
			}
			for _, st := range d.Body.List {
				if ret, ok := st.(*ast.ReturnStmt); ok {
					for _, v := range ret.Results {
						if cl, ok := gateMap(v); ok {
							lits = append(lits, cl)
						}
					}
				}
			}
		}
	}
	file := m.String() + "/" + filepath.ToSlash(rel)
	var decls []declaration
	for _, cl := range lits {
		versioned := typeName(cl.Type.(*ast.MapType).Value) == "VersionedSpecs"
		for _, elt := range cl.Elts {
			kv, ok := elt.(*ast.KeyValueExpr)
			if !ok {
				return nil, 0, r.errorAt(elt, "a gate map entry that is not key: value")
			}
			name, err := r.gateName(kv.Key, pkg, imports)
			if err != nil {
				return nil, 0, err
			}
			specs, err := r.specs(kv.Value, versioned, pkg)
			if err != nil {
				return nil, 0, fmt.Errorf("gate %s: %w", name, err)
			}
			decls = append(decls, declaration{Name: name, Specs: specs, File: file, Line: r.fset.Position(kv.Pos()).Line})
		}
	}
	return decls, len(lits), nil
}

// gateMap is v when it is a map literal from a Feature to a FeatureSpec or VersionedSpecs,
// whether the types are component-base's (featuregate.Feature) or client-go's own.
func gateMap(v ast.Expr) (*ast.CompositeLit, bool) {
	cl, ok := v.(*ast.CompositeLit)
	if !ok {
		return nil, false
	}
	mt, ok := cl.Type.(*ast.MapType)
	if !ok || typeName(mt.Key) != "Feature" {
		return nil, false
	}
	switch typeName(mt.Value) {
	case "FeatureSpec", "VersionedSpecs":
		return cl, true
	}
	return nil, false
}

// typeName is the name of a type expression without its package: Feature for
// featuregate.Feature and for Feature.
func typeName(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return e.Sel.Name
	}
	return ""
}

func importsOf(f *ast.File) map[string]string {
	imports := map[string]string{}
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		name := path.Base(p)
		if imp.Name != nil {
			name = imp.Name.Name
		}
		imports[name] = p
	}
	return imports
}

// gateName resolves a map key to the gate's name: a constant of the map's package, a
// constant of an imported package, a string literal, or a conversion of one of these.
func (r *reader) gateName(e ast.Expr, pkg string, imports map[string]string) (string, error) {
	switch k := e.(type) {
	case *ast.BasicLit:
		if k.Kind == token.STRING {
			return strconv.Unquote(k.Value)
		}
	case *ast.Ident:
		return r.stringConst(pkg, k.Name, e)
	case *ast.SelectorExpr:
		x, ok := k.X.(*ast.Ident)
		if !ok {
			break
		}
		imported, ok := imports[x.Name]
		if !ok {
			return "", r.errorAt(e, "key %s.%s names a package the file does not import", x.Name, k.Sel.Name)
		}
		return r.stringConst(imported, k.Sel.Name, e)
	case *ast.CallExpr:
		if len(k.Args) == 1 && typeName(k.Fun) == "Feature" {
			return r.gateName(k.Args[0], pkg, imports)
		}
	}
	return "", r.errorAt(e, "a gate map key genfeatures cannot resolve")
}

func (r *reader) stringConst(pkg, name string, at ast.Node) (string, error) {
	consts, err := r.packageConsts(pkg)
	if err != nil {
		return "", err
	}
	c, ok := consts[name]
	if !ok || c.isBool {
		return "", r.errorAt(at, "%s is not a string constant of %s", name, pkg)
	}
	return c.str, nil
}

// packageConsts parses a package's non-test files for their constants, once per package.
func (r *reader) packageConsts(pkg string) (map[string]constant, error) {
	if c, ok := r.consts[pkg]; ok {
		return c, nil
	}
	dir, err := r.dirOf(pkg)
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read package %s: %w", pkg, err)
	}
	consts := map[string]constant{}
	for _, e := range entries {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(r.fset, filepath.Join(dir, n), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, fmt.Errorf("parse %s: %w", filepath.Join(dir, n), err)
		}
		collectConsts(f, consts)
	}
	r.consts[pkg] = consts
	return consts, nil
}

func collectConsts(f *ast.File, consts map[string]constant) {
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, s := range gd.Specs {
			vs := s.(*ast.ValueSpec)
			for i, name := range vs.Names {
				if i >= len(vs.Values) {
					continue
				}
				if c, ok := constValue(vs.Values[i]); ok {
					consts[name.Name] = c
				}
			}
		}
	}
}

func constValue(e ast.Expr) (constant, bool) {
	switch v := e.(type) {
	case *ast.BasicLit:
		if v.Kind == token.STRING {
			s, err := strconv.Unquote(v.Value)
			return constant{str: s}, err == nil
		}
	case *ast.Ident:
		if v.Name == "true" || v.Name == "false" {
			return constant{isBool: true, b: v.Name == "true"}, true
		}
	case *ast.CallExpr:
		if len(v.Args) == 1 && typeName(v.Fun) == "Feature" {
			return constValue(v.Args[0])
		}
	}
	return constant{}, false
}

// dirOf finds an import path's folder in the module that holds it, the longest module
// path that is a prefix of it.
func (r *reader) dirOf(pkg string) (string, error) {
	best := -1
	for i, m := range r.modules {
		if (pkg == m.Path || strings.HasPrefix(pkg, m.Path+"/")) && (best < 0 || len(m.Path) > len(r.modules[best].Path)) {
			best = i
		}
	}
	if best < 0 {
		return "", fmt.Errorf("package %s is in none of the modules read; add its module to sources.json", pkg)
	}
	m := r.modules[best]
	return filepath.Join(m.Dir, filepath.FromSlash(strings.TrimPrefix(strings.TrimPrefix(pkg, m.Path), "/"))), nil
}

// specs reads a map value: one FeatureSpec literal, or a VersionedSpecs list of them.
func (r *reader) specs(e ast.Expr, versioned bool, pkg string) ([]spec, error) {
	cl, ok := e.(*ast.CompositeLit)
	if !ok {
		return nil, r.errorAt(e, "a gate spec that is not a literal")
	}
	if !versioned {
		s, err := r.spec(cl, pkg)
		return []spec{s}, err
	}
	var specs []spec
	for _, elt := range cl.Elts {
		c, ok := elt.(*ast.CompositeLit)
		if !ok {
			return nil, r.errorAt(elt, "a versioned spec that is not a literal")
		}
		s, err := r.spec(c, pkg)
		if err != nil {
			return nil, err
		}
		if !s.HasVersion {
			return nil, r.errorAt(elt, "a versioned spec without a Version")
		}
		specs = append(specs, s)
	}
	if len(specs) == 0 {
		return nil, r.errorAt(e, "a gate with no versioned spec")
	}
	return specs, nil
}

func (r *reader) spec(cl *ast.CompositeLit, pkg string) (spec, error) {
	s := spec{PreRelease: "GA"}
	for _, elt := range cl.Elts {
		kv, ok := elt.(*ast.KeyValueExpr)
		if !ok {
			return s, r.errorAt(elt, "a spec field that is not key: value")
		}
		field, _ := kv.Key.(*ast.Ident)
		if field == nil {
			return s, r.errorAt(kv, "a spec field without a name")
		}
		var err error
		switch field.Name {
		case "Default":
			s.Default, err = r.boolValue(kv.Value, pkg)
		case "LockToDefault":
			s.LockToDefault, err = r.boolValue(kv.Value, pkg)
		case "PreRelease":
			s.PreRelease, err = r.preRelease(kv.Value)
		case "Version":
			s.Version, err = r.version(kv.Value)
			s.HasVersion = true
		case "MinCompatibilityVersion":
			s.MinCompat, err = r.version(kv.Value)
			s.HasMinCompat = true
		default:
			err = r.errorAt(kv, "spec field %s genfeatures does not know", field.Name)
		}
		if err != nil {
			return s, err
		}
	}
	return s, nil
}

func (r *reader) boolValue(e ast.Expr, pkg string) (bool, error) {
	id, ok := e.(*ast.Ident)
	if !ok {
		return false, r.errorAt(e, "a bool that is neither true, false nor a constant")
	}
	if c, ok := constValue(id); ok {
		return c.b, nil
	}
	consts, err := r.packageConsts(pkg)
	if err != nil {
		return false, err
	}
	if c, ok := consts[id.Name]; ok && c.isBool {
		return c.b, nil
	}
	return false, r.errorAt(e, "%s is not a bool constant of %s", id.Name, pkg)
}

// preReleases are featuregate's prerelease constants by name, as the reference lists spell them.
var preReleases = map[string]string{"PreAlpha": "PreAlpha", "Alpha": "Alpha", "Beta": "Beta", "GA": "GA", "Deprecated": "Deprecated"}

func (r *reader) preRelease(e ast.Expr) (string, error) {
	if p, ok := preReleases[typeName(e)]; ok {
		return p, nil
	}
	return "", r.errorAt(e, "a prerelease genfeatures does not know")
}

// version reads version.MustParse("1.31") and version.MajorMinor(1, 31).
func (r *reader) version(e ast.Expr) (minorVersion, error) {
	call, ok := e.(*ast.CallExpr)
	if ok {
		switch typeName(call.Fun) {
		case "MustParse":
			if len(call.Args) == 1 {
				if lit, ok := call.Args[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					s, _ := strconv.Unquote(lit.Value)
					if v, err := parseMinor(s); err == nil {
						return v, nil
					}
				}
			}
		case "MajorMinor":
			if len(call.Args) == 2 {
				maj, err1 := intLit(call.Args[0])
				mnr, err2 := intLit(call.Args[1])
				if err1 == nil && err2 == nil {
					return minorVersion{maj, mnr}, nil
				}
			}
		}
	}
	return minorVersion{}, r.errorAt(e, "a version genfeatures cannot read")
}

func intLit(e ast.Expr) (int, error) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.INT {
		return 0, fmt.Errorf("not an integer literal")
	}
	return strconv.Atoi(lit.Value)
}

func (r *reader) errorAt(n ast.Node, format string, args ...any) error {
	return fmt.Errorf("%s: %s", r.fset.Position(n.Pos()), fmt.Sprintf(format, args...))
}
