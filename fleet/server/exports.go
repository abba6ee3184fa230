package server

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"

	"github.com/upgradescope/upgradescope/fleet/server/store"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/output"
	"github.com/upgradescope/upgradescope/report"
)

// exportFormats are what ?format= may name, with the content type each is served as.
var exportFormats = map[string]string{"csv": "text/csv; charset=utf-8", "html": "text/html; charset=utf-8"}

// exportHandler is GET /api/v1/clusters/{id}/export.
type exportHandler struct {
	reads  *fleetReads
	served *servedReports
	shares *shareJudge
	store  store.Store
}

// serve answers the latest stored evaluation of a cluster at ?target= as a file for
// an auditor: CSV or one self-contained HTML page. Never a what-if: a file handed on must say
// what the server decided, so a target without a stored evaluation is 404.
func (h *exportHandler) serve(w http.ResponseWriter, r *http.Request, sc scope) error {
	q := r.URL.Query()
	format := q.Get("format")
	if _, ok := exportFormats[format]; !ok {
		return fail(http.StatusUnprocessableEntity, fmt.Sprintf("format %q: want csv or html", format))
	}
	if q.Get("target") == "" {
		return fail(http.StatusUnprocessableEntity, "target is required: pass ?target=1.NN")
	}
	c, _, err := h.reads.cluster(r, sc)
	if err != nil {
		return err
	}
	minor, err := inventory.ParseTarget(q.Get("target"))
	if err != nil || minor != q.Get("target") {
		return fail(http.StatusUnprocessableEntity, fmt.Sprintf("target %q: write a minor as 1.NN", q.Get("target")))
	}
	e, err := h.export(r, sc, c, minor)
	if err != nil {
		return err
	}
	var body bytes.Buffer
	if format == "csv" {
		err = output.WriteCSV(&body, e)
	} else {
		err = output.WriteHTML(&body, e)
	}
	if err != nil {
		return fmt.Errorf("render %s export: %w", format, err)
	}
	w.Header().Set("Content-Type", exportFormats[format])
	w.Header().Set("Content-Disposition", fmt.Sprintf(`attachment; filename="upgradescope-%s-%s.%s"`, fileSafe(c.Name), minor, format))
	if w.Header().Get("Cache-Control") == "" {
		w.Header().Set("Cache-Control", "no-store")
	}
	w.WriteHeader(http.StatusOK)
	_, err = w.Write(body.Bytes())
	return err
}

// export reads the stored evaluation and the score history for the export. A team-scoped
// reader's is its share of the latest snapshot, judged now, and that judgement is its
// history: what was stored judged the whole cluster.
func (h *exportHandler) export(r *http.Request, sc scope, c store.Cluster, target string) (output.Export, error) {
	ctx := r.Context()
	ev, err := h.store.LatestEvaluation(ctx, c.ID, target)
	if errors.Is(err, store.ErrNotFound) {
		return output.Export{}, fail(http.StatusNotFound, fmt.Sprintf("no evaluation for target %s: exports hold stored evaluations only", target))
	} else if err != nil {
		return output.Export{}, err
	}
	var sv *served
	if sc.fleet {
		sv, err = h.served.stored(ctx, c, ev)
	} else if ev.SnapshotID != c.LatestSnapshotID {
		// Only the latest snapshot's share can be judged: its inventory is the one at hand.
		err = fail(http.StatusNotFound, fmt.Sprintf("no evaluation of the latest snapshot for target %s: a team-scoped export needs one", target))
	} else {
		sv, err = h.shares.served(ctx, c, sc, target)
	}
	if err != nil {
		return output.Export{}, err
	}
	points, err := h.reads.history(ctx, c, sc, target, defaultHistory)
	if err != nil {
		return output.Export{}, err
	}
	var scores []int
	for _, p := range slices.Backward(points) { // the store answers newest first
		scores = append(scores, p.Score)
	}
	e := output.Export{Cluster: c.Name, Target: target, EvaluatedAt: sv.evaluatedAt, Result: *sv.result(),
		KBVersion: kbRevision(sv.report.Bundles), History: scores, Bundles: sv.report.Bundles}
	if e.Collector, err = probeCollector(ctx, h.store, c, ev.SnapshotID, e.Result.NotAssessed); err != nil {
		return output.Export{}, err
	}
	return e, nil
}

// kbRevision is the revision of the kb bundle that judged a report.
func kbRevision(bundles []report.BundleInfo) string {
	for _, b := range bundles {
		if b.Name == "kb" {
			return b.Revision
		}
	}
	return ""
}

var unsafeFileChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// fileSafe is a cluster name as a download's file name may spell it.
func fileSafe(name string) string { return unsafeFileChars.ReplaceAllString(name, "_") }
