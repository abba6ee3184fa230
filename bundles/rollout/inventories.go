package rollout

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/report"
)

// FromInventories is a dry run over the inventory files (*.json) of dir, one cluster each,
// named by its file name: the current side is judged with current, the engine without the
// candidate. Files are read when their cluster is judged, so a run holds only as many
// inventories as it has workers.
func FromInventories(dir string, extra []string, current *engine.Engine) ([]Cluster, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("read inventories: %w", err)
	}
	var clusters []Cluster
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		path := filepath.Join(dir, e.Name())
		clusters = append(clusters, inventoryCluster(strings.TrimSuffix(e.Name(), ".json"), path, extra, current))
	}
	if len(clusters) == 0 {
		return nil, fmt.Errorf("%s holds no inventory (*.json)", dir)
	}
	return clusters, nil
}

func inventoryCluster(name, path string, extra []string, current *engine.Engine) Cluster {
	return Cluster{
		Name: name,
		Load: func(context.Context) (*inventory.Document, []string, error) {
			doc, err := inventory.ReadFile(path)
			if err != nil {
				return nil, nil, err
			}
			// As the fleet server judges a push: the next minor and the extra ones after it.
			targets := inventory.PlanTargets(doc.JudgedVersion(), extra)
			if len(targets) == 0 {
				return nil, nil, fmt.Errorf("%s: no target: its server version is unknown and no --target is after it", path)
			}
			return doc, targets, nil
		},
		Before: func(ctx context.Context, doc *inventory.Document, targets []string, now time.Time) (map[string]*report.TargetResult, error) {
			rep, err := current.Evaluate(ctx, doc, targets, now)
			if err != nil {
				return nil, err
			}
			out := make(map[string]*report.TargetResult, len(rep.Targets))
			for i := range rep.Targets {
				out[rep.Targets[i].Target] = &rep.Targets[i]
			}
			return out, nil
		},
	}
}
