package rollout_test

import (
	"context"
	"flag"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/bundles"
	"github.com/upgradescope/upgradescope/bundles/rollout"
	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/hack/corpus"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/policies"
	"github.com/upgradescope/upgradescope/report"
)

var fleetSize = flag.Int("fleet", 1000, "clusters in BenchmarkDryRunFleet")

// BenchmarkDryRunFleet is `bundle dry-run --inventories` over a fleet of big live clusters
// (hack/corpus.Cluster(500, seed): 500 namespaces, ~2,600 Helm releases, ~1,600 images, 230
// CRDs each) at two targets, with a new kb revision as the candidate: every cluster judged
// with the current set and with the candidate, on every CPU. Each cluster's inventory is
// made when it is judged, as a directory's file would be read then. Run it once:
//
//	go test -run XXX -bench DryRunFleet -benchtime 1x ./rollout [-args -fleet 1000]
func BenchmarkDryRunFleet(b *testing.B) {
	ctx := context.Background()
	current, err := engine.New(ctx)
	if err != nil {
		b.Fatal(err)
	}
	kb, err := bundles.ReadFS(policies.KB)
	if err != nil {
		b.Fatal(err)
	}
	kb.Manifest.Revision = "2099-01-01.1"
	candidate, err := engine.New(ctx, engine.WithBundle("candidate-kb.tar.gz", kb, ""))
	if err != nil {
		b.Fatal(err)
	}
	clusters := make([]rollout.Cluster, *fleetSize)
	for i := range clusters {
		clusters[i] = rollout.Cluster{
			Name: fmt.Sprintf("cluster-%04d", i),
			Load: func(context.Context) (*inventory.Document, []string, error) {
				return corpus.Cluster(500, i), []string{"1.36", "1.37"}, nil
			},
			Before: func(ctx context.Context, doc *inventory.Document, targets []string, now time.Time) (map[string]*report.TargetResult, error) {
				rep, err := current.Evaluate(ctx, doc, targets, now)
				if err != nil {
					return nil, err
				}
				out := map[string]*report.TargetResult{}
				for i := range rep.Targets {
					out[rep.Targets[i].Target] = &rep.Targets[i]
				}
				return out, nil
			},
		}
	}
	for b.Loop() {
		results, summary := rollout.Run(ctx, clusters, candidate, rollout.Options{Workers: runtime.GOMAXPROCS(0), Now: time.Now()})
		if len(results) != *fleetSize || len(summary.Unjudged)+len(summary.CandidateErrors) > 0 {
			b.Fatalf("summary %+v", summary)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N*(*fleetSize)), "ms/cluster")
}
