package server

import (
	"context"
	"time"
)

// retentionLock names the database-wide lock a pruning replica holds, so replicas on one
// Postgres never prune at once.
const retentionLock = "upgradescope-retention"

// runRetention prunes snapshots older than keep at once and then daily until ctx ends; a
// keep of 0 keeps everything. Each cluster's latest snapshot and every snapshot a fleet
// cell points at stay (the store's Prune).
func (s *Server) runRetention(ctx context.Context, keep time.Duration) {
	if keep <= 0 {
		return
	}
	for {
		s.prune(ctx, keep)
		select {
		case <-ctx.Done():
			return
		case <-time.After(24 * time.Hour):
		}
	}
}

func (s *Server) prune(ctx context.Context, keep time.Duration) {
	cutoff := s.cfg.Now().Add(-keep)
	ran, err := s.cfg.Store.WithLock(ctx, retentionLock, func(ctx context.Context) error {
		n, err := s.cfg.Store.Prune(ctx, cutoff)
		s.metrics.pruned.Add(float64(n))
		if n > 0 {
			s.cfg.Logger.Info("retention: pruned snapshots", "deleted", n, "before", cutoff.UTC().Format(time.RFC3339))
		}
		return err
	})
	switch {
	case err != nil:
		s.metrics.pruneFailures.Inc()
		s.cfg.Logger.Error("retention: prune failed; the next pass tries again", "err", err)
	case !ran:
		s.cfg.Logger.Info("retention: another replica is pruning")
	}
}
