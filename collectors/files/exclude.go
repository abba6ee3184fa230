package files

import (
	"errors"
	"fmt"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/upgradescope/upgradescope/internal/smallfile"
	"github.com/upgradescope/upgradescope/inventory"
)

// IgnoreFileName is the file of exclusion patterns kept beside .upgradescope.yaml.
const IgnoreFileName = ".upgradescopeignore"

// maxIgnoreFileBytes bounds an ignore file; a list of patterns is short.
const maxIgnoreFileBytes = 1 << 20

// ReadIgnoreFile reads the patterns of an ignore file: one per line, blank lines and lines
// starting with '#' skipped, trailing spaces trimmed. Each pattern is checked, and an error
// names the file and line. Only a regular file of at most 1 MiB is read.
func ReadIgnoreFile(name string) ([]Pattern, error) {
	data, err := smallfile.Read(name, maxIgnoreFileBytes)
	if err != nil {
		return nil, fmt.Errorf("read exclusion patterns: %w", err)
	}
	if !utf8.Valid(data) {
		return nil, fmt.Errorf("%s: not UTF-8 text", name)
	}
	var patterns []Pattern
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimRight(line, " \t\r")
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		p := Pattern{Glob: line, Origin: fmt.Sprintf("%s:%d", name, i+1)}
		if _, err := parseRule(p); err != nil {
			return nil, fmt.Errorf("%s: %w", p.Origin, err)
		}
		patterns = append(patterns, p)
	}
	return patterns, nil
}

// Pattern is one exclusion as the user wrote it, with where it was written: "--exclude" or
// ".upgradescopeignore:3". Origin names the pattern in errors and in the excluded list.
type Pattern struct {
	Glob   string
	Origin string
}

// Exclude is a set of parsed patterns: a gitignore-like subset, matched against a walked
// path relative to the walk's root with '/' between segments.
//
//   - '*', '?' and '[…]' match within one segment (path.Match); '**' as a whole segment
//     matches any number of segments, none included.
//   - A pattern with no '/' (a trailing one aside) matches the base name at any depth
//     ("*.txt", "testdata/"); one with a '/' elsewhere is anchored at the root
//     ("samples/x.json", "/build"), a leading '/' only saying so.
//   - A trailing '/' matches directories only.
//   - An excluded directory is not walked: nothing under it is read.
//
// Negation ('!') is refused rather than ignored: a pattern meant to re-include a manifest
// must not silently exclude it. The zero value and nil exclude nothing.
type Exclude struct {
	rules []excludeRule
}

type excludeRule struct {
	Pattern
	segments []string // the pattern split at '/'; anchored ones match from the root
	anchored bool
	dirOnly  bool
}

// NewExclude parses patterns in order; the first that matches a path names it. An error names
// the pattern's Origin.
func NewExclude(patterns []Pattern) (*Exclude, error) {
	ex := &Exclude{}
	for _, p := range patterns {
		r, err := parseRule(p)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.Origin, err)
		}
		ex.rules = append(ex.rules, r)
	}
	return ex, nil
}

func parseRule(p Pattern) (excludeRule, error) {
	r, err := parseGlob(p)
	if err != nil {
		return excludeRule{}, fmt.Errorf("exclude pattern %q: %w", p.Glob, err)
	}
	return r, nil
}

func parseGlob(p Pattern) (excludeRule, error) {
	g := p.Glob
	switch {
	case strings.TrimSpace(g) == "":
		return excludeRule{}, errors.New("empty")
	case strings.HasPrefix(g, "!"):
		return excludeRule{}, errors.New("negation (!) is not supported: exclude less instead")
	case strings.Contains(g, "\\"):
		return excludeRule{}, errors.New("backslash is not supported: separate segments with '/'")
	}
	r := excludeRule{Pattern: p}
	if strings.HasSuffix(g, "/") {
		r.dirOnly, g = true, strings.TrimRight(g, "/")
	}
	if strings.Contains(g, "/") {
		r.anchored, g = true, strings.TrimPrefix(g, "/")
	}
	if g == "" {
		return excludeRule{}, errors.New("matches the scanned root itself")
	}
	r.segments = strings.Split(g, "/")
	for _, s := range r.segments {
		if s == "" || s == "." || s == ".." {
			return excludeRule{}, fmt.Errorf("segment %q: want a name or a glob between slashes", s)
		}
		if _, err := path.Match(s, ""); err != nil {
			return excludeRule{}, fmt.Errorf("segment %q: %w", s, err)
		}
	}
	if !r.anchored && r.segments[0] != "**" {
		r.segments = append([]string{"**"}, r.segments...) // a base name at any depth
	}
	return r, nil
}

// Match answers the first pattern that excludes rel ('/'-separated, relative to the walk's
// root), a directory when dir is true.
func (e *Exclude) Match(rel string, dir bool) (Pattern, bool) {
	if e == nil || rel == "" || rel == "." {
		return Pattern{}, false
	}
	segs := strings.Split(rel, "/")
	for _, r := range e.rules {
		if r.dirOnly && !dir {
			continue
		}
		if matchSegments(r.segments, segs) {
			return r.Pattern, true
		}
	}
	return Pattern{}, false
}

// matchSegments matches pattern segments against path segments, '**' taking any number of
// them. Recursion is bounded by the pattern's length times the path's depth.
func matchSegments(pat, segs []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for len(pat) > 0 && pat[0] == "**" {
				pat = pat[1:]
			}
			if len(pat) == 0 {
				return true
			}
			for i := range segs {
				if matchSegments(pat, segs[i:]) {
					return true
				}
			}
			return false
		}
		if len(segs) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], segs[0]); !ok {
			return false
		}
		pat, segs = pat[1:], segs[1:]
	}
	return len(segs) == 0
}

// excludedList keeps the paths a walk excluded, the first inventory.MaxExcludedPaths of
// them, and counts the rest.
type excludedList struct {
	paths   []inventory.ExcludedPath
	omitted int
}

func (l *excludedList) add(rel string, p Pattern) {
	if len(l.paths) == inventory.MaxExcludedPaths {
		l.omitted++
		return
	}
	l.paths = append(l.paths, inventory.ExcludedPath{Path: rel, Pattern: p.Glob, Origin: p.Origin})
}
