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
	for _, d := range []string{dir, s.root} {
		if d == "" {
			continue
		}
		if _, err := os.Lstat(filepath.Join(d, config.FileName)); err != nil {
			continue
		}
		p, err := s.within(filepath.Join(d, config.FileName))
		if err != nil {
			return nil, "", err
		}
		c, err := config.Load(p)
		if err != nil {
			return nil, "", err
		}
		return c.Ignore, s.shown(p), nil
	}
	return nil, "", nil
}

// dirOf is path's directory, or path when it is one.
func dirOf(path string) string {
	if info, err := os.Stat(path); err == nil && !info.IsDir() {
		return filepath.Dir(path)
	}
	return path
}
