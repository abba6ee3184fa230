package main

import (
	"context"

	"github.com/upgradescope/upgradescope/bundles"
	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/server"
)

// wireDryRun turns POST /api/v1/bundles/dry-run on when serve has a --verification-key:
// a candidate must verify with it, and joins the --bundle set serve started with (loaded)
// as `bundle dry-run --inventories` builds it. Without a key the endpoint says which flag
// is missing.
func (f *serveFlags) wireDryRun(cfg *server.Config, fixed []engine.Option, loaded []*bundles.Fetched) error {
	vc, err := f.bundles.verification()
	if err != nil || vc == nil {
		return err
	}
	cfg.Verification = vc
	cfg.WithCandidate = func(ctx context.Context, cand *bundles.Fetched) (*engine.Engine, error) {
		return candidateEngine(ctx, fixed, loaded, cand)
	}
	return nil
}
