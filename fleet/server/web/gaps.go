package web

import (
	"slices"
	"strings"

	"github.com/upgradescope/upgradescope/report"
)

// GapGroup is the gaps of a report that share one cause: the same capability family and
// the same reason. A cluster whose agent predates the server's knowledge base misses every
// probe the newer bundle declares, each a gap of its own with the same words; read one per
// line they bury the cause, read as one group they are one fix.
type GapGroup struct {
	// Family is the capability, or for probes "probes/<bundle>" (kb, custom/acme): the
	// bundle that declares them.
	Family string
	// Capabilities are the group's gaps' capabilities, in the report's order.
	Capabilities []string
	Required     bool
	Partial      bool
	Reason       string
	Skipped      []string
}

// Probes answers whether the group is of probes, and the bundle that declares them.
func (g GapGroup) Probes() (bundle string, ok bool) {
	return strings.CutPrefix(g.Family, "probes/")
}

// gapFamily is a gap's capability family: a probe's declaring bundle (the id's prefix, "kb"
// for "probes/kb/x", "custom/acme" for "probes/custom/acme/x"), else the capability itself.
func gapFamily(capability string) string {
	id, ok := strings.CutPrefix(capability, "probes/")
	if !ok {
		return capability
	}
	if i := strings.LastIndex(id, "/"); i > 0 {
		return "probes/" + id[:i]
	}
	return capability
}

// GroupGaps groups gaps by family and reason (GapGroup), required groups first and then in
// the order of each group's first gap; gaps that differ in requiredness or partiality stay
// apart, since they say different things about the verdict.
func GroupGaps(gaps []report.Gap) []GapGroup {
	type key struct {
		family, reason    string
		required, partial bool
	}
	index := map[key]int{}
	var out []GapGroup
	for _, g := range gaps {
		k := key{gapFamily(g.Capability), g.Reason, g.Required, g.Partial}
		i, ok := index[k]
		if !ok {
			i = len(out)
			index[k] = i
			out = append(out, GapGroup{Family: k.family, Required: g.Required, Partial: g.Partial, Reason: g.Reason})
		}
		out[i].Capabilities = append(out[i].Capabilities, g.Capability)
		out[i].Skipped = append(out[i].Skipped, g.Skipped...)
	}
	slices.SortStableFunc(out, func(a, b GapGroup) int {
		switch {
		case a.Required == b.Required:
			return 0
		case a.Required:
			return -1
		}
		return 1
	})
	return out
}

// Probe gap reasons as engine/facts words them: the fix depends on which.
const (
	probeNotCollected = "not collected:"
	probeRedeclared   = "collected for another declaration"
)

// probeFix is what to do about a group of probe gaps: a probe the server's bundle declares
// and the agent did not collect is fixed by an agent that has that bundle's revision. The
// fleet server does not know which agent release embeds which revision, so the fix names
// the revision, not a release number.
func (c *Cluster) probeFix(g GapGroup, bundle string) string {
	rev := ""
	for _, b := range c.ReportBundles {
		if b.Name == bundle {
			rev = b.Revision
		}
	}
	of := "the probes of " + bundle
	if rev != "" {
		of += " " + rev
	}
	n := len(g.Capabilities)
	switch {
	case strings.HasPrefix(g.Reason, probeNotCollected):
		return "This inventory was collected without " + of + c.agentSays(bundle) + ". Fix: upgrade the agent to a release whose " +
			bundle + " is " + orDash(rev) + " or later, or let it fetch this server's bundles (--bundle-url …/bundles/" + bundle +
			"); its next push is then judged in full. Until then the checks that read these " + plural(n, "probe") + " cannot run."
	case strings.HasPrefix(g.Reason, probeRedeclared):
		return "The agent collected these probes as another revision of " + bundle + " declares them" + c.agentSays(bundle) +
			". Fix: give the agent " + bundle + " " + orDash(rev) + " (upgrade it or let it fetch this server's bundles)."
	}
	return ""
}

// agentSays is what the cluster's agent said it collects with, as a clause: "" when it
// named nothing.
func (c *Cluster) agentSays(bundle string) string {
	var parts []string
	if c.AgentVersion != "" {
		parts = append(parts, "upgradescope "+c.AgentVersion)
	}
	named := false
	for _, b := range c.AgentBundles {
		if b.Name == bundle {
			parts, named = append(parts, bundle+" "+b.Revision), true
		}
	}
	if !named && bundle == "kb" && c.AgentKB != "" {
		parts = append(parts, "kb "+c.AgentKB)
	}
	if len(parts) == 0 {
		return ""
	}
	return ": the agent (" + strings.Join(parts, ", ") + ") predates them"
}

// gaps writes the report's gaps grouped by cause. When the verdict is unknown they are its
// cause and come first, above the findings (cause true); otherwise they follow them.
func (c *Cluster) gaps(d *doc, cause bool) {
	title := "Not assessed"
	if cause {
		title = "Why the verdict is unknown"
	}
	d.w(`<section id="gaps" aria-labelledby="gaps-h"><h2 id="gaps-h">%s</h2>`, title)
	if c.Result == nil || len(c.Result.NotAssessed) == 0 {
		d.w(`<p class="muted">Every capability was assessed.</p></section>` + "\n")
		return
	}
	groups := GroupGaps(c.Result.NotAssessed)
	if cause {
		required, causes := 0, 0
		for _, g := range groups {
			if g.Required {
				required += len(g.Capabilities)
				causes++
			}
		}
		verb := "were"
		if required == 1 {
			verb = "was"
		}
		d.w(`<p id="unknown-cause">%s %s not assessed, from %s. The score and the findings cover only what was assessed: they do not mean ready.</p>`,
			plural(required, "required input"), verb, plural(causes, "cause"))
	}
	d.w(`<ul class="gaps">`)
	for _, g := range groups {
		c.gapGroup(d, g)
	}
	d.w("</ul></section>\n")
}

func (c *Cluster) gapGroup(d *doc, g GapGroup) {
	kind := "optional: the verdict stands"
	if g.Required {
		kind = "required: the verdict is unknown without it"
	}
	partial := ""
	if g.Partial {
		partial = " (partial)"
	}
	bundle, probes := g.Probes()
	if !probes || len(g.Capabilities) == 1 {
		d.w(`<li data-capability="%s"><strong>%s</strong>%s, %s. Hides %s. <span class="muted">Why: %s</span>`,
			esc(g.Capabilities[0]), esc(g.Capabilities[0]), partial, kind, esc(hides(g.Capabilities[0])), esc(g.Reason))
	} else {
		if g.Required {
			kind = "required: the verdict is unknown without them"
		}
		d.w(`<li data-capability="%s" data-gaps="%d"><strong>%s probes of %s</strong>%s, %s. <span class="muted">Why: %s</span>`,
			esc(g.Family), len(g.Capabilities), thousands(len(g.Capabilities)), esc(bundle), partial, kind, esc(g.Reason))
	}
	if probes {
		if fix := c.probeFix(g, bundle); fix != "" {
			d.w(` <span class="fix">%s</span>`, esc(fix))
		}
	}
	if len(g.Skipped) > 0 {
		d.w(` <span class="muted">Skipped: %s</span>`, esc(strings.Join(g.Skipped[:min(len(g.Skipped), 20)], ", ")))
	}
	if probes && len(g.Capabilities) > 1 {
		d.w(`<details><summary>The %s probes</summary><p class="key">%s</p></details>`, thousands(len(g.Capabilities)),
			esc(strings.Join(g.Capabilities, ", ")))
	}
	d.w(`</li>`)
}
