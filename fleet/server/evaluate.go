package server

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/upgradescope/upgradescope/fleet/server/admission"
	"github.com/upgradescope/upgradescope/fleet/server/store"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/report"
)

// currentVersion is the version a snapshot is judged from (inventory.JudgedVersion), else
// the version the cluster last reported (a push without one).
func currentVersion(doc *inventory.Document, last string) string {
	if v := doc.JudgedVersion(); v != "" {
		return v
	}
	return last
}

// targetPlan is the server's --target minors (sorted, normalised): with a cluster's
// version it says what the cluster is judged at.
type targetPlan []string

// plan is what a snapshot at version is judged at: its next minor and every --target
// minor after version (inventory.PlanTargets).
func (tp targetPlan) plan(version string) []string { return inventory.PlanTargets(version, tp) }

// columns is every cluster's next minor and the server's --target, the newest
// MaxFleetTargets of them: a fleet read's default columns.
func (tp targetPlan) columns(clusters []store.Cluster) []string {
	targets := slices.Clone([]string(tp))
	for _, c := range clusters {
		if t := inventory.DefaultTarget(c.ServerVersion); t != "" {
			targets = append(targets, t)
		}
	}
	targets = inventory.SortMinors(targets)
	if len(targets) > MaxFleetTargets {
		targets = targets[len(targets)-MaxFleetTargets:]
	}
	if targets == nil {
		targets = []string{}
	}
	return targets
}

// evaluator judges inventories to store: a push's, holding a push's evaluation slot, or
// the background re-evaluation's, holding a background one (admission).
type evaluator struct {
	policy  *activePolicy
	admit   *admission.Turns
	teamMap TeamMap
	now     func() time.Time
	// evaluated is Config.Evaluated.
	evaluated func(doc *inventory.Document, targets []string)
}

// evaluate judges doc at targets in one engine call, holding a push's evaluation slot, and
// answers one evaluation per target with its own report, and each target's result as
// evaluated (notifications compare it without reading the stored report back). The team
// map is applied to a copy: the stored snapshot keeps the labels the agent saw.
func (e *evaluator) evaluate(ctx context.Context, doc *inventory.Document, targets []string) ([]store.Evaluation, map[string]*report.TargetResult, error) {
	if len(targets) == 0 {
		return nil, nil, nil
	}
	release, err := e.admit.Evaluation(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer release()
	return e.evaluateWith(ctx, e.policy.load(), doc, targets)
}

// evaluateInBackground is evaluate with pol, holding a slot the background re-evaluation
// may take (admission, rule 4).
func (e *evaluator) evaluateInBackground(ctx context.Context, pol *policy, doc *inventory.Document, targets []string) ([]store.Evaluation, map[string]*report.TargetResult, error) {
	release, err := e.admit.BackgroundEvaluation(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer release()
	return e.evaluateWith(ctx, pol, doc, targets)
}

// evaluateWith is evaluate with pol, its caller holding an evaluation slot.
func (e *evaluator) evaluateWith(ctx context.Context, pol *policy, doc *inventory.Document, targets []string) ([]store.Evaluation, map[string]*report.TargetResult, error) {
	mapped := e.teamMap.apply(doc)
	rep, err := pol.eng.Evaluate(ctx, mapped, targets, e.now().UTC())
	if err != nil {
		return nil, nil, fmt.Errorf("evaluate at %v: %w", targets, err)
	}
	if e.evaluated != nil {
		e.evaluated(mapped, targets)
	}
	owners := namespaceTeams(mapped)
	out := make([]store.Evaluation, 0, len(rep.Targets))
	results := make(map[string]*report.TargetResult, len(rep.Targets))
	for i, tr := range rep.Targets {
		ev, err := storedEvaluation(pol, rep, tr, owners)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, ev)
		results[tr.Target] = &rep.Targets[i]
	}
	return out, results, nil
}

// storedEvaluation is the store's record of one target of rep, made with pol: its summary, team rollup
// and a report holding only that target, gzip-compressed. The rollup has every team that
// owns a namespace (owners), not only those with findings: a team-scoped reader sees a
// cluster by it, and a team without findings is ready, or blocked or unknown by what no
// team owns (teamCells).
func storedEvaluation(pol *policy, rep *report.Report, tr report.TargetResult, owners map[string]string) (store.Evaluation, error) {
	single := *rep
	single.Targets = []report.TargetResult{tr}
	single.Plan, single.ExpiredIgnores = nil, nil
	blob, err := gzipJSON(&single)
	if err != nil {
		return store.Evaluation{}, fmt.Errorf("store report for %s: %w", tr.Target, err)
	}
	at, _ := parseTime(rep.EvaluatedAt)
	ev := store.Evaluation{Target: tr.Target, Verdict: tr.Verdict, Score: tr.Score,
		Blockers: tr.Blockers, Warnings: tr.Warnings, Infos: tr.Infos, EvaluatedAt: at,
		Bundles: pol.bundles, BundlesKey: pol.key, Report: blob}
	ev.Teams = teamCells(tr, owners)
	return ev, nil
}

// teamCells is tr's team rollup with a cell for every owning team. The report lists only
// teams with findings; one without is judged as the report judges teams
// (report.TargetResult.TeamWithoutFindings).
func teamCells(tr report.TargetResult, owners map[string]string) map[string]store.TeamCell {
	out := make(map[string]store.TeamCell, len(tr.Teams))
	for name, t := range tr.Teams {
		out[name] = store.TeamCell{Verdict: t.Verdict, Score: t.Score, Blockers: t.Blockers, Warnings: t.Warnings}
	}
	none := tr.TeamWithoutFindings()
	clean := store.TeamCell{Verdict: none.Verdict, Score: none.Score, Blockers: none.Blockers, Warnings: none.Warnings}
	for _, team := range owners {
		if _, ok := out[team]; !ok {
			out[team] = clean
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// gzipJSON and gzipBytes compress what the server stores at gzip's fastest level: most
// of an inventory or report is repeated names, which even that level shrinks tenfold, at a
// fraction of the default level's CPU on the ingest path.
func gzipJSON(v any) ([]byte, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return gzipBytes(data)
}

func gzipBytes(data []byte) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(len(data)/8 + 512)
	zw := gzipWriters.Get().(*gzip.Writer)
	defer func() {
		zw.Reset(io.Discard) // so the pool does not keep this blob alive
		gzipWriters.Put(zw)
	}()
	zw.Reset(&buf)
	if _, err := zw.Write(data); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// gzipWriters are reused: a new writer allocates its compressor's state, about a megabyte
// of garbage for each of the three blobs of every push.
var gzipWriters = sync.Pool{New: func() any {
	zw, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed) // BestSpeed is a valid level
	return zw
}}

// gunzipJSON decodes a blob the server stored (a report or an inventory) into v, bounded
// to limit bytes decompressed.
func gunzipJSON(blob []byte, limit int, v any) error {
	data, release, err := inflatePooled(blob, limit)
	if err != nil {
		return err
	}
	defer release()
	return json.Unmarshal(data, v)
}
