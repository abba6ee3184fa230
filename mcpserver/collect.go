package mcpserver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/upgradescope/upgradescope/collectors/files"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/report"
)

// collectFiles walks the manifests at abs (under the root) as scan --files does: the
// engine's observations, the budget, the .upgradescopeignore beside them, and no symlink
// out of the root. A walk that found no object is an error: a wrong path must not read as
// ready.
func (s *Server) collectFiles(ctx context.Context, abs string) (*inventory.Document, error) {
	ex, err := s.exclusions(abs)
	if err != nil {
		return nil, err
	}
	b := s.cfg.Files
	opts := files.Options{Observe: s.cfg.Engine.Observe(), TeamLabel: b.TeamLabel, MaxBytes: b.MaxBytes, Exclude: ex, Confine: s.root}
	if b.Timeout > 0 {
		opts.Deadline = time.Now().Add(b.Timeout)
	}
	if d, ok := ctx.Deadline(); ok && (opts.Deadline.IsZero() || d.Before(opts.Deadline)) {
		opts.Deadline = d
	}
	res, err := files.Collect(abs, opts)
	if err != nil {
		return nil, err
	}
	if res.Objects == 0 {
		err := fmt.Errorf("no Kubernetes objects found in %s (%d manifest files read)", s.shown(abs), res.Files)
		if len(res.Warnings) > 0 {
			// What was not read is the likely why: a file past the budget, a link out.
			err = fmt.Errorf("%w; %s, the first: %s", err, report.Count(len(res.Warnings), "warning"), clip(res.Warnings[0].String(), maxLine))
		}
		return nil, err
	}
	doc := files.Inventory(res, s.cfg.Now())
	doc.FilesBase = s.shown(abs)
	return doc, nil
}

// exclusions reads the .upgradescopeignore beside the manifests, else at the root: the
// places scan --files looks that are under the root.
func (s *Server) exclusions(abs string) (*files.Exclude, error) {
	dir := abs
	if info, err := os.Stat(abs); err == nil && !info.IsDir() {
		dir = filepath.Dir(abs)
	}
	for _, d := range []string{dir, s.root} {
		p := filepath.Join(d, files.IgnoreFileName)
		if info, err := os.Stat(p); err == nil && info.Mode().IsRegular() {
			// A link leading out of the root is refused, not skipped: its patterns would
			// change the verdict, and not applying them would too, silently.
			real, err := s.within(s.shown(p))
			if err != nil {
				return nil, err
			}
			patterns, err := files.ReadIgnoreFile(real)
			if err != nil {
				return nil, err
			}
			return files.NewExclude(patterns)
		}
	}
	return nil, nil
}

// readInventory reads an inventory file under the root, bounded and validated as eval
// reads one; errors name the file.
func (s *Server) readInventory(abs string) (*inventory.Document, error) {
	return inventory.ReadFile(abs)
}
