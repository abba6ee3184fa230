package cluster

import (
	"context"
	"time"

	"github.com/upgradescope/upgradescope/collectors/files"
	"github.com/upgradescope/upgradescope/inventory"
)

// Options for Collect.
type Options struct {
	Flagged   []FlaggedKind
	TeamLabel string
	// StepTimeout bounds each step; a step that runs out says so in its capability.
	StepTimeout time.Duration
	// Manifest says which APIs of Helm's stored manifests to record.
	Manifest files.Options
	// Images says which pod images to observe closely; the zero value observes every image.
	// The engine supplies it from the add-on registry (Engine.ImageWatch).
	Images inventory.ImageWatch
	// PodPassEvery lists pods on one collection in N and reuses that pass's images in between
	// (the agent's --pod-pass-every); 0 or 1 lists them every time. A change to the Helm
	// releases or GitOps charts, which can name a new add-on, forces the next pass.
	PodPassEvery int
}

// Collect runs every step in order; a step that fails never fails the scan, it only says what
// it could not see.
func (c *Collector) Collect(ctx context.Context, collectedAt time.Time, opts Options) *inventory.Document {
	doc := &inventory.Document{
		SchemaVersion: inventory.SchemaVersion,
		Source:        inventory.SourceCluster,
		CollectedAt:   collectedAt.UTC().Truncate(time.Second),
		Capabilities:  map[string]inventory.Capability{},
		APIUsage:      []inventory.APIUsage{},
	}
	step := func(name string, run func(context.Context) inventory.Capability) {
		sctx, cancel := context.WithTimeout(ctx, opts.StepTimeout)
		defer cancel()
		doc.Capabilities[name] = run(sctx)
	}
	step(inventory.CapVersions, func(ctx context.Context) inventory.Capability { return c.Versions(ctx, doc) })
	step("namespaces", func(ctx context.Context) inventory.Capability {
		if err := c.Namespaces(ctx, doc, opts.TeamLabel); err != nil {
			return unavailable("namespaces", err)
		}
		return inventory.Capability{Available: true}
	})
	step(inventory.CapAPIUsage, func(ctx context.Context) inventory.Capability { return c.APIUsage(ctx, doc, opts.Flagged) })
	step(inventory.CapDeprecatedCalls, func(ctx context.Context) inventory.Capability { return c.DeprecatedCalls(ctx, doc) })
	step(inventory.CapAddons, func(ctx context.Context) inventory.Capability {
		return c.addonsPass(ctx, doc, opts.PodPassEvery, opts.Images)
	})
	step(inventory.CapCRDs, func(ctx context.Context) inventory.Capability { return c.CRDs(ctx, doc) })
	step(inventory.CapHelm, func(ctx context.Context) inventory.Capability { return c.Helm(ctx, doc, opts.Manifest) })
	gctx, cancel := context.WithTimeout(ctx, opts.StepTimeout)
	defer cancel()
	c.GitOps(gctx, doc)
	c.pods.noteCharts(doc)
	return doc
}
