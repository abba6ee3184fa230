package cluster

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/upgradescope/upgradescope/collectors/files"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/kb"
)

// Options for Collect.
type Options struct {
	Flagged   []FlaggedKind
	TeamLabel string
	// StepTimeout bounds each step; a step that runs out says so in its capability.
	StepTimeout time.Duration
	// Observe is what to record: the kinds of Helm's stored manifests, the pod images
	// observed closely (the zero value observes every image), the probes run (nil or an
	// empty set observes nothing, and the document has no probes section). The engine
	// supplies it (Engine.Observe).
	Observe kb.Observe
	// PodPassEvery lists pods on one collection in N and reuses that pass's images, and what
	// the probes saw in its Pods, in between (the agent's --pod-pass-every); 0 or 1 lists them
	// every time. A change to the Helm releases or GitOps charts, which can name a new add-on,
	// forces the next pass.
	PodPassEvery int
	// Progress, when set, is told as each step starts and ends, on the collecting goroutine;
	// it must not block. The collector reports; what to show is the caller's business.
	Progress func(Step)
	// KubeletConfigz reads the kubelet configuration of a few nodes (MaxConfigzNodes) from
	// their configz endpoint through the API server's node proxy. It needs get on
	// nodes/proxy, which reaches the kubelet's API, so it is off unless asked for; off, the
	// kubelet-config capability says so.
	KubeletConfigz bool
}

// Step is the progress of one collection step.
type Step struct {
	// Name is the capability the step fills ("versions", "api-usage", …), or "probes" or
	// "gitops".
	Name string
	// Index and Total place the step among the collection's steps, from 1.
	Index, Total int
	// Done is false as the step starts. Once it is true, Found counts what the step added
	// to the document, in Unit ("nodes", "objects at flagged APIs", …), and Capability is
	// what the step could see (nil for probes and gitops, which record what they could not
	// see elsewhere: each probe's observation says whether it is available).
	Done       bool
	Found      int
	Unit       string
	Capability *inventory.Capability
}

// step is one collection step: run fills its part of the document, found counts it.
type step struct {
	name  string
	run   func(context.Context)
	found func() (int, string)
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
	steps := c.steps(doc, opts)
	for i, s := range steps {
		report := Step{Name: s.name, Index: i + 1, Total: len(steps)}
		opts.report(report)
		sctx, cancel := context.WithTimeout(ctx, opts.StepTimeout)
		s.run(sctx)
		cancel()
		report.Done = true
		report.Found, report.Unit = s.found()
		if c, ok := doc.Capabilities[s.name]; ok {
			report.Capability = &c
		}
		opts.report(report)
	}
	c.pods.noteCharts(doc)
	c.noteUnreadManifests(doc)
	return doc
}

// noteUnreadManifests makes api-usage partial when a Helm manifest document was past its
// bounds: the document might hold a removed API the next helm upgrade writes, and helm is an
// optional capability, so without this the verdict could read ready although nobody judged
// it, as an unread file does in files mode.
func (c *Collector) noteUnreadManifests(doc *inventory.Document) {
	capability, ok := doc.Capabilities[inventory.CapAPIUsage]
	if len(c.manifestsUnread) == 0 || !ok || !capability.Available {
		return
	}
	capability.Partial = true
	capability.Skipped = inventory.CapSkipped(append(capability.Skipped, c.manifestsUnread...))
	capability.Reason = strings.TrimPrefix(capability.Reason+"; ", "; ") +
		fmt.Sprintf("%d Helm manifest document(s) past their bounds not judged", len(c.manifestsUnread))
	doc.Capabilities[inventory.CapAPIUsage] = capability
}

// manifestOptions read Helm's stored manifests for their API usage only: the kinds to record,
// no images and no probes, which the pod pass and the probes step see in the live objects.
func (o Options) manifestOptions() files.Options {
	return files.Options{Observe: kb.Observe{Watched: o.Observe.Watched, Known: o.Observe.Known, BuiltinGroups: o.Observe.BuiltinGroups}}
}

func (o Options) report(s Step) {
	if o.Progress != nil {
		o.Progress(s)
	}
}

// steps are the collection's steps in the order they run; every step but probes and gitops
// fills the capability it is named after (probes and gitops record their own). Some fill
// pre-flight capabilities too, from what they list anyway: versions the node state (its
// nodes) and the control-plane static pods (its kube-system pods), addons the pods (its pod
// pass), and crds the conversion webhooks. Disruption budgets are listed before the pod
// pass, which names the pods each selects.
func (c *Collector) steps(doc *inventory.Document, opts Options) []step {
	examined := 0
	fills := func(name string, run func(context.Context) inventory.Capability) func(context.Context) {
		return func(ctx context.Context) { doc.Capabilities[name] = run(ctx) }
	}
	pf := c.newPreflightPass()
	steps := []step{
		{inventory.CapVersions, fills(inventory.CapVersions, func(ctx context.Context) inventory.Capability { return c.versions(ctx, doc, pf) }),
			func() (int, string) { return nodeCount(doc), "nodes" }},
		{"namespaces", fills("namespaces", func(ctx context.Context) inventory.Capability {
			if err := c.Namespaces(ctx, doc, opts.TeamLabel); err != nil {
				return unavailable("namespaces", err)
			}
			return inventory.Capability{Available: true}
		}), func() (int, string) { return len(doc.Namespaces), "namespaces" }},
		{inventory.CapAPIUsage, fills(inventory.CapAPIUsage, func(ctx context.Context) inventory.Capability { return c.APIUsage(ctx, doc, opts.Flagged) }),
			func() (int, string) { return objectCount(doc.APIUsage), "objects at flagged APIs" }},
		{inventory.CapDeprecatedCalls, fills(inventory.CapDeprecatedCalls, func(ctx context.Context) inventory.Capability { return c.DeprecatedCalls(ctx, doc) }),
			func() (int, string) { return len(doc.DeprecatedCalls), "deprecated APIs called" }},
		{inventory.CapDisruptionBudgets, fills(inventory.CapDisruptionBudgets, pf.disruptionBudgets),
			func() (int, string) { return len(pf.budgets.byKey), "disruption budgets" }},
		{inventory.CapAddons, fills(inventory.CapAddons, func(ctx context.Context) inventory.Capability {
			return c.addonsPass(ctx, doc, opts.PodPassEvery, opts.Observe.Images, pf)
		}),
			func() (int, string) { return len(doc.WorkloadImages), "workload images" }},
		{"probes", func(ctx context.Context) { examined = c.probes(ctx, doc, opts.Observe.Probes, c.pods.reused) },
			func() (int, string) { return examined, "objects examined" }},
		{inventory.CapCRDs, fills(inventory.CapCRDs, func(ctx context.Context) inventory.Capability { return c.crds(ctx, doc, pf) }),
			func() (int, string) { return len(doc.CRDs), "CRDs" }},
		{inventory.CapHelm, fills(inventory.CapHelm, func(ctx context.Context) inventory.Capability { return c.Helm(ctx, doc, opts.manifestOptions()) }),
			func() (int, string) { return len(doc.HelmReleases), "Helm releases" }},
		{"gitops", func(ctx context.Context) { c.GitOps(ctx, doc) },
			func() (int, string) { return len(doc.GitopsCharts), "Argo CD and Flux charts" }},
	}
	return append(steps, c.preflightSteps(doc, opts, pf)...)
}

func nodeCount(doc *inventory.Document) int {
	n := 0
	for _, g := range doc.Nodes {
		n += g.Count
	}
	return n
}

func objectCount(usage []inventory.APIUsage) int {
	n := 0
	for _, u := range usage {
		n += u.Count
	}
	return n
}
