package report

import (
	"fmt"
	"strings"
)

// Gate thresholds: the least severe finding that fails the gate, or never.
const (
	FailOnBlocker = "blocker"
	FailOnWarning = "warning"
	FailOnNever   = "never"
)

// ParseFailOn validates a gate threshold.
func ParseFailOn(s string) (string, error) {
	switch s {
	case FailOnBlocker, FailOnWarning, FailOnNever:
		return s, nil
	}
	return "", fmt.Errorf("unknown gate threshold %q: want blocker, warning or never", s)
}

// Gate says why a CI gate fails for this report, or "" when it passes. A target whose
// verdict is unknown fails unless allowIncomplete; suppressed findings never count.
func (r *Report) Gate(failOn string, allowIncomplete bool) string {
	if failOn == FailOnNever {
		return ""
	}
	var reasons []string
	targets := r.Targets
	if len(r.Plan) > 0 && len(targets) > 0 {
		targets = targets[len(targets)-1:] // a plan gates on its destination
	}
	for _, t := range targets {
		switch {
		case t.Blockers > 0:
			reasons = append(reasons, fmt.Sprintf("%s: %s", t.Target, Count(t.Blockers, "blocker")))
		case failOn == FailOnWarning && t.Warnings > 0:
			reasons = append(reasons, fmt.Sprintf("%s: %s", t.Target, Count(t.Warnings, "warning")))
		case t.Verdict == VerdictUnknown && !allowIncomplete:
			reasons = append(reasons, fmt.Sprintf("%s: verdict unknown (%s not assessed)", t.Target, requiredGaps(t)))
		}
	}
	return strings.Join(reasons, "; ")
}

// Fails reports whether a finding of this severity fails the gate at failOn.
func Fails(severity, failOn string) bool {
	switch failOn {
	case FailOnBlocker:
		return severity == SeverityBlocker
	case FailOnWarning:
		return severity == SeverityBlocker || severity == SeverityWarning
	}
	return false
}

func requiredGaps(t TargetResult) string {
	var names []string
	for _, g := range t.NotAssessed {
		if g.Required {
			names = append(names, g.Capability)
		}
	}
	return strings.Join(names, ", ")
}

// Count spells n of a regular noun: "1 blocker", "3 blockers".
func Count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
