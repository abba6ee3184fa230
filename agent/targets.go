package agent

import (
	"fmt"

	"github.com/upgradescope/upgradescope/config"
	"github.com/upgradescope/upgradescope/crd"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/report"
)

// resolveTargets picks what a tick judges: the spec's valid targets (at most crd.MaxTargets
// distinct), else the next minor above the server's. Skipped entries become notes.
func resolveTargets(spec []string, doc *inventory.Document) (targets, notes []string) {
	seen := map[string]bool{}
	for _, raw := range spec {
		t, err := inventory.ParseTarget(raw)
		switch {
		case err != nil:
			notes = append(notes, fmt.Sprintf("targets: skipped invalid spec target %q", raw))
		case seen[t]:
		case len(targets) == crd.MaxTargets:
			notes = append(notes, fmt.Sprintf("targets: skipped %q: at most %d targets are evaluated", raw, crd.MaxTargets))
		default:
			seen[t] = true
			targets = append(targets, t)
		}
	}
	if len(targets) > 0 {
		return targets, notes
	}
	if next := inventory.DefaultTarget(doc.JudgedVersion()); next != "" {
		return []string{next}, notes
	}
	return nil, append(notes, "targets: no spec targets and the server version is unknown")
}

// ignoreRules turns spec.ignore into the engine's rules; invalid ones are skipped with a note.
func ignoreRules(spec []report.IgnoreRule) (rules []report.IgnoreRule, notes []string) {
	for i, s := range spec {
		r := s
		r.Index = i // notes and expired rules name it spec.ignore[Index]
		if err := config.CheckRule(r); err != nil {
			notes = append(notes, fmt.Sprintf("ignore: skipped spec.ignore[%d]: %v", i, err))
			continue
		}
		rules = append(rules, r)
	}
	return rules, notes
}
