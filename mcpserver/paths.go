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
	if err != nil {
		if os.IsNotExist(err) {
			return "", fmt.Errorf("%s: no such file or directory under the root %s", clip(rel, maxLine), s.root)
		}
		return "", fmt.Errorf("%s: %w", clip(rel, maxLine), err)
	}
	if !inside(s.root, real) {
		return "", fmt.Errorf("%s is outside the root %s: the server reads nothing else (restart it with --root to widen it)", clip(rel, maxLine), s.root)
	}
	return real, nil
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
