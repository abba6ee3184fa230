package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/report"
)

// hopKeysShown is how many of a hop's new blockers, and of its changed findings, its line
// names; list_findings has the rest.
const hopKeysShown = 3

// PlanInput is plan_upgrade's input: a source and the minor to reach, or the cursor of a
// previous answer.
type PlanInput struct {
	Source
	Target string `json:"target,omitempty" jsonschema:"the one Kubernetes minor the plan ends at, e.g. \"1.37\""`
	From   string `json:"from,omitempty" jsonschema:"the minor the plan starts from (default: the server version of the inventory or the cluster; required for manifests, which have none)"`
	Cursor string `json:"cursor,omitempty" jsonschema:"the next of a previous answer, for the rest of the hops"`
}

// PlanAnswer is an upgrade plan one minor at a time, as scan --plan judges it: a page of
// hops, each with its verdict and what first appears or goes away there. The plan is kept as
// a scan, so list_findings and explain_finding read its findings by the scan's id.
type PlanAnswer struct {
	Scan       string       `json:"scan" jsonschema:"id of the plan's report, for list_findings and explain_finding (each hop is a target)"`
	Source     string       `json:"source" jsonschema:"what was read"`
	JudgedWith []string     `json:"judgedWith" jsonschema:"the bundles and their revisions the verdicts come from"`
	From       string       `json:"from" jsonschema:"the minor the plan starts from"`
	Target     string       `json:"target" jsonschema:"the minor the plan ends at"`
	Total      int          `json:"total" jsonschema:"hops in the plan"`
	First      int          `json:"first" jsonschema:"index of the first hop shown"`
	Hops       []HopSummary `json:"hops"`
	Next       string       `json:"next,omitempty" jsonschema:"cursor of the next page of hops"`
}

// HopSummary is one minor of the plan. Score is absent when the verdict is unknown, as a
// scan's target summary leaves it. A hop can be blocked by no new finding: one of the
// previous minor's may become a blocker (BecameBlockers).
type HopSummary struct {
	From           string   `json:"from"`
	To             string   `json:"to"`
	Verdict        string   `json:"verdict" jsonschema:"ready, blocked or unknown at this minor"`
	Score          *int     `json:"score,omitempty"`
	NewBlockers    int      `json:"newBlockers" jsonschema:"blockers that first appear at this minor"`
	FirstNew       []string `json:"firstNewBlockers,omitempty" jsonschema:"the keys of the first of them, for explain_finding with this hop's minor as target"`
	BecameBlockers int      `json:"becameBlockers" jsonschema:"findings of the previous minor that are blockers from this one: they block this hop though none is new"`
	New            int      `json:"new" jsonschema:"findings of any severity that first appear at this minor"`
	Changed        int      `json:"changed,omitempty" jsonschema:"findings whose severity changed since the previous minor"`
	ChangedKeys    []string `json:"changedKeys,omitempty" jsonschema:"the first of them as \"key: before → after\", those become blockers first, for explain_finding with this hop's minor as target"`
	Resolved       int      `json:"resolved" jsonschema:"findings of the previous minor this one no longer has"`
}

// planCursor is what a plan's next page needs: the kept report.
type planCursor struct {
	Scan string `json:"scan"`
}

var planUpgradeTool = &mcp.Tool{
	Name:  "plan_upgrade",
	Title: "Plan an upgrade one minor at a time",
	Description: "Judge manifests, an inventory file or the configured cluster at every minor from its version (or from) to target, " +
		"as upgradescope scan --plan does: per hop the verdict, the score, the blockers that first appear there, the findings whose " +
		"severity changes (becameBlockers counts those that become blockers) and what was resolved. " +
		"The plan is kept as a scan: list_findings and explain_finding read its findings.",
}

// planUpgrade judges the source at every hop, keeps the report and answers its first page;
// a cursor pages the kept report without judging again.
func (s *Server) planUpgrade(ctx context.Context, in PlanInput) (PlanAnswer, error) {
	if in.Cursor != "" {
		return s.planPage(ctx, in.Cursor)
	}
	if strings.TrimSpace(in.Target) == "" {
		return PlanAnswer{}, errors.New("target: name the one minor the plan ends at, e.g. \"1.37\"")
	}
	target, err := inventory.ParseTarget(strings.TrimSpace(in.Target))
	if err != nil {
		return PlanAnswer{}, fmt.Errorf("target: %w", err)
	}
	doc, sc, err := s.collect(ctx, in.Source)
	if err != nil {
		return PlanAnswer{}, err
	}
	from, hops, err := planHops(strings.TrimSpace(in.From), doc.ServerVersion, target, in.Source)
	if err != nil {
		return PlanAnswer{}, err
	}
	if sc, err = s.evaluate(ctx, doc, sc, hops, engine.WithPlan(from)); err != nil {
		return PlanAnswer{}, err
	}
	s.scans.add(ctx, sc)
	return planAnswer(sc, 0), nil
}

// planPage is the page of a kept plan cursor names.
func (s *Server) planPage(ctx context.Context, cursor string) (PlanAnswer, error) {
	q, at, err := decodeCursor[planCursor](cursor)
	if err != nil {
		return PlanAnswer{}, err
	}
	sc, err := s.scans.get(ctx, q.Scan)
	if err != nil {
		return PlanAnswer{}, err
	}
	if len(sc.rep.Plan) == 0 {
		return PlanAnswer{}, fmt.Errorf("cursor: scan %s is not a plan; pass the next of a plan_upgrade answer unchanged", sc.id)
	}
	return planAnswer(sc, at), nil
}

// planHops is the minor a plan starts from and its hops, as scan --plan reads --from and
// --target (cmd/upgradescope's planHops, whose errors name the CLI's flags): from, else the
// server version src reports; every minor after it up to target.
func planHops(from, serverVersion, target string, src Source) (string, []string, error) {
	if from == "" {
		v, err := serverMinor(serverVersion, src)
		if err != nil {
			return "", nil, err
		}
		from = v
	}
	start, err := inventory.ParseVersion(from)
	if err != nil {
		return "", nil, fmt.Errorf("from: %w", err)
	}
	end, _ := inventory.ParseVersion(target) // ParseTarget has read it
	hops := start.MinorsAfter(end)
	if len(hops) == 0 {
		return "", nil, fmt.Errorf("target %s is not after from %s: a plan goes up one minor at a time; give a later target or an earlier from", target, start.MinorString())
	}
	return start.MinorString(), hops, nil
}

// giveFrom is what an error about the start of a plan asks for.
const giveFrom = `give from, the minor the plan starts from, e.g. "from": "1.33"`

// serverMinor is the minor of the server version src reports, for a plan given no from.
func serverMinor(serverVersion string, src Source) (string, error) {
	what := "the inventory"
	switch {
	case src.Path != "":
		return "", errors.New("from: manifests carry no server version; " + giveFrom)
	case src.Cluster:
		what = "the cluster"
	}
	if serverVersion == "" {
		return "", fmt.Errorf("from: %s names no server version: %s", what, giveFrom)
	}
	v, err := inventory.ParseVersion(serverVersion)
	if err != nil {
		return "", fmt.Errorf("from: %s's serverVersion %q is not a Kubernetes version: %s", what, clip(serverVersion, maxVersion), giveFrom)
	}
	return v.MinorString(), nil
}

// planAnswer is the page of sc's plan from hop at, as many hops as fit in MaxAnswer.
func planAnswer(sc *scanned, at int) PlanAnswer {
	plan := sc.rep.Plan
	a := PlanAnswer{Scan: sc.id, Source: clip(sc.source, maxLine), JudgedWith: judgedWith(sc.rep),
		From: plan[0].From, Target: plan[len(plan)-1].To, Total: len(plan), First: min(at, len(plan))}
	hops := make([]HopSummary, len(plan))
	for i := a.First; i < len(plan); i++ {
		var before report.TargetResult // the plan's start has no findings to change
		if i > 0 {
			before = sc.rep.Targets[i-1]
		}
		hops[i] = hopSummary(plan[i], before, sc.rep.Targets[i])
	}
	return pageOf(hops, a.First, planCursor{Scan: sc.id}, func(shown []HopSummary, next string) PlanAnswer {
		b := a
		b.Hops, b.Next = shown, next
		return b
	})
}

// hopSummary is h in one line; before and after are the judgements at h's ends, where its
// findings' severities are.
func hopSummary(h report.Hop, before, after report.TargetResult) HopSummary {
	hs := HopSummary{From: h.From, To: h.To, Verdict: h.Verdict, New: len(h.New), Changed: len(h.Changed), Resolved: len(h.Resolved)}
	if h.Verdict != report.VerdictUnknown {
		hs.Score = new(h.Score)
	}
	is := severities(after)
	for _, k := range h.New { // sorted, as the report sorts them
		if is[k] != report.SeverityBlocker {
			continue
		}
		hs.NewBlockers++
		if len(hs.FirstNew) < hopKeysShown {
			hs.FirstNew = append(hs.FirstNew, clip(k, maxLine))
		}
	}
	hs.ChangedKeys, hs.BecameBlockers = changedKeys(h.Changed, severities(before), is)
	return hs
}

// changedKeys are the first hopKeysShown of changed, findings whose severity was was and is
// is, as "key: before → after", those become blockers first; and how many became blockers.
func changedKeys(changed []string, was, is map[string]string) ([]string, int) {
	var blockers, others []string
	for _, k := range changed { // sorted, as the report sorts them
		line := clip(k, maxLine) + ": " + was[k] + " → " + is[k]
		if is[k] == report.SeverityBlocker {
			blockers = append(blockers, line)
		} else {
			others = append(others, line)
		}
	}
	all := append(blockers, others...)
	return all[:min(len(all), hopKeysShown)], len(blockers)
}

// severities are t's findings' severities by key.
func severities(t report.TargetResult) map[string]string {
	out := make(map[string]string, len(t.Findings))
	for _, f := range t.Findings {
		out[f.Key] = f.Severity
	}
	return out
}
