package engine

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/bundle"

	"github.com/upgradescope/upgradescope/bundles"
)

// CustomRoot is where every custom pack lives: upgradescope/custom/<name>.
const CustomRoot = "upgradescope/custom"

func readFSBundle(name string, fsys fs.FS) (*bundle.Bundle, error) {
	b, err := bundles.ReadFS(fsys)
	if err != nil {
		return nil, fmt.Errorf("read built-in %s bundle: %w", name, err)
	}
	return b, nil
}

// readCustom reads a custom pack: a bundle tarball, or a directory of Rego whose manifest is
// derived from its packages when it has none.
func readCustom(path string) (*bundle.Bundle, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("read policy: %w", err)
	}
	var b *bundle.Bundle
	if info.IsDir() {
		b, err = bundles.ReadDir(path, nil)
	} else {
		b, err = readTarball(path)
	}
	if err != nil {
		return nil, fmt.Errorf("read policy %s: %w", path, err)
	}
	// The reader gives a bundle without a manifest the root "", which owns everything.
	if b.Manifest.Roots == nil || len(*b.Manifest.Roots) == 0 || len(*b.Manifest.Roots) == 1 && (*b.Manifest.Roots)[0] == "" {
		roots := deriveRoots(b, path)
		b.Manifest.Roots = &roots
	}
	for _, r := range *b.Manifest.Roots {
		if !strings.HasPrefix(r+"/", CustomRoot+"/") || r == CustomRoot {
			return nil, fmt.Errorf("policy %s: root %q is outside %s/<name>; custom packs may not own other roots", path, r, CustomRoot)
		}
	}
	if err := checkModuleRoots(b, path); err != nil {
		return nil, err
	}
	if err := checkPackageDepth(b, path); err != nil {
		return nil, err
	}
	if b.Manifest.Revision == "" {
		b.Manifest.Revision = "unversioned"
	}
	return b, nil
}

// readTarball reads a pack shipped as a bundle. bundles.Open refuses a named pipe or a device
// unopened, as every other bundle path is refused: opening a pipe would wait forever.
func readTarball(path string) (*bundle.Bundle, error) {
	f, err := bundles.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := bundles.Read(f, nil)
	return &b, err
}

// deriveRoots gives a bare directory the roots its packages claim under upgradescope.custom;
// with none, the directory name. A module outside those roots is then refused by OPA itself.
func deriveRoots(b *bundle.Bundle, path string) []string {
	set := map[string]bool{}
	for _, m := range b.Modules {
		parts := m.Parsed.Package.Path
		if len(parts) >= 4 && parts[1].Value.Compare(ast.String("upgradescope")) == 0 &&
			parts[2].Value.Compare(ast.String("custom")) == 0 {
			if s, ok := parts[3].Value.(ast.String); ok {
				set[CustomRoot+"/"+string(s)] = true
			}
		}
	}
	if len(set) == 0 {
		set[CustomRoot+"/"+filepath.Base(filepath.Clean(path))] = true
	}
	roots := make([]string, 0, len(set))
	for r := range set {
		roots = append(roots, r)
	}
	sort.Strings(roots)
	return roots
}

// checkModuleRoots refuses a module whose package lies outside the pack's roots, naming its
// file and line: a pack may add findings, never shadow built-in rules.
func checkModuleRoots(b *bundle.Bundle, path string) error {
	for _, m := range b.Modules {
		pkg := m.Parsed.Package
		segments := make([]string, 0, len(pkg.Path)-1)
		for _, t := range pkg.Path[1:] {
			s, ok := t.Value.(ast.String)
			if !ok {
				return fmt.Errorf("policy %s: %s: package %v is not a plain path", path, pkg.Location, pkg)
			}
			segments = append(segments, string(s))
		}
		if !bundle.RootPathsContain(*b.Manifest.Roots, strings.Join(segments, "/")) {
			return fmt.Errorf("policy %s: %s: %v is outside the bundle's roots %v; a bundle's modules live under its roots (a custom pack's under package upgradescope.custom.<name>)",
				path, pkg.Location, pkg, *b.Manifest.Roots)
		}
	}
	return nil
}

// maxCustomDepth is how many segments a custom package may have below upgradescope.custom:
// <name> and one <sub> package, the two levels whose findings the report package gathers.
const maxCustomDepth = 2

// checkPackageDepth refuses a custom module whose package lies deeper than
// upgradescope.custom.<name>.<sub>, naming it with its file and line. Such findings would
// vanish, and the pack's blockers with them. Refused rather than gathered: the report
// package finds findings by path, and gathering any depth would mean walking every custom
// document, evaluating every helper rule of every pack, and guessing which objects are
// packages and which are rules whose values happen to be objects.
func checkPackageDepth(b *bundle.Bundle, origin string) error {
	for _, m := range b.Modules {
		if m.Parsed == nil {
			continue
		}
		pkg := m.Parsed.Package
		// data, upgradescope, custom, then <name>, <sub>.
		if len(pkg.Path) > 3+maxCustomDepth && pkg.Path[1].Value.Compare(ast.String("upgradescope")) == 0 &&
			pkg.Path[2].Value.Compare(ast.String("custom")) == 0 {
			return fmt.Errorf("policy %s: %s: %v is nested too deep; a custom pack's packages are upgradescope.custom.<name> and upgradescope.custom.<name>.<sub>, and findings deeper would be left out",
				origin, pkg.Location, pkg)
		}
	}
	return nil
}
