package mcpserver

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// within resolves rel, a path an assistant gave, under the root: relative to it, or
// absolute inside it. Symlinks are resolved first, so one leading out of the root is
// refused like "../": nothing outside the root the server was started with is read.
func (s *Server) within(rel string) (string, error) {
	if rel == "" {
		return "", fmt.Errorf("no path given: name a file or directory under the root %s", s.root)
	}
	p := rel
	if !filepath.IsAbs(p) {
		p = filepath.Join(s.root, p)
	}
	real, err := filepath.EvalSymlinks(p)
	if err == nil && !inside(s.root, real) || err != nil && !inside(s.root, nearestReal(p)) {
		// A path outside is refused the same way whether it exists or not, so answers tell
		// nothing of what is outside the root.
		return "", fmt.Errorf("%s is outside the root %s: the server reads nothing else (restart it with --root to widen it)", clip(rel, maxLine), s.root)
	}
	if err != nil {
		if os.IsNotExist(err) {
			return "", fmt.Errorf("%s: no such file or directory under the root %s", clip(rel, maxLine), s.root)
		}
		return "", fmt.Errorf("%s: %w", clip(rel, maxLine), err)
	}
	return real, nil
}

// nearestReal is the absolute path p with the symlinks of its longest existing prefix
// resolved and the rest as written: where p would be, were it created.
func nearestReal(p string) string {
	p = filepath.Clean(p)
	rest := ""
	for {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(real, rest)
		}
		parent := filepath.Dir(p)
		if parent == p {
			return filepath.Join(p, rest)
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}

// inside reports whether path is root or below it; both are clean absolute paths.
func inside(root, path string) bool {
	if path == root {
		return true
	}
	return strings.HasPrefix(path, strings.TrimSuffix(root, string(filepath.Separator))+string(filepath.Separator))
}

// shown is how an answer names an absolute path under the root: relative to it.
func (s *Server) shown(abs string) string {
	rel, err := filepath.Rel(s.root, abs)
	if err != nil {
		return abs
	}
	return filepath.ToSlash(rel)
}
