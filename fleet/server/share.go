package server

import (
	"maps"
	"slices"

	"github.com/upgradescope/upgradescope/inventory"
)

// A team-scoped reader is answered from its teams' share of a cluster, never from the whole
// cluster cut afterwards: a title's object count, a finding's severity, a score or a verdict
// computed over every namespace would tell it about other teams' objects (issue 30, item 14).
//
// The share is the cluster's inventory with every namespace another team owns left out:
// what is in the scope's teams' namespaces, what is in namespaces no team owns, and what is
// in none (cluster-scoped objects, nodes, the control plane, CRD definitions). What no team
// owns is everybody's: it can stop every team's upgrade (report.JudgeTeam), so every share
// judges it and shows it, as the gate always did; a namespace to keep from other teams is
// labelled or mapped (--team-map). The APIs the apiserver saw called at a deprecated version
// name no namespace and no object, and a call still made stops every team's upgrade alike:
// every share holds them, as it holds the nodes. What the inventory aggregates without saying
// where it was seen cannot be split by namespace and is withheld: the label sets of an image
// version also running outside the share, why a capability was not assessed. A list the agent cut at its bound cannot be split either: the share fails
// closed there, not assessed rather than judged on a part.

// shareOf is doc (the team map applied) as the scope's share; a fleet scope's is doc. doc is
// not changed.
func shareOf(doc *inventory.Document, sc scope) *inventory.Document {
	if sc.fleet {
		return doc
	}
	sh := share{sc: sc, owner: namespaceTeams(doc)}
	out := *doc
	out.Capabilities = withheldCapabilities(doc.Capabilities)
	out.APIUsage = sh.usages(doc.APIUsage, out.Capabilities)
	out.APIAuthorshipUnknown = sh.usages(doc.APIAuthorshipUnknown, out.Capabilities)
	out.OrphanUsage = sh.usages(doc.OrphanUsage, out.Capabilities)
	out.CRDs = sh.crds(doc.CRDs, out.Capabilities)
	out.HelmReleases = keep(doc.HelmReleases, func(r inventory.HelmRelease) bool { return sh.visible(r.Namespace) })
	out.GitopsCharts = keep(doc.GitopsCharts, sh.seesChart)
	out.WorkloadImages = sh.images(doc.WorkloadImages, out.Capabilities)
	// Containers no bundle observes are not judged; how many the rest of the cluster runs
	// is not the share's to know.
	out.WorkloadImagesOmitted = 0
	out.Probes = sh.probes(doc.Probes)
	out.Preflight = sh.preflight(doc.Preflight, out.Capabilities)
	out.Namespaces = keep(doc.Namespaces, func(ns inventory.Namespace) bool { return sh.visible(ns.Name) })
	out.AuditCalls = sh.auditCalls(doc.AuditCalls)
	return &out
}

// share decides which namespaces a scope's share holds.
type share struct {
	sc    scope
	owner map[string]string // namespace → team, for namespaces with one
}

// visible answers whether the share holds namespace ns: one of the scope's teams' or of no
// team's ("" is no namespace: a cluster-scoped object).
func (sh share) visible(ns string) bool {
	team := sh.owner[ns]
	return team == "" || sh.sc.sees(team)
}

// seesChart answers whether both the namespace a GitOps chart is declared in and the one it
// deploys to are in the share.
func (sh share) seesChart(c inventory.GitopsChart) bool {
	return sh.visible(c.Namespace) && (c.TargetNamespace == "" || sh.visible(c.TargetNamespace))
}

// withheldReason replaces a reason a team-scoped reader is not told: it may name any object.
const withheldReason = "withheld from team-scoped readers: the reason may name other teams' objects"

// unattributable is the reason a capability is partial in a share: part of what it
// collected cannot be told apart by namespace.
const unattributable = "partial for team-scoped readers: the inventory cut a list at its bound, so what it left out cannot be told apart by namespace"

// withheldCapabilities are caps with their reasons and skipped lists withheld. Every
// capability not assessed whole has the same reason, so whether the agent gave one says
// nothing either.
func withheldCapabilities(caps map[string]inventory.Capability) map[string]inventory.Capability {
	out := make(map[string]inventory.Capability, len(caps))
	for name, c := range caps {
		c.Reason, c.Skipped = withheld(c.Available && !c.Partial), nil
		out[name] = c
	}
	return out
}

// withheld is the reason a share gives for something assessed whole ("") or not.
func withheld(whole bool) string {
	if whole {
		return ""
	}
	return withheldReason
}

// markPartial makes an available capability partial: the share could not be assessed whole.
func markPartial(caps map[string]inventory.Capability, name string) {
	if c, ok := caps[name]; ok && c.Available {
		caps[name] = inventory.Capability{Available: true, Partial: true, Reason: unattributable}
	}
}

// usages are the rows' share, rows left with nothing dropped.
func (sh share) usages(rows []inventory.APIUsage, caps map[string]inventory.Capability) []inventory.APIUsage {
	var out []inventory.APIUsage
	for _, u := range rows {
		if u.NamespacesOmitted > 0 {
			markPartial(caps, inventory.CapAPIUsage)
		}
		if c, ok := sh.usage(u); ok {
			out = append(out, c)
		}
	}
	return out
}

// usage is one row's share. The per-namespace counts are exact, so the count is; objects
// past the row's list stay counted in ObjectsOmitted. False when the share has none.
func (sh share) usage(u inventory.APIUsage) (inventory.APIUsage, bool) {
	c := u
	c.Namespaces, c.Count, c.NamespacesOmitted = map[string]int{}, 0, 0
	for ns, n := range u.Namespaces {
		if sh.visible(ns) {
			c.Namespaces[ns] = n
			c.Count += n
		}
	}
	c.Objects = keep(u.Objects, func(o inventory.ObjectRef) bool { return sh.visible(o.Namespace) })
	c.Count = max(c.Count, len(c.Objects)) // a row whose counts miss a listed namespace
	c.ObjectsOmitted = c.Count - len(c.Objects)
	return c, c.Count > 0
}

func (sh share) crds(crds []inventory.CRD, caps map[string]inventory.Capability) []inventory.CRD {
	out := make([]inventory.CRD, len(crds))
	for i, c := range crds {
		c.Usage = sh.usages(c.Usage, caps)
		out[i] = c
	}
	return out
}

// images are the image versions running in the share. A version's label sets cannot be
// told apart by namespace: they are kept only when every namespace it runs in is the
// share's.
func (sh share) images(images []inventory.WorkloadImage, caps map[string]inventory.Capability) []inventory.WorkloadImage {
	var out []inventory.WorkloadImage
	for _, img := range images {
		var versions []inventory.ImageVersion
		for _, v := range img.Versions {
			if c, ok := sh.imageVersion(v, caps); ok {
				versions = append(versions, c)
			}
		}
		if len(versions) > 0 {
			img.Versions = versions
			out = append(out, img)
		}
	}
	return out
}

func (sh share) imageVersion(v inventory.ImageVersion, caps map[string]inventory.Capability) (inventory.ImageVersion, bool) {
	c := v
	c.Namespaces = keep(v.Namespaces, sh.visible)
	c.Objects = keep(v.Objects, func(o inventory.ObjectRef) bool { return sh.visible(o.Namespace) })
	whole := len(c.Namespaces) == len(v.Namespaces) && v.NamespacesOmitted == 0
	if v.NamespacesOmitted > 0 {
		markPartial(caps, inventory.CapAddons)
	}
	c.NamespacesOmitted = 0
	if !whole {
		c.LabelSets, c.LabelSetsOmitted = nil, 0
		if v.ObjectsOmitted > 0 {
			// How many of the unlisted workloads are the share's is not known: one keeps an
			// annotation on the listed ones from taking the finding whole.
			c.ObjectsOmitted = 1
		}
	}
	return c, len(c.Namespaces) > 0 || len(c.Objects) > 0
}

// probes are each observation's share. Counts and values are those of the share's listed
// objects; an observation whose list was cut cannot be split and is not available.
func (sh share) probes(probes []inventory.Probe) []inventory.Probe {
	out := make([]inventory.Probe, len(probes))
	for i, p := range probes {
		c := p
		c.Reason = withheld(p.Available)
		c.Objects = keep(p.Objects, func(o inventory.ProbeObject) bool { return sh.visible(o.Namespace) })
		if p.ObjectsOmitted > 0 {
			c.Available, c.Reason, c.Objects = false, unattributable, nil
		}
		c.Count, c.ObjectsOmitted = len(c.Objects), 0
		c.Examined = c.Count // how many the rest of the cluster had is not the share's
		c.Values, c.ValuesOmitted = probeValues(c.Objects, p.Probe.Values)
		out[i] = c
	}
	return out
}

// probeValues tallies the objects' values as the collector does: each distinct value with
// the objects it was found in, the first inventory.MaxProbeValues in sort order.
func probeValues(objects []inventory.ProbeObject, keepValues bool) ([]inventory.ProbeValue, int) {
	if !keepValues {
		return nil, 0
	}
	counts := map[string]int{}
	for _, o := range objects {
		for _, v := range o.Values {
			counts[v]++
		}
	}
	var out []inventory.ProbeValue
	omitted := 0
	for _, v := range slices.Sorted(maps.Keys(counts)) {
		if len(out) == inventory.MaxProbeValues {
			omitted += counts[v]
			continue
		}
		out = append(out, inventory.ProbeValue{Value: v, Count: counts[v]})
	}
	return out, omitted
}

// keep is the elements of in that ok accepts, in a new slice (nil when none).
func keep[T any](in []T, ok func(T) bool) []T {
	var out []T
	for _, x := range in {
		if ok(x) {
			out = append(out, x)
		}
	}
	return out
}

// preflight is the pre-flight section's share: the budgets, drain pods and placements in
// the share's namespaces; webhooks, aggregated APIs, conversions, nodes and components are
// cluster-wide, everybody's, and kept whole. A namespaced list the agent cut at its bound
// cannot be split, and its capability becomes partial.
func (sh share) preflight(p *inventory.Preflight, caps map[string]inventory.Capability) *inventory.Preflight {
	if p == nil {
		return nil
	}
	out := *p
	out.DisruptionBudgets = keep(p.DisruptionBudgets, func(b inventory.DisruptionBudget) bool { return sh.visible(b.Object.Namespace) })
	out.Placements = keep(p.Placements, func(pl inventory.Placement) bool { return sh.visible(pl.Object.Namespace) })
	out.DisruptionBudgetsOmitted, out.PlacementsOmitted = 0, 0
	if p.DisruptionBudgetsOmitted > 0 {
		markPartial(caps, inventory.CapDisruptionBudgets)
	}
	if p.PlacementsOmitted > 0 {
		markPartial(caps, inventory.CapPods)
	}
	if p.Drain != nil {
		d := inventory.DrainPods{Unreplicated: sh.pods(p.Drain.Unreplicated, caps), LocalStorage: sh.pods(p.Drain.LocalStorage, caps)}
		// How many pods the rest of the cluster runs is not the share's to know.
		d.Examined = d.Unreplicated.Count + d.LocalStorage.Count
		out.Drain = &d
	}
	return &out
}

// pods is a drain list's share: the listed pods in the share's namespaces.
func (sh share) pods(l inventory.PodList, caps map[string]inventory.Capability) inventory.PodList {
	if l.ObjectsOmitted > 0 {
		markPartial(caps, inventory.CapPods)
	}
	kept := keep(l.Objects, func(o inventory.ObjectRef) bool { return sh.visible(o.Namespace) })
	return inventory.PodList{Count: len(kept), Objects: kept}
}
