package report

import (
	"slices"

	"github.com/upgradescope/upgradescope/inventory"
)

// AgainstContext judges t, the evaluation of a stored cluster with a gate's manifests
// applied, as the gate does: each finding is tagged with its Source by comparing it with
// base, the cluster's own evaluation at the same target, and t.Cluster keeps the whole
// cluster's judgement. The caller then recounts t over the introduced findings (Recount).
func AgainstContext(t *TargetResult, base TargetResult, name string, snapshotID int64) {
	t.Cluster = &ClusterResult{Name: name, SnapshotID: snapshotID, Verdict: t.Verdict, Score: t.Score,
		Blockers: t.Blockers, Warnings: t.Warnings, Infos: t.Infos}
	had := make(map[string]Finding, len(base.Findings)+len(base.Suppressed))
	for _, f := range slices.Concat(base.Findings, base.Suppressed) {
		had[f.Key] = f
	}
	for _, list := range [][]Finding{t.Findings, t.Suppressed} {
		for i := range list {
			list[i].Source = SourceCluster
			if introduces(list[i], had) {
				list[i].Source = SourceManifest
			}
		}
	}
}

var severityRank = map[string]int{SeverityInfo: 0, SeverityWarning: 1, SeverityBlocker: 2}

// introduces reports whether the manifests bring f: a key the cluster did not have, a
// severity raised, an object the cluster's own finding did not list, or more objects past
// the list than it had. The overlay lists the manifests' objects first and the cluster's
// after them, so what the cluster alone listed covers every cluster object the finding
// lists; a new object pushed past the bound shows as a longer omitted count. Either way the
// gate fails closed rather than let a new object hide behind the cut.
func introduces(f Finding, had map[string]Finding) bool {
	was, ok := had[f.Key]
	if !ok || severityRank[f.Severity] > severityRank[was.Severity] {
		return true
	}
	for _, o := range f.Objects {
		if !slices.ContainsFunc(was.Objects, func(w inventory.ObjectRef) bool { return sameObject(w, o) }) {
			return true
		}
	}
	return f.ObjectsOmitted > was.ObjectsOmitted
}

// sameObject compares objects by identity, not by where they were read: the cluster's copy
// has no file, the manifest's has one. A kind is compared only when both name one.
func sameObject(a, b inventory.ObjectRef) bool {
	if a.Kind != "" && b.Kind != "" && a.Kind != b.Kind {
		return false
	}
	return a.Namespace == b.Namespace && a.Name == b.Name
}

// Recount makes t's verdict, score, counts and team rollup those of the findings keep
// selects, by the report's own rules (Verdict, Score).
func (t *TargetResult) Recount(keep func(Finding) bool) {
	var kept []Finding
	t.Blockers, t.Warnings, t.Infos = 0, 0, 0
	for _, f := range t.Findings {
		if !keep(f) {
			continue
		}
		kept = append(kept, f)
		switch f.Severity {
		case SeverityBlocker:
			t.Blockers++
		case SeverityWarning:
			t.Warnings++
		case SeverityInfo:
			t.Infos++
		}
	}
	t.Score = Score(t.Blockers, t.Warnings)
	t.Verdict = Verdict(t.Blockers, t.NotAssessed)
	t.Teams = TeamRollup(kept, t.NotAssessed)
}
