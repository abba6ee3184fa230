package report

import (
	"fmt"
	"slices"
	"strings"
)

// GapGroup is the gaps of a report that share one cause: the same capability family and
// the same reason. A cluster whose agent predates the server's knowledge base misses every
// probe the newer bundle declares, each a gap of its own with the same words; read one per
// line they bury the cause, read as one group they are one fix. The dashboard's cluster page
// and the HTML export both show gaps grouped so.
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
func GroupGaps(gaps []Gap) []GapGroup {
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

// Collector is what the agent that collected an inventory said it collects with, as a fleet
// server stored it: its release, its kb version, and its bundles' revisions by name. Any of
// them may be unknown (empty).
type Collector struct {
	Version string
	KB      string
	Bundles map[string]string
}

// ProbeFix is what to do about a group of probe gaps of an inventory a fleet server judged,
// or "" when its reason has no fix to name (or it is not of probes). A probe the server's
// bundle declares and the agent did not collect is fixed by an agent that has that bundle's
// revision; the server does not know which agent release embeds which revision, so the fix
// names the revision (judged: the bundles that judged the report), not a release number.
// When the collector named nothing (an inventory exported and sent by `upgradescope push`,
// which cannot know what collected it), the fix is to collect again, by whatever means.
func ProbeFix(g GapGroup, judged []BundleInfo, by Collector) string {
	bundle, ok := g.Probes()
	if !ok {
		return ""
	}
	rev := ""
	for _, b := range judged {
		if b.Name == bundle {
			rev = b.Revision
		}
	}
	of, atRev := "the probes of "+bundle, "–"
	if rev != "" {
		of, atRev = of+" "+rev, rev
	}
	switch {
	case strings.HasPrefix(g.Reason, probeNotCollected):
		return "This inventory was collected without " + of + by.says(bundle) + ". Fix: " + by.recollect(bundle, atRev) +
			"; its next push is then judged in full. Until then the checks that read " + theseProbes(len(g.Capabilities)) + " cannot run."
	case strings.HasPrefix(g.Reason, probeRedeclared) && by.unknown():
		return "These probes were collected as another revision of " + bundle + " declares them. Fix: collect the inventory again with " +
			bundle + " " + atRev + " (an agent: upgrade it or let it fetch this server's bundles)."
	case strings.HasPrefix(g.Reason, probeRedeclared):
		return "The agent collected these probes as another revision of " + bundle + " declares them" + by.says(bundle) +
			". Fix: give the agent " + bundle + " " + atRev + " (upgrade it or let it fetch this server's bundles)."
	}
	return ""
}

// recollect is the fix for probes not collected: upgrade the agent that named itself, or,
// for a collector that did not, collect again with a release that has the bundle.
func (c Collector) recollect(bundle, atRev string) string {
	if c.unknown() {
		return "collect the inventory again with a release whose " + bundle + " is " + atRev + " or later (an agent: upgrade it, " +
			"or let it fetch this server's bundles with --bundle-url …/bundles/" + bundle + ")"
	}
	return "upgrade the agent to a release whose " + bundle + " is " + atRev + " or later, or let it fetch this server's bundles " +
		"(--bundle-url …/bundles/" + bundle + ")"
}

// unknown answers whether the collector named nothing: an agent always names its release.
func (c Collector) unknown() bool {
	return c.Version == "" && c.KB == "" && len(c.Bundles) == 0
}

// says is what the agent said it collects bundle with, as a clause: "" when it named nothing.
func (c Collector) says(bundle string) string {
	var parts []string
	if c.Version != "" {
		parts = append(parts, "upgradescope "+c.Version)
	}
	if rev, ok := c.Bundles[bundle]; ok {
		parts = append(parts, bundle+" "+rev)
	} else if bundle == "kb" && c.KB != "" {
		parts = append(parts, "kb "+c.KB)
	}
	if len(parts) == 0 {
		return ""
	}
	return ": the agent (" + strings.Join(parts, ", ") + ") predates them"
}

// theseProbes names n probes, thousands separated as the dashboard writes numbers.
func theseProbes(n int) string {
	if n == 1 {
		return "this probe"
	}
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return "these " + s + " probes"
}
