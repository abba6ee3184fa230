package server

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/open-policy-agent/opa/v1/bundle"

	"github.com/upgradescope/upgradescope/bundles"
	"github.com/upgradescope/upgradescope/bundles/rollout"
	"github.com/upgradescope/upgradescope/bundles/rollout/outcome"
	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/fleet/server/admission"
	"github.com/upgradescope/upgradescope/fleet/server/store"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/report"
)

// Bounds of a dry run: ?budget= (default and cap), and the clusters judged at once. Two
// workers keep one core for pushes on a small server; each also waits its turn for an
// evaluation slot behind the pushes already waiting (admission.Turns.DryRunEvaluation).
const (
	DefaultDryRunBudget = 5 * time.Minute
	MaxDryRunBudget     = 15 * time.Minute
	dryRunWorkers       = 2
	// dryRunSlack is the write deadline past the budget: the summary line still goes out.
	dryRunSlack = time.Minute
	// ndjson is the dry run's content type: one JSON document per line.
	ndjson = "application/x-ndjson"
)

// dryRunSummary is the last line of a dry run's answer.
type dryRunSummary struct {
	Summary outcome.Summary `json:"summary"`
}

// dryRunHandler is POST /api/v1/bundles/dry-run, below the read credential and fleetOnly.
type dryRunHandler struct {
	store         store.Store
	admit         *admission.Turns
	snaps         *snapshots
	policy        *activePolicy
	plan          targetPlan
	teamMap       TeamMap
	now           func() time.Time
	log           *slog.Logger
	verification  *bundle.VerificationConfig
	withCandidate func(ctx context.Context, candidate *bundles.Fetched) (*engine.Engine, error)
	maxBytes      int
}

// serve is POST /api/v1/bundles/dry-run: the candidate bundle in the body, verified with
// the server's key, joins the server's bundle set, and every cluster's latest snapshot is
// judged with it at the targets the server judges it at and compared with the stored
// evaluations. The answer streams a line per cluster as it is judged, then the summary.
// Nothing is stored.
func (h *dryRunHandler) serve(w http.ResponseWriter, r *http.Request) error {
	if h.verification == nil || h.withCandidate == nil {
		return fail(http.StatusNotImplemented, "dry runs are off: start the server with --verification-key, the public key candidates must be signed with")
	}
	budget, err := budgetParam(r)
	if err != nil {
		return err
	}
	// One dry run at a time per server: each takes two workers for minutes, and its body
	// (up to bundles.MaxSize) is read only once it has its turn, so callers turned away
	// cost no memory.
	if r.ContentLength > bundles.MaxSize {
		return candidateTooLarge
	}
	turn, err := h.admit.DryRun(r.Context())
	if err != nil {
		return err
	}
	defer turn()
	fetched, err := h.readCandidate(w, r)
	if err != nil {
		return err
	}
	eng, err := h.withCandidate(r.Context(), fetched)
	if err != nil {
		return fail(http.StatusUnprocessableEntity, "the candidate does not load with the server's bundles: "+err.Error())
	}
	clusters, err := h.clusters(r.Context())
	if err != nil {
		return err
	}
	h.stream(w, r, clusters, eng, rollout.Options{Workers: dryRunWorkers, Budget: budget, Now: h.now().UTC(), Turn: h.admit.DryRunEvaluation})
	return nil
}

// budgetParam is ?budget=, a Go duration from one second to MaxDryRunBudget.
func budgetParam(r *http.Request) (time.Duration, error) {
	raw := r.URL.Query().Get("budget")
	if raw == "" {
		return DefaultDryRunBudget, nil
	}
	d, err := time.ParseDuration(raw)
	if err != nil || d < time.Second || d > MaxDryRunBudget {
		return 0, fail(http.StatusUnprocessableEntity, fmt.Sprintf("budget %q: want a duration from 1s to %s, e.g. 90s or 5m", raw, MaxDryRunBudget))
	}
	return d, nil
}

// readCandidate reads the body, a bundle tarball of at most bundles.MaxSize, and verifies it
// with the server's key: an unsigned or tampered candidate is refused naming why.
func (h *dryRunHandler) readCandidate(w http.ResponseWriter, r *http.Request) (*bundles.Fetched, error) {
	raw, err := readLimited(http.MaxBytesReader(w, r.Body, bundles.MaxSize), bundles.MaxSize)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) || errors.Is(err, errTooLong) {
			return nil, candidateTooLarge
		}
		return nil, fail(http.StatusBadRequest, "could not read the candidate bundle: "+err.Error())
	}
	if len(raw) == 0 {
		return nil, fail(http.StatusUnprocessableEntity, "the body is empty: send the candidate bundle (.tar.gz)")
	}
	b, err := bundles.Read(bytes.NewReader(raw), h.verification)
	if err != nil {
		return nil, fail(http.StatusUnprocessableEntity, "the candidate bundle is refused: "+err.Error())
	}
	return &bundles.Fetched{Source: "candidate", Bundle: &b, Raw: raw, Signature: report.SignatureVerified}, nil
}

var candidateTooLarge = fail(http.StatusRequestEntityTooLarge, fmt.Sprintf("the candidate bundle is larger than %d MiB", bundles.MaxSize>>20))

// clusters is every cluster with a snapshot, by name: the order of the summary's lists.
func (h *dryRunHandler) clusters(ctx context.Context) ([]rollout.Cluster, error) {
	all, err := h.store.Clusters(ctx)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(all, func(a, b store.Cluster) int { return cmp.Compare(a.Name, b.Name) })
	out := make([]rollout.Cluster, 0, len(all))
	for _, c := range all {
		if c.LatestSnapshotID != 0 {
			out = append(out, h.storedCluster(c))
		}
	}
	return out, nil
}

// storedCluster reads a cluster of the dry run from the store: its latest snapshot with the
// team map applied, judged at the targets an ingest of it is, and as it stands the stored
// evaluations of that snapshot (before). A cluster the server has no target for (its
// version unknown, no --target) has none here either.
func (h *dryRunHandler) storedCluster(c store.Cluster) rollout.Cluster {
	var snapshotID int64 // set by Load, read by Before, on the same worker
	return rollout.Cluster{
		Name: c.Name,
		Load: func(ctx context.Context) (*inventory.Document, []string, error) {
			snap, err := h.store.LatestSnapshot(ctx, c.ID)
			if err != nil {
				return nil, nil, err
			}
			doc, err := h.snaps.decodeInBackground(ctx, snap)
			if err != nil {
				return nil, nil, err
			}
			snapshotID = snap.ID
			targets := h.plan.plan(currentVersion(doc, c.ServerVersion))
			return h.teamMap.apply(doc), targets, nil
		},
		Before: func(ctx context.Context, doc *inventory.Document, targets []string, now time.Time) (map[string]*report.TargetResult, error) {
			return h.before(ctx, c, snapshotID, doc, targets, now)
		},
	}
}

// before is the cluster's judgement at each target with the server's bundles today: the
// stored evaluation of the snapshot when it compares with a candidate judged now, else
// an evaluation with the active set. A stored one does not compare when there is none, when
// it judged an older snapshot, when another bundle set made it (the server took a new
// revision since), or when it was made on another day: the rules judge dates by the day,
// so an end of life passed since would be blamed on the candidate.
func (h *dryRunHandler) before(ctx context.Context, c store.Cluster, snapshotID int64, doc *inventory.Document, targets []string, now time.Time) (map[string]*report.TargetResult, error) {
	pol := h.policy.load()
	out := make(map[string]*report.TargetResult, len(targets))
	var fresh []string
	for _, t := range targets {
		ev, err := h.store.LatestEvaluation(ctx, c.ID, t)
		switch {
		case errors.Is(err, store.ErrNotFound):
			fresh = append(fresh, t)
			continue
		case err != nil:
			return nil, err
		case !(current{snapshotID, pol.key, now}).holds(ev.SnapshotID, ev.BundlesKey, ev.EvaluatedAt):
			fresh = append(fresh, t)
			continue
		}
		tr, err := h.storedResult(ev)
		if err != nil {
			return nil, err
		}
		out[t] = tr
	}
	if len(fresh) == 0 {
		return out, nil
	}
	release, err := h.admit.DryRunEvaluation(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	rep, err := pol.eng.Evaluate(ctx, doc, fresh, now)
	if err != nil {
		return nil, err
	}
	for i := range rep.Targets {
		out[rep.Targets[i].Target] = &rep.Targets[i]
	}
	return out, nil
}

// storedResult decodes what a comparison reads of a stored evaluation's report: the
// verdict, score, counts and each finding's key and severity. Decoding only that skips the
// findings' objects, details and citations, most of a big cluster's report.
func (h *dryRunHandler) storedResult(ev store.EvaluationRecord) (*report.TargetResult, error) {
	var slim struct {
		Targets []struct {
			Target   string `json:"target"`
			Verdict  string `json:"verdict"`
			Score    int    `json:"score"`
			Blockers int    `json:"blockers"`
			Warnings int    `json:"warnings"`
			Findings []struct {
				Key      string `json:"key"`
				Severity string `json:"severity"`
			} `json:"findings"`
		} `json:"targets"`
	}
	// json/v2 skips what the struct leaves out without encoding/json's validity pass over
	// the whole report first; the server wrote the report itself.
	data, release, err := inflatePooled(ev.Report, 4*h.maxBytes)
	if err == nil {
		err = jsonv2.Unmarshal(data, &slim)
		release()
	}
	if err != nil {
		return nil, fmt.Errorf("read stored report %d: %w", ev.ID, err)
	}
	for _, t := range slim.Targets {
		if t.Target != ev.Target {
			continue
		}
		tr := &report.TargetResult{Target: t.Target, Verdict: t.Verdict, Score: t.Score, Blockers: t.Blockers,
			Warnings: t.Warnings, Findings: make([]report.Finding, len(t.Findings))}
		for i, f := range t.Findings {
			tr.Findings[i] = report.Finding{Key: f.Key, Severity: f.Severity}
		}
		return tr, nil
	}
	return nil, fmt.Errorf("stored report %d has no result at %s", ev.ID, ev.Target)
}

// stream runs the dry run, writing a line per cluster as it is judged (flushed, so a
// large fleet shows progress) and the summary last. The response's write deadline is moved
// past the budget; a client that hangs up stops the run.
func (h *dryRunHandler) stream(w http.ResponseWriter, r *http.Request, clusters []rollout.Cluster, eng *engine.Engine, opts rollout.Options) {
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Now().Add(opts.Budget + dryRunSlack))
	w.Header().Set("Content-Type", ndjson)
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	writeLine := func(v any) {
		line, err := json.Marshal(v)
		if err != nil {
			h.log.Error("dry run: encode a line", "err", err)
			return
		}
		if _, err := w.Write(append(line, '\n')); err == nil {
			_ = rc.Flush()
		}
	}
	opts.Progress = func(res outcome.Result) { writeLine(res) }
	_, summary := rollout.Run(r.Context(), clusters, eng, opts)
	writeLine(dryRunSummary{Summary: summary})
	h.log.Info("dry run", "clusters", summary.Clusters, "turnedBlocked", len(summary.TurnedBlocked),
		"candidateErrors", len(summary.CandidateErrors), "unjudged", len(summary.Unjudged))
}
