package engine

import (
	"sort"
	"strings"

	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/upgradescope/upgradescope/inventory"
)

// largeList is where a list of the input starts to count as large: the built-in rules judge
// a few hundred entries of any list in milliseconds.
const largeList = 1000

var printer = message.NewPrinter(language.English)

// LargeInput is what is large in the input of an evaluation of the built-in rules stopped at
// a bound: the rules are the same for every input; the input is what its user can narrow, or
// the bound what they can raise.
type LargeInput struct {
	// Inventory are the inventory's lists of at least largeList entries, largest first:
	// "10,000 image versions".
	Inventory []string
	// IgnoreRules counts the suppression rules, when at least largeList.
	IgnoreRules int
}

// String is "10,000 image versions, 2,200 objects and 6,972 ignore rules".
func (l *LargeInput) String() string {
	parts := append([]string(nil), l.Inventory...)
	if l.IgnoreRules > 0 {
		parts = append(parts, printer.Sprintf("%d ignore rules", l.IgnoreRules))
	}
	if len(parts) < 2 {
		return strings.Join(parts, "")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
}

// largeInput is what is large in inv and the ignore rules, nil when nothing is.
func largeInput(inv *inventory.Document, ignoreRules int) *LargeInput {
	lists := []struct {
		n    int
		noun string
	}{
		{objectRefs(inv), "object"},
		{imageVersions(inv), "image version"},
		{len(inv.HelmReleases), "Helm release"},
		{len(inv.GitopsCharts), "GitOps chart"},
		{len(inv.Namespaces), "namespace"},
		{len(inv.Nodes), "node group"},
		{len(inv.ControlPlane), "control-plane component"},
		{len(inv.CRDs), "CRD"},
		{len(inv.DeprecatedCalls), "deprecated API call"},
		{auditRows(inv.AuditCalls), "audit caller row"},
		{len(inv.APIUsage) + len(inv.APIAuthorshipUnknown) + len(inv.OrphanUsage), "API usage row"},
	}
	sort.SliceStable(lists, func(i, j int) bool { return lists[i].n > lists[j].n })
	l := &LargeInput{}
	for _, list := range lists {
		if list.n >= largeList {
			l.Inventory = append(l.Inventory, printer.Sprintf("%d %ss", list.n, list.noun))
		}
	}
	if ignoreRules >= largeList {
		l.IgnoreRules = ignoreRules
	}
	if len(l.Inventory) == 0 && l.IgnoreRules == 0 {
		return nil
	}
	return l
}

// objectRefs counts the objects the input names: those of API usage rows, Helm releases'
// manifests, CRDs' usage and probes.
func objectRefs(inv *inventory.Document) int {
	n := 0
	for _, rows := range [][]inventory.APIUsage{inv.APIUsage, inv.APIAuthorshipUnknown, inv.OrphanUsage} {
		n += usageObjects(rows)
	}
	for _, r := range inv.HelmReleases {
		n += usageObjects(r.ManifestAPIs)
	}
	for _, c := range inv.CRDs {
		n += usageObjects(c.Usage)
	}
	for _, p := range inv.Probes {
		n += len(p.Objects)
	}
	return n
}

func usageObjects(rows []inventory.APIUsage) int {
	n := 0
	for _, u := range rows {
		n += len(u.Objects)
	}
	return n
}

func imageVersions(inv *inventory.Document) int {
	n := 0
	for _, w := range inv.WorkloadImages {
		n += len(w.Versions)
	}
	return n
}

// auditRows counts the callers and omitted rows of the audit section.
func auditRows(a *inventory.AuditCalls) int {
	if a == nil {
		return 0
	}
	return len(a.Callers) + len(a.Omitted)
}
