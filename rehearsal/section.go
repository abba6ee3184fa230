package rehearsal

import (
	"cmp"
	"fmt"
	"slices"
	"unicode/utf8"

	"github.com/upgradescope/upgradescope/inventory"
)

// record is one object the server refused or that was not replayed.
func record(it *item, reason, message string) inventory.RehearsalObject {
	o := inventory.RehearsalObject{
		APIVersion: it.obj.GetAPIVersion(), Kind: it.obj.GetKind(),
		OriginalAPIVersion: it.src.OriginalAPIVersion,
		Namespace:          it.obj.GetNamespace(), Name: it.obj.GetName(),
		Source: it.src.Source, Reason: reason, Message: redactSecret(it.obj, message),
		FieldManager: fieldManager(it.src),
	}
	return bound(o)
}

func skippedRecord(s Skipped) inventory.RehearsalObject {
	return bound(inventory.RehearsalObject{
		APIVersion: s.APIVersion, Kind: s.Kind, Namespace: s.Namespace, Name: s.Name,
		Source: s.Source, Reason: s.Reason, Message: s.Message,
	})
}

// bound keeps one record within the section's bounds: the message at MaxRehearsalMessage
// bytes, every other string at MaxStringLength characters.
func bound(o inventory.RehearsalObject) inventory.RehearsalObject {
	b := inventory.BoundString
	o.APIVersion, o.Kind, o.OriginalAPIVersion = b(o.APIVersion), b(o.Kind), b(o.OriginalAPIVersion)
	o.Namespace, o.Name, o.Reason, o.FieldManager = b(o.Namespace), b(o.Name), b(o.Reason), b(o.FieldManager)
	o.Source.File, o.Source.HelmRelease, o.Source.Application = b(o.Source.File), b(o.Source.HelmRelease), b(o.Source.Application)
	o.Message = cutBytes(o.Message, inventory.MaxRehearsalMessage)
	return o
}

// cutBytes cuts s to at most n bytes on a rune boundary, ending in "…" when cut.
func cutBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const ellipsis = "…"
	cut := n - len(ellipsis)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + ellipsis
}

// section sorts and bounds what the replay recorded.
func (r *replayer) section(s *Server, target string, objects, converted int) *inventory.Rehearsal {
	out := &inventory.Rehearsal{
		Target: target, ServerVersion: s.GitVersion, Server: s.How,
		Objects: objects, Accepted: r.accepted, Converted: converted,
	}
	out.Rejections, out.RejectionsOmitted = sortBounded(r.rejected)
	out.NotReplayed, out.NotReplayedOmitted = sortBounded(r.unreplayed)
	return out
}

func sortBounded(list []inventory.RehearsalObject) ([]inventory.RehearsalObject, int) {
	slices.SortFunc(list, compareRecords)
	if len(list) <= inventory.MaxRehearsalItems {
		return list, 0
	}
	return list[:inventory.MaxRehearsalItems], len(list) - inventory.MaxRehearsalItems
}

// compareRecords orders by source (file and line, release, application, live), then by
// object, so a report lists them in the order of the files. It compares every field, so the
// order does not depend on which of the concurrent requests answered first.
func compareRecords(a, b inventory.RehearsalObject) int {
	return cmp.Or(
		cmp.Compare(a.Source.File, b.Source.File), cmp.Compare(a.Source.Line, b.Source.Line),
		cmp.Compare(a.Source.HelmRelease, b.Source.HelmRelease),
		cmp.Compare(a.Source.Application, b.Source.Application),
		cmp.Compare(fmt.Sprint(a.Source.Live), fmt.Sprint(b.Source.Live)),
		cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Name, b.Name),
		cmp.Compare(a.APIVersion, b.APIVersion), cmp.Compare(a.Reason, b.Reason), cmp.Compare(a.Message, b.Message),
		cmp.Compare(a.OriginalAPIVersion, b.OriginalAPIVersion), cmp.Compare(a.FieldManager, b.FieldManager),
	)
}

// Capability is CapRehearsal for a section: available, and partial when anything was not
// replayed, naming how many and the reasons.
func Capability(sec *inventory.Rehearsal) inventory.Capability {
	n := len(sec.NotReplayed) + sec.NotReplayedOmitted
	if n == 0 {
		return inventory.Capability{Available: true}
	}
	counts := map[string]int{}
	for _, o := range sec.NotReplayed {
		counts[o.Reason]++
	}
	reasons := make([]string, 0, len(counts))
	for reason, c := range counts {
		reasons = append(reasons, fmt.Sprintf("%d %s", c, reason))
	}
	slices.Sort(reasons)
	var skipped []string
	for _, o := range sec.NotReplayed {
		skipped = append(skipped, describe(o))
	}
	reason := fmt.Sprintf("%d of %d objects not replayed into the %s API server (%s)", n, sec.Objects, sec.Target, joinReasons(reasons, sec.NotReplayedOmitted))
	return inventory.Capability{Available: true, Partial: true, Reason: inventory.BoundString(reason), Skipped: inventory.CapSkipped(skipped)}
}

func joinReasons(reasons []string, omitted int) string {
	s := ""
	for i, r := range reasons {
		if i > 0 {
			s += ", "
		}
		s += r
	}
	if omitted > 0 {
		s += fmt.Sprintf(", %d more past the list's bound", omitted)
	}
	return s
}

// describe names one record for a capability's skipped list: "Deployment shop/web
// (deploy.yaml:12): crd missing".
func describe(o inventory.RehearsalObject) string {
	name := o.Kind + " " + o.Name
	if o.Namespace != "" {
		name = o.Kind + " " + o.Namespace + "/" + o.Name
	}
	return inventory.BoundString(fmt.Sprintf("%s (%s): %s", name, SourceString(o.Source), o.Reason))
}

// SourceString says where an object came from: "deploy.yaml:12", "Helm release web/shop",
// "Argo CD application argocd/shop", "live".
func SourceString(s inventory.RehearsalSource) string {
	switch {
	case s.File != "" && s.Line > 0:
		return fmt.Sprintf("%s:%d", s.File, s.Line)
	case s.File != "":
		return s.File
	case s.HelmRelease != "":
		return "Helm release " + s.HelmRelease
	case s.Application != "":
		return "Argo CD application " + s.Application
	case s.Live:
		return "live"
	}
	return "unknown source"
}
