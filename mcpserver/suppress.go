package mcpserver

import (
	"os"
	"path/filepath"

	"github.com/upgradescope/upgradescope/config"
	"github.com/upgradescope/upgradescope/report"
)

// ignoreFor is the suppressions a scan applies and the file they came from: --config's, or
// with FindIgnore the .upgradescope.yaml in dir (the directory of what the scan read), else
// at the root. A file found is read only when its real path is under the root, so a link
// out of it is refused like any other path.
func (s *Server) ignoreFor(dir string) ([]report.IgnoreRule, string, error) {
	if !s.cfg.FindIgnore {
		return s.cfg.Ignore, s.cfg.IgnoreSource, nil
	}
	p, err := s.besideOrAtRoot(dir, config.FileName)
	if p == "" || err != nil {
		return nil, "", err
	}
	c, err := config.Load(p)
	if err != nil {
		return nil, "", err
	}
	return c.Ignore, s.shown(p), nil
}

// besideOrAtRoot is the real path of the file name in dir (the directory of what a scan
// reads; "" for the cluster), else at the root, as scan looks beside its input and then in
// the working directory; "" when neither holds one. A file found is read only when its real
// path is under the root: one linking out is refused, not skipped, since applying it and
// leaving it out would both change the verdict, the second silently.
func (s *Server) besideOrAtRoot(dir, name string) (string, error) {
	for _, d := range []string{dir, s.root} {
		if d == "" {
			continue
		}
		p := filepath.Join(d, name)
		if info, err := os.Stat(p); err == nil && info.Mode().IsRegular() {
			return s.within(p)
		}
	}
	return "", nil
}

// dirOf is path's directory, or path when it is one.
func dirOf(path string) string {
	if info, err := os.Stat(path); err == nil && !info.IsDir() {
		return filepath.Dir(path)
	}
	return path
}
