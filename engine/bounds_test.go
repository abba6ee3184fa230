package engine_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/report"
)

// Inputs within the documented bounds, shaped to be the costliest for the built-in rules, are
// judged within the default memory bound and with no builtin call refused. Each shape was
// quadratic, or built text the size of the inventory, before (issue 30, item 13): 10,000
// versions of one add-on image (claims and installs were grouped through functions given the
// whole sorted list), thousands of ignore rules (each finding's every object was tried against
// every rule), and 10,000 node groups of long names (a finding listed every node). The
// timeout is a minute, only so that a regression fails rather than hangs.
func TestTheCostliestInputsWithinTheBoundsAreJudged(t *testing.T) {
	tests := []struct {
		name   string
		inv    *inventory.Document
		ignore []report.IgnoreRule
		check  func(t *testing.T, r *report.Report)
	}{
		{
			name: "10,000 versions of an add-on image in 10,000 namespaces",
			inv:  cluster(func(d *inventory.Document) { d.WorkloadImages = addonVersions(10_000) }),
			check: func(t *testing.T, r *report.Report) {
				wantFinding(t, r, "chart-incompat/istio", "and 9980 more")
			},
		},
		{
			name: "10,000 node groups of long names on a runtime without lifecycle data",
			inv:  cluster(func(d *inventory.Document) { d.Nodes = nodeGroups(10_000) }),
			check: func(t *testing.T, r *report.Report) {
				wantFinding(t, r, "addon-no-data/cri-o", "and 9980 more.")
			},
		},
		{
			name:   "6,000 ignore rules aimed at other findings over 5,000 objects",
			inv:    cluster(func(d *inventory.Document) { d.APIUsage = removedIngresses(50, 100) }),
			ignore: ignoreRules(6000),
			check: func(t *testing.T, r *report.Report) {
				if r.Targets[0].Blockers == 0 || r.Targets[0].SuppressedCount != 0 {
					t.Errorf("blockers %d, suppressed %d: want the ingresses blocking, none suppressed", r.Targets[0].Blockers, r.Targets[0].SuppressedCount)
				}
			},
		},
	}
	eng := newEngine(t, engine.WithLimits(engine.Limits{Timeout: time.Minute}))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := eng.Evaluate(context.Background(), tt.inv, []string{"1.37"}, now, engine.WithIgnore(tt.ignore))
			if err != nil {
				t.Fatalf("Evaluate = %v", err)
			}
			tt.check(t, r)
		})
	}
}

func cluster(with func(*inventory.Document)) *inventory.Document {
	d := &inventory.Document{
		SchemaVersion: inventory.SchemaVersion, Source: inventory.SourceCluster, ServerVersion: "v1.36.0", CollectedAt: now,
		Capabilities: map[string]inventory.Capability{},
	}
	for _, c := range []string{"api-usage", "versions", "addons", "helm", "images", "crds", "nodes"} {
		d.Capabilities[c] = inventory.Capability{Available: true}
	}
	with(d)
	return d
}

func addonVersions(n int) []inventory.WorkloadImage {
	versions := make([]inventory.ImageVersion, n)
	for i := range versions {
		versions[i] = inventory.ImageVersion{Tag: fmt.Sprintf("1.21.%d", i), Namespaces: []string{fmt.Sprintf("ns-%05d", i)}}
	}
	return []inventory.WorkloadImage{{Repository: "docker.io/istio/pilot", Versions: versions}}
}

func nodeGroups(n int) []inventory.NodeGroup {
	groups := make([]inventory.NodeGroup, n)
	for i := range groups {
		groups[i] = inventory.NodeGroup{KubeletVersion: "v1.36.0", ContainerRuntime: "cri-o://1.33.2", Count: 1,
			Names: []string{fmt.Sprintf("node-%05d-%s", i, strings.Repeat("x", 200))}}
	}
	return groups
}

func removedIngresses(rows, objects int) []inventory.APIUsage {
	usage := make([]inventory.APIUsage, rows)
	for i := range usage {
		u := inventory.APIUsage{Group: "extensions", Version: "v1beta1", Kind: fmt.Sprintf("Ingress%d", i), Count: objects, Namespaces: map[string]int{}}
		if i == 0 {
			u.Kind = "Ingress"
		}
		for j := range objects {
			ns := fmt.Sprintf("ns-%d", j)
			u.Namespaces[ns]++
			u.Objects = append(u.Objects, inventory.ObjectRef{Namespace: ns, Name: fmt.Sprintf("o-%d", j)})
		}
		usage[i] = u
	}
	return usage
}

func ignoreRules(n int) []report.IgnoreRule {
	rules := make([]report.IgnoreRule, n)
	for i := range rules {
		rules[i] = report.IgnoreRule{Key: fmt.Sprintf("removed-api/other-%d", i), Namespace: "*", Reason: "r", Index: i}
	}
	return rules
}

// wantFinding fails unless a finding whose key starts with key has a title or a detail
// holding want.
func wantFinding(t *testing.T, r *report.Report, key, want string) {
	t.Helper()
	for _, f := range r.Targets[0].Findings {
		if strings.HasPrefix(f.Key, key) && (strings.Contains(f.Title, want) || strings.Contains(f.Detail, want)) {
			return
		}
	}
	var keys []string
	for _, f := range r.Targets[0].Findings {
		keys = append(keys, f.Key+": "+f.Detail)
	}
	t.Errorf("no finding %s… saying %q in %v", key, want, keys)
}
