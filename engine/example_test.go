package engine_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/inventory"
)

// An engine built from the embedded rules and kb bundles judges an inventory at each
// target. The clock is an argument: the same inventory, targets and time give the same
// report. This inventory (testdata/teams) has a removed Ingress in a team's namespace and
// a cluster-scoped PodSecurityPolicy no team owns.
func ExampleEngine_Evaluate() {
	ctx := context.Background()
	eng, err := engine.New(ctx)
	if err != nil {
		log.Fatal(err)
	}
	inv, err := inventory.ReadFile("../testdata/teams/inventory.json")
	if err != nil {
		log.Fatal(err)
	}
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	rep, err := eng.Evaluate(ctx, inv, []string{"1.33"}, now)
	if err != nil {
		log.Fatal(err)
	}
	for _, t := range rep.Targets {
		fmt.Printf("%s: %s, score %d\n", t.Target, t.Verdict, t.Score)
		for _, f := range t.Findings {
			fmt.Printf("  %-7s %s %v\n", f.Severity, f.Key, f.Teams)
		}
	}
	// Output:
	// 1.33: blocked, score 50
	//   blocker removed-api/extensions/v1beta1/Ingress [payments]
	//   blocker removed-api/policy/v1beta1/PodSecurityPolicy []
	//   info    deprecated-api/core/v1/Endpoints [data]
}
