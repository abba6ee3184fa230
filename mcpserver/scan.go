package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/report"
)

// maxTargets is how many minors one scan judges, as the issue of the tool set it.
const maxTargets = 4

// topShown is how many blockers a scan's first answer names.
const topShown = 5

// Source is what a scan reads: exactly one of a manifest path, an inventory file, or the
// cluster of the kubeconfig context fixed at start.
type Source struct {
	Path      string `json:"path,omitempty" jsonschema:"rendered manifests under the server's root: a directory (walked) or one file, relative to the root"`
	Inventory string `json:"inventory,omitempty" jsonschema:"an inventory JSON file under the server's root, as upgradescope inventory writes it"`
	Cluster   bool   `json:"cluster,omitempty" jsonschema:"read the cluster of the kubeconfig context the server was started with"`
}

// ScanInput is the scan tool's input.
type ScanInput struct {
	Source
	Targets []string `json:"targets" jsonschema:"the Kubernetes minors to judge against, 1 to 4, e.g. [\"1.37\"]"`
}

// ScanAnswer is a scan's first answer: the verdict at each target, the counts and the top
// blockers; list_findings and explain_finding read the rest by the scan's id.
type ScanAnswer struct {
	Scan         string          `json:"scan" jsonschema:"id of this scan, for list_findings and explain_finding"`
	Source       string          `json:"source" jsonschema:"what was read"`
	JudgedWith   []string        `json:"judgedWith" jsonschema:"the bundles and their revisions the verdicts come from"`
	Suppressions string          `json:"suppressions,omitempty" jsonschema:"the file whose ignore rules were applied"`
	Targets      []TargetSummary `json:"targets"`
	TopBlockers  []FindingLine   `json:"topBlockers" jsonschema:"the first blockers, one line each"`
	Findings     int             `json:"findings" jsonschema:"findings in all, over every target"`
	Next         string          `json:"next,omitempty" jsonschema:"what to call for the rest"`
}

// TargetSummary is one target's verdict and counts. Score is absent when the verdict is
// unknown: a score would read as if the cluster had been assessed.
type TargetSummary struct {
	Target      string   `json:"target"`
	Verdict     string   `json:"verdict" jsonschema:"ready, blocked or unknown (something could not be assessed)"`
	Score       *int     `json:"score,omitempty"`
	Blockers    int      `json:"blockers"`
	Warnings    int      `json:"warnings"`
	Infos       int      `json:"infos"`
	Suppressed  int      `json:"suppressed,omitempty"`
	NotAssessed []string `json:"notAssessed,omitempty" jsonschema:"what could not be assessed, the reason the verdict is unknown"`
}

// FindingLine is a finding in one line.
type FindingLine struct {
	Target   string   `json:"target"`
	Key      string   `json:"key" jsonschema:"the finding's key, for explain_finding"`
	Severity string   `json:"severity"`
	Title    string   `json:"title"`
	Objects  int      `json:"objects,omitempty"`
	Teams    []string `json:"teams,omitempty"`
}

var scanTool = &mcp.Tool{
	Name:  "scan",
	Title: "Judge upgrade readiness",
	Description: "Judge rendered manifests, an inventory file, or the configured cluster against 1 to 4 target Kubernetes minors. " +
		"Answers the verdict per target (ready, blocked, unknown), counts and the top blockers; read the rest with list_findings and explain_finding.",
	InputSchema: schemaFor[ScanInput](func(s *jsonschema.Schema) {
		t := s.Properties["targets"]
		t.MinItems, t.MaxItems = new(1), new(maxTargets)
	}),
}

// scan collects the source, judges it and keeps the report for the tools that page it.
func (s *Server) scan(ctx context.Context, in ScanInput) (ScanAnswer, error) {
	targets, err := parseTargets(in.Targets)
	if err != nil {
		return ScanAnswer{}, err
	}
	sc, err := s.judge(ctx, in.Source, targets)
	if err != nil {
		return ScanAnswer{}, err
	}
	s.scans.add(ctx, sc)
	return s.scanAnswer(sc), nil
}

// judge collects src and evaluates it at targets with the suppressions and any options.
func (s *Server) judge(ctx context.Context, src Source, targets []string, opts ...engine.EvalOption) (*scanned, error) {
	doc, sc, err := s.collect(ctx, src)
	if err != nil {
		return nil, err
	}
	return s.evaluate(ctx, doc, sc, targets, opts...)
}

// evaluate judges doc, collected as sc, at targets with the suppressions and any options.
func (s *Server) evaluate(ctx context.Context, doc *inventory.Document, sc *scanned, targets []string, opts ...engine.EvalOption) (*scanned, error) {
	rules, source, err := s.ignoreFor(sc.beside)
	if err != nil {
		return nil, err
	}
	if len(rules) > 0 {
		sc.suppressions = source
	}
	opts = append([]engine.EvalOption{engine.WithIgnore(rules)}, opts...)
	rep, err := s.cfg.Engine.Evaluate(ctx, doc, targets, s.cfg.Now().UTC(), opts...)
	if err != nil {
		return nil, err
	}
	sc.rep = rep
	return sc, nil
}

// collect reads src into an inventory, naming what it read.
func (s *Server) collect(ctx context.Context, src Source) (*inventory.Document, *scanned, error) {
	n := 0
	for _, set := range []bool{src.Path != "", src.Inventory != "", src.Cluster} {
		if set {
			n++
		}
	}
	if n != 1 {
		return nil, nil, errors.New("name exactly one source: path (manifests), inventory (a file) or cluster: true")
	}
	switch {
	case src.Cluster:
		if s.cfg.Cluster == nil {
			return nil, nil, errors.New("no cluster: the server was started with --no-cluster or found no kubeconfig; scan a path or an inventory file, or restart it with --kubeconfig and --context")
		}
		doc, err := s.cfg.Cluster(ctx)
		return doc, &scanned{source: "cluster " + s.cfg.ClusterName}, err
	case src.Inventory != "":
		abs, err := s.within(src.Inventory)
		if err != nil {
			return nil, nil, err
		}
		doc, err := inventory.ReadFile(abs)
		return doc, &scanned{source: "inventory " + s.shown(abs), beside: filepath.Dir(abs)}, err
	default:
		abs, err := s.within(src.Path)
		if err != nil {
			return nil, nil, err
		}
		doc, err := s.collectFiles(ctx, abs)
		return doc, &scanned{source: "files " + s.shown(abs), files: abs, beside: dirOf(abs)}, err
	}
}

// parseTargets checks 1 to maxTargets minors, as --target reads each.
func parseTargets(in []string) ([]string, error) {
	if len(in) == 0 || len(in) > maxTargets {
		return nil, fmt.Errorf("targets: give 1 to %d minors, e.g. [\"1.37\"]", maxTargets)
	}
	out := make([]string, 0, len(in))
	for _, t := range in {
		minor, err := inventory.ParseTarget(strings.TrimSpace(t))
		if err != nil {
			return nil, fmt.Errorf("targets: %w", err)
		}
		out = append(out, minor)
	}
	return out, nil
}

// scanAnswer is sc's first answer within MaxAnswer: as many top blockers as fit, the
// furthest target's first. Why a
// target was not assessed is said once (a target with the reasons of the one before says
// "as at" it); where the reasons would still crowd out every blocker, as with four targets
// of a cluster whose reads were refused, they name the capabilities only.
func (s *Server) scanAnswer(sc *scanned) ScanAnswer {
	a := ScanAnswer{Scan: sc.id, Source: clip(sc.source, maxLine), JudgedWith: judgedWith(sc.rep), Suppressions: sc.suppressions}
	var blockers []FindingLine
	var prev TargetSummary
	for _, t := range sc.rep.Targets {
		ts := summarize(t)
		if ts.NotAssessed != nil && slices.Equal(ts.NotAssessed, prev.NotAssessed) {
			ts.NotAssessed = []string{"as at " + prev.Target}
		} else {
			prev = ts
		}
		a.Targets = append(a.Targets, ts)
		a.Findings += len(t.Findings)
	}
	// The furthest target's blockers first, each key once: "can we get to 1.37?" is
	// answered by what blocks 1.37, and what blocks 1.34 too blocks it there again.
	seen := map[string]bool{}
	for _, t := range slices.Backward(sc.rep.Targets) {
		for _, f := range t.Findings {
			if f.Severity == report.SeverityBlocker && !seen[f.Key] {
				seen[f.Key] = true
				blockers = append(blockers, line(f))
			}
		}
	}
	if a.Findings > 0 {
		a.Next = fmt.Sprintf("list_findings {\"scan\": %q} for all %d; explain_finding for one", sc.id, a.Findings)
	}
	top := blockers[:min(len(blockers), topShown)]
	with := func(n int) any { b := a; b.TopBlockers = top[:n]; return b }
	if answerSize(with(min(len(top), 1))) > MaxAnswer {
		for i := range a.Targets {
			for j, gap := range a.Targets[i].NotAssessed {
				a.Targets[i].NotAssessed[j], _, _ = strings.Cut(gap, ": ")
			}
		}
	}
	n := fit(top, with)
	a.TopBlockers = top[:n]
	if a.TopBlockers == nil {
		a.TopBlockers = []FindingLine{}
	}
	return a
}

// judgedWith names each bundle with its revision: "rules 2026-12-02.5".
func judgedWith(r *report.Report) []string {
	out := make([]string, 0, len(r.Bundles))
	for _, b := range r.Bundles {
		out = append(out, bundleLine(b.Name, b.Revision))
	}
	return out
}

// bundleLine is how every answer names a bundle it was judged with: "rules 2026-12-02.5".
func bundleLine(name, revision string) string { return clip(name+" "+revision, maxLine) }

func summarize(t report.TargetResult) TargetSummary {
	ts := TargetSummary{Target: t.Target, Verdict: t.Verdict, Blockers: t.Blockers, Warnings: t.Warnings, Infos: t.Infos, Suppressed: t.SuppressedCount}
	if t.Verdict != report.VerdictUnknown {
		ts.Score = new(t.Score)
	}
	var required []report.Gap
	for _, g := range t.NotAssessed {
		if g.Required {
			required = append(required, g)
		}
	}
	gaps := make([]string, len(required))
	for i, g := range required {
		gaps[i] = g.Capability + ": " + g.Reason
	}
	ts.NotAssessed = firstFew(gaps, 3, maxLine)
	return ts
}

// maxTeam is the longest team name a line shows: a team is a namespace label's value, at most
// 63 characters in Kubernetes; a longer one came from a hostile or broken inventory.
const maxTeam = 63

func line(f report.Finding) FindingLine {
	return FindingLine{Target: f.Target, Key: clip(f.Key, maxLine), Severity: f.Severity, Title: clip(f.Title, maxLine),
		Objects: len(f.Objects) + f.ObjectsOmitted, Teams: firstFew(f.Teams, 3, maxTeam)}
}
