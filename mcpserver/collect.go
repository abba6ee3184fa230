package mcpserver

import (
	"context"
	"fmt"
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
	p, err := s.besideOrAtRoot(dirOf(abs), files.IgnoreFileName)
	if p == "" || err != nil {
		return nil, err
	}
	patterns, err := files.ReadIgnoreFile(p)
	if err != nil {
		return nil, err
	}
	return files.NewExclude(patterns)
}
