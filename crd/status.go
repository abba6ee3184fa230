package crd

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/upgradescope/upgradescope/report"
)

// Evaluation is one tick's outcome, for BuildStatus.
type Evaluation struct {
	Report        *report.Report // nil when nothing could be evaluated
	Generation    int64
	ServerVersion string
	AgentVersion  string
	// Notes are the tick's own gaps ("targets: skipped invalid spec target …").
	Notes []string
	Now   time.Time
	// Bundles, when the agent manages bundles, are the active revisions with their
	// activation times; otherwise the report's are used.
	Bundles []BundleRevision
	// BundleUpdate, when the agent polls bundle URLs, says how the last update went.
	BundleUpdate *BundleUpdate
}

// BundleUpdate is the outcome of the agent's last bundle poll.
type BundleUpdate struct {
	// Err is the last download or activation failure; empty once an update succeeds again.
	Err string
	At  time.Time
}

// BuildStatus turns an evaluation into the status to write. previous is the status read at
// the start of the tick: its conditions keep their lastTransitionTime unless they change.
func BuildStatus(previous Status, ev Evaluation) Status {
	st := Status{
		ObservedGeneration:    ev.Generation,
		LastEvaluated:         &metav1.Time{Time: ev.Now.UTC().Truncate(time.Second)},
		ObservedServerVersion: ev.ServerVersion,
		AgentVersion:          ev.AgentVersion,
		NotAssessed:           append([]string{}, ev.Notes...),
		Conditions:            append([]metav1.Condition{}, previous.Conditions...),
	}
	if r := ev.Report; r != nil {
		st.KBVersion = r.KB.GeneratedFrom
		for _, b := range r.Bundles {
			st.Bundles = append(st.Bundles, BundleRevision{Name: b.Name, Revision: b.Revision, Source: clip(b.Source, MaxSource)})
		}
		if len(r.Targets) > 0 {
			for _, g := range r.Targets[0].NotAssessed {
				st.NotAssessed = append(st.NotAssessed, fmt.Sprintf("%s: %s", g.Capability, g.Reason))
			}
		}
		for i, n := range st.NotAssessed {
			st.NotAssessed[i] = clip(n, MaxNote)
		}
		st.NotAssessed = st.NotAssessed[:min(len(st.NotAssessed), MaxNotes)]
		for _, t := range r.Targets {
			st.Targets = append(st.Targets, targetStatus(t))
		}
	}
	if ev.Bundles != nil {
		st.Bundles = append([]BundleRevision(nil), ev.Bundles...)
		for i := range st.Bundles {
			st.Bundles[i].Source = clip(st.Bundles[i].Source, MaxSource)
		}
	}
	setCondition(&st, ev, readyCondition(st.Targets))
	setCondition(&st, ev, allTargetsReadyCondition(st.Targets))
	if ev.BundleUpdate != nil {
		setCondition(&st, ev, bundlesCurrentCondition(*ev.BundleUpdate, st.Bundles))
	}
	return st
}

// bundlesCurrentCondition is False while the last bundle update failed; the message names
// the revisions still in use.
func bundlesCurrentCondition(u BundleUpdate, active []BundleRevision) metav1.Condition {
	revs := make([]string, len(active))
	for i, b := range active {
		revs[i] = b.Name + " " + b.Revision
	}
	inUse := strings.Join(revs, ", ")
	if u.Err == "" {
		return metav1.Condition{Type: ConditionBundlesCurrent, Status: metav1.ConditionTrue, Reason: "Activated",
			Message: "evaluating with " + inUse}
	}
	return metav1.Condition{Type: ConditionBundlesCurrent, Status: metav1.ConditionFalse, Reason: "UpdateFailed",
		Message: clip(fmt.Sprintf("%s at %s; still evaluating with %s", u.Err, u.At.UTC().Format(time.RFC3339), inUse), MaxConditionMessage)}
}

func setCondition(st *Status, ev Evaluation, c metav1.Condition) {
	c.ObservedGeneration = ev.Generation
	c.LastTransitionTime = metav1.Time{Time: ev.Now.UTC().Truncate(time.Second)}
	// SetStatusCondition keeps lastTransitionTime when the status did not change.
	apimeta.SetStatusCondition(&st.Conditions, c)
}

func targetStatus(t report.TargetResult) TargetStatus {
	ts := TargetStatus{
		Target: t.Target, Verdict: t.Verdict, Score: t.Score,
		Blockers: t.Blockers, Warnings: t.Warnings, Infos: t.Infos, Suppressed: t.SuppressedCount,
	}
	for _, f := range t.Findings {
		if ts.ByCategory == nil {
			ts.ByCategory = map[string]int{}
		}
		ts.ByCategory[f.Category]++
		// Findings come sorted by severity, so the first ones are the most severe.
		if len(ts.TopFindings) < MaxTopFindings {
			ts.TopFindings = append(ts.TopFindings, TopFinding{
				Key: f.Key, Category: f.Category, Severity: f.Severity,
				Title: clip(f.Title, MaxTitle), Remediation: clip(f.Remediation, MaxRemediation),
			})
		}
	}
	return ts
}

// readyCondition is the first target's verdict.
func readyCondition(targets []TargetStatus) metav1.Condition {
	if len(targets) == 0 {
		return metav1.Condition{Type: ConditionReady, Status: metav1.ConditionUnknown, Reason: "NotAssessed", Message: "no target was evaluated"}
	}
	t := targets[0]
	c := metav1.Condition{Type: ConditionReady, Message: summary(t)}
	switch t.Verdict {
	case "ready":
		c.Status, c.Reason = metav1.ConditionTrue, "Ready"
	case "blocked":
		c.Status, c.Reason = metav1.ConditionFalse, "Blocked"
	default:
		c.Status, c.Reason = metav1.ConditionUnknown, "NotAssessed"
	}
	return c
}

// allTargetsReadyCondition covers every target: False when any is blocked, Unknown when none
// is but one was not assessed, True only when all are ready.
func allTargetsReadyCondition(targets []TargetStatus) metav1.Condition {
	c := metav1.Condition{Type: ConditionAllTargetsReady}
	var blocked, unknown []string
	for _, t := range targets {
		switch t.Verdict {
		case "blocked":
			blocked = append(blocked, fmt.Sprintf("%s blocked (%d blockers)", t.Target, t.Blockers))
		case "ready":
		default:
			unknown = append(unknown, t.Target+" not assessed")
		}
	}
	switch {
	case len(targets) == 0:
		c.Status, c.Reason, c.Message = metav1.ConditionUnknown, "NotAssessed", "no target was evaluated"
	case len(blocked) > 0:
		c.Status, c.Reason, c.Message = metav1.ConditionFalse, "Blocked", strings.Join(blocked, "; ")
	case len(unknown) > 0:
		c.Status, c.Reason, c.Message = metav1.ConditionUnknown, "NotAssessed", strings.Join(unknown, "; ")
	default:
		c.Status, c.Reason, c.Message = metav1.ConditionTrue, "Ready", fmt.Sprintf("%d target(s) ready", len(targets))
	}
	return c
}

func summary(t TargetStatus) string {
	switch t.Verdict {
	case "blocked":
		return fmt.Sprintf("%s: %d blocker(s) (score %d)", t.Target, t.Blockers, t.Score)
	case "ready":
		return fmt.Sprintf("%s: ready (score %d)", t.Target, t.Score)
	}
	return fmt.Sprintf("%s: not assessed (score %d)", t.Target, t.Score)
}

// clip shortens s to at most n bytes without splitting a UTF-8 sequence.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	s = s[:n-len("…")]
	for !utf8.ValidString(s) {
		s = s[:len(s)-1]
	}
	return s + "…"
}
