package engine

import (
	"fmt"
	"io/fs"
	"slices"
	"sort"
	"strings"

	"github.com/Masterminds/semver/v3"
	"github.com/open-policy-agent/opa/v1/bundle"

	"github.com/upgradescope/upgradescope/policies"
)

// Version is the engine's version as bundles see it: a bundle whose manifest metadata names
// a newer minEngineVersion is refused rather than evaluated by rules it may not understand.
const Version = "0.2.0"

// OriginEmbedded is the origin of the bundles compiled into the binary.
const OriginEmbedded = "embedded"

// loaded is one bundle of the set the engine evaluates.
type loaded struct {
	name    string
	origin  string
	b       *bundle.Bundle
	builtin bool // one of the built-in bundles, embedded or replaced
	// signature is what the caller checked of a given bundle (report.Signature*).
	signature string
}

// assemble starts from the embedded built-ins; a given bundle whose roots are exactly a
// built-in's replaces it (a newer kb, newer rules), any other must be a custom pack under
// upgradescope/custom/<name>. Roots never overlap, so no bundle can shadow another.
func assemble(cfg config) ([]loaded, error) {
	set, err := builtins(cfg.builtin)
	if err != nil {
		return nil, err
	}
	replaced := map[string]string{}
	for _, src := range cfg.bundles {
		roots, err := rootsOf(src.origin, src.b)
		if err != nil {
			return nil, err
		}
		// OPA checks a bundle's data against its roots but not its modules' packages: without
		// this a kb bundle could carry a module that adds rules to upgradescope.rules.
		if err := checkModuleRoots(src.b, src.origin); err != nil {
			return nil, err
		}
		if i := builtinWithRoots(set, roots); i >= 0 {
			if prev, ok := replaced[set[i].name]; ok {
				return nil, fmt.Errorf("bundles %s and %s both replace the built-in %s bundle", prev, src.origin, set[i].name)
			}
			replaced[set[i].name] = src.origin
			set[i] = loaded{name: set[i].name, origin: src.origin, b: src.b, builtin: true, signature: src.signature}
			continue
		}
		if err := checkCustomRoots(src.origin, roots); err != nil {
			return nil, fmt.Errorf("%w (the built-in bundles own %s)", err, builtinRoots(set))
		}
		if err := checkPackageDepth(src.b, src.origin); err != nil {
			return nil, err
		}
		set = append(set, loaded{name: nameOf(src.b, src.origin), origin: src.origin, b: src.b, signature: src.signature})
	}
	for _, path := range cfg.custom {
		b, err := readCustom(path)
		if err != nil {
			return nil, err
		}
		set = append(set, loaded{name: nameOf(b, path), origin: path, b: b})
	}
	if err := checkOverlap(set); err != nil {
		return nil, err
	}
	for _, l := range set {
		if err := checkEngineVersion(l, cfg.engineVersion); err != nil {
			return nil, err
		}
	}
	return set, nil
}

func builtins(override []namedFS) ([]loaded, error) {
	srcs := override
	if srcs == nil {
		for _, b := range policies.Builtin {
			srcs = append(srcs, namedFS{b.Name, b.FS})
		}
	}
	set := make([]loaded, 0, len(srcs))
	for _, s := range srcs {
		b, err := readFSBundle(s.name, s.fsys)
		if err != nil {
			return nil, err
		}
		set = append(set, loaded{name: s.name, origin: OriginEmbedded, b: b, builtin: true})
	}
	return set, nil
}

type namedFS struct {
	name string
	fsys fs.FS
}

// rootsOf refuses a bundle without roots: OPA gives it the root "", which owns every path
// and so collides with every other bundle.
func rootsOf(origin string, b *bundle.Bundle) ([]string, error) {
	if b.Manifest.Roots == nil {
		return nil, fmt.Errorf("bundle %s: its .manifest names no roots, so it would own every path; give it roots", origin)
	}
	roots := slices.Clone(*b.Manifest.Roots)
	if len(roots) == 0 || slices.Contains(roots, "") {
		return nil, fmt.Errorf("bundle %s: its .manifest names no roots, so it would own every path; give it roots", origin)
	}
	sort.Strings(roots)
	return roots, nil
}

func builtinWithRoots(set []loaded, roots []string) int {
	for i, l := range set {
		if !l.builtin {
			continue
		}
		mine := slices.Clone(*l.b.Manifest.Roots)
		sort.Strings(mine)
		if slices.Equal(mine, roots) {
			return i
		}
	}
	return -1
}

func builtinRoots(set []loaded) string {
	var parts []string
	for _, l := range set {
		if l.builtin {
			parts = append(parts, fmt.Sprintf("%s: %s", l.name, strings.Join(*l.b.Manifest.Roots, ", ")))
		}
	}
	return strings.Join(parts, "; ")
}

func checkCustomRoots(origin string, roots []string) error {
	for _, r := range roots {
		if !strings.HasPrefix(r, CustomRoot+"/") {
			return fmt.Errorf("bundle %s: root %q is neither a built-in bundle's roots nor under %s/<name>", origin, r, CustomRoot)
		}
	}
	return nil
}

func nameOf(b *bundle.Bundle, origin string) string {
	if n, ok := b.Manifest.Metadata["name"].(string); ok && n != "" {
		return n
	}
	return origin
}

// checkOverlap refuses two bundles where a root of one equals or contains a root of the
// other: OPA would refuse the pair too, without saying which bundles they were.
func checkOverlap(set []loaded) error {
	for i := range set {
		for j := i + 1; j < len(set); j++ {
			for _, a := range *set[i].b.Manifest.Roots {
				for _, b := range *set[j].b.Manifest.Roots {
					if bundle.RootPathsOverlap(a, b) {
						return fmt.Errorf("bundles %s (%s) and %s (%s) overlap: roots %q and %q", set[i].name, set[i].origin, set[j].name, set[j].origin, a, b)
					}
				}
			}
		}
	}
	return nil
}

func checkEngineVersion(l loaded, engineVersion string) error {
	minimum, _ := l.b.Manifest.Metadata["minEngineVersion"].(string)
	if minimum == "" {
		return nil
	}
	need, err := semver.NewVersion(minimum)
	if err != nil {
		return fmt.Errorf("bundle %s (%s): minEngineVersion %q is not a version: %w", l.name, l.origin, minimum, err)
	}
	have, err := semver.NewVersion(engineVersion)
	if err != nil {
		return fmt.Errorf("engine version %q is not a version: %w", engineVersion, err)
	}
	if have.LessThan(need) {
		return fmt.Errorf("bundle %s revision %s (%s) needs upgradescope engine %s or newer; this engine is %s: upgrade upgradescope or use an older bundle",
			l.name, l.b.Manifest.Revision, l.origin, need, have)
	}
	return nil
}
