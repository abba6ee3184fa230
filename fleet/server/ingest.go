package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/upgradescope/upgradescope/fleet/push"
	"github.com/upgradescope/upgradescope/fleet/server/admission"
	"github.com/upgradescope/upgradescope/fleet/server/store"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/report"
)

// ingestTimeout bounds evaluating and storing one push once its body is read; the work is
// detached from the request, so an agent that hangs up does not waste an evaluation.
const ingestTimeout = time.Minute

// ingestHandler is POST /api/v1/snapshots, below the ingest credential middleware:
// reading, judging and storing pushes, with the notification a change of readiness causes.
type ingestHandler struct {
	store   store.Store
	admit   *admission.Turns
	snaps   *snapshots
	eval    *evaluator
	notes   *notifications
	plan    targetPlan
	metrics *metrics
	log     *slog.Logger
	// work is the context of what outlives a request (an ingest whose client hung up).
	work        context.Context
	maxBytes    int
	bodyTimeout time.Duration
}

// ServeHTTP takes a push. Checks run cheapest first, and nothing is written before every
// one has passed: token (the middleware), encoding, size, body, envelope and inventory, the
// token's cluster, then the name's binding in the store's own transaction.
func (h *ingestHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	res, err := h.accept(w, r)
	if err != nil {
		h.metrics.ingested(ingestResult(err))
		answer(h.log, w, r, err)
		return
	}
	status, result := http.StatusAccepted, "accepted"
	if res.Duplicate {
		status, result = http.StatusOK, "duplicate"
	}
	h.metrics.ingested(result)
	writeJSON(w, status, res)
}

func (h *ingestHandler) accept(w http.ResponseWriter, r *http.Request) (push.Answer, error) {
	who, ok := pusherOf(r)
	if !ok {
		return push.Answer{}, errNoIngestCredential
	}
	if err := h.checkHeaders(r); err != nil {
		return push.Answer{}, err
	}
	// The body's time runs from here, so waiting for a turn counts against it too: a client
	// sending slowly holds its turn for BodyTimeout at most. Without a deadline nothing would
	// bound it, so a connection that cannot take one is refused.
	if err := http.NewResponseController(w).SetReadDeadline(time.Now().Add(h.bodyTimeout)); err != nil {
		return push.Answer{}, fmt.Errorf("bound the push body's time: %w", err)
	}
	release, err := h.admit.Push(r.Context(), who.tokenHash)
	if err != nil {
		return push.Answer{}, err
	}
	defer release()
	env, stored, err := h.readPush(w, r)
	if err != nil {
		return push.Answer{}, err
	}
	if who.cluster != "" && who.cluster != env.ClusterName {
		return push.Answer{}, fail(http.StatusForbidden, fmt.Sprintf("this token pushes only as cluster %q, not %q", who.cluster, env.ClusterName))
	}
	ctx, cancel := context.WithTimeout(h.work, ingestTimeout)
	defer cancel()
	return h.commit(ctx, env, stored, who)
}

// checkHeaders refuses what the headers already show is unacceptable, before a turn is taken.
func (h *ingestHandler) checkHeaders(r *http.Request) error {
	enc := r.Header.Get("Content-Encoding")
	if enc != "gzip" && enc != "identity" && enc != "" {
		return fail(http.StatusUnsupportedMediaType, fmt.Sprintf("unsupported Content-Encoding %q: send gzip or identity", enc))
	}
	if r.ContentLength > int64(h.maxBytes) {
		return tooLarge(h.maxBytes)
	}
	return nil
}

// readPush reads, inflates and decodes the body, the decode within its share of the
// decode budget (admission, rule 2).
//
// It also answers what the store keeps of the push: the gzip envelope as the agent sent
// it, compressed here only when it came uncompressed (snapshots.decode reads it back).
func (h *ingestHandler) readPush(w http.ResponseWriter, r *http.Request) (*push.Envelope, []byte, error) {
	limit := h.maxBytes
	wire, err := readLimited(http.MaxBytesReader(w, r.Body, int64(limit)), limit)
	if err != nil {
		return nil, nil, bodyError(err, limit, h.bodyTimeout)
	}
	encoding := r.Header.Get("Content-Encoding")
	plain, err := push.Inflate(bytes.NewReader(wire), encoding, limit)
	if err != nil {
		return nil, nil, decodeError(err, limit)
	}
	turn, err := h.admit.Decode(r.Context(), len(plain))
	if err != nil {
		return nil, nil, err
	}
	defer turn()
	env, err := push.DecodeJSON(plain)
	if err != nil {
		return nil, nil, decodeError(err, limit)
	}
	if encoding == "gzip" {
		return env, wire, nil
	}
	stored, err := gzipBytes(plain)
	if err != nil {
		return nil, nil, fmt.Errorf("compress push: %w", err)
	}
	return env, stored, nil
}

// decodeError answers a push the decoder refused with its status.
func decodeError(err error, limit int) error {
	switch {
	case errors.Is(err, push.ErrTooLarge):
		return tooLarge(limit)
	case errors.Is(err, push.ErrEncoding):
		return fail(http.StatusUnsupportedMediaType, err.Error())
	}
	return fail(http.StatusUnprocessableEntity, err.Error())
}

func tooLarge(limit int) error {
	return fail(http.StatusRequestEntityTooLarge, fmt.Sprintf("push is larger than %d bytes on the wire or decompressed (--max-snapshot-bytes)", limit))
}

// bodyError classifies a failed body read: too large, too slow, or cut off.
func bodyError(err error, limit int, timeout time.Duration) error {
	var mbe *http.MaxBytesError
	var ne net.Error
	switch {
	case errors.As(err, &mbe), errors.Is(err, errTooLong):
		return tooLarge(limit)
	case errors.Is(err, os.ErrDeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return fail(http.StatusRequestTimeout, fmt.Sprintf("the body took longer than %s to arrive", timeout))
	}
	return fail(http.StatusBadRequest, "could not read the body: "+err.Error())
}

var errTooLong = errors.New("too long")

// readLimited reads r whole, failing with errTooLong past limit bytes.
func readLimited(r io.Reader, limit int) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, int64(limit)+1))
	if err != nil {
		return nil, err
	}
	if len(data) > limit {
		return nil, errTooLong
	}
	return data, nil
}

// commit evaluates a decoded push and stores it: a duplicate of the cluster's latest
// snapshot is answered without evaluating (unless that snapshot lacks an evaluation); a
// name bound to another UID is refused before evaluating, and again by the store's
// transaction, which decides.
func (h *ingestHandler) commit(ctx context.Context, env *push.Envelope, stored []byte, who pusher) (push.Answer, error) {
	doc := env.Inventory
	hash, err := inventory.HashJSON(env.InventoryJSON)
	if err != nil {
		return push.Answer{}, fmt.Errorf("hash inventory: %w", err)
	}
	head, err := h.head(ctx, env.ClusterName, doc.ClusterID)
	if err != nil {
		return push.Answer{}, err
	}
	// The version a cluster is judged from (its emulated minor when it has one) is the one
	// stored: reads derive default targets from it.
	in := store.Ingest{ClusterName: env.ClusterName, ClusterUID: doc.ClusterID, Hash: hash,
		CollectedAt: doc.CollectedAt, AgentVersion: env.AgentVersion, KBVersion: env.KBVersion,
		AgentBundles: storedBundles(env.Bundles), ServerVersion: currentVersion(doc, ""), TokenHash: who.tokenHash}
	var results map[string]*report.TargetResult
	if in.Evaluations, results, err = h.judge(ctx, env.ClusterName, doc, head, hash); err != nil {
		return push.Answer{}, err
	}
	if err := h.notes.forIngest(ctx, &in, results, head, env.ClusterName); err != nil {
		return push.Answer{}, err
	}
	in.Inventory = stored
	res, err := h.store.Ingest(ctx, in)
	for try := 1; errors.Is(err, store.ErrBaselineMoved) && try < baselineTries; try++ {
		// Another ingest of the cluster committed a decided evaluation first: compare again.
		if head, err = h.head(ctx, env.ClusterName, doc.ClusterID); err == nil {
			err = h.notes.forIngest(ctx, &in, results, head, env.ClusterName)
		}
		if err == nil {
			res, err = h.store.Ingest(ctx, in)
		}
	}
	switch {
	case errors.Is(err, store.ErrRevoked):
		return push.Answer{}, fail(http.StatusUnauthorized, "the ingest token was revoked")
	case errors.Is(err, store.ErrConflict):
		return push.Answer{}, conflictError(conflictReason(err), env.ClusterName)
	case errors.Is(err, store.ErrBaselineMoved):
		return push.Answer{}, admission.ErrBusy
	case err != nil:
		return push.Answer{}, err
	}
	if in.Notification != nil {
		h.notes.wake()
	}
	out := push.Answer{ClusterID: res.ClusterID, SnapshotID: res.SnapshotID, Duplicate: res.Duplicate}
	if !res.Duplicate {
		for _, ev := range in.Evaluations {
			out.Evaluated = append(out.Evaluated, ev.Target)
			out.Verdicts = append(out.Verdicts, push.Verdict{Target: ev.Target, Verdict: ev.Verdict, Score: ev.Score, Blockers: ev.Blockers})
		}
	}
	return out, nil
}

// head answers the cluster registered as name (zero before its first push), refusing a
// push from another UID before anything is evaluated.
func (h *ingestHandler) head(ctx context.Context, name, uid string) (store.ClusterHead, error) {
	head, err := h.store.Head(ctx, name)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return store.ClusterHead{}, nil
	case err != nil:
		return store.ClusterHead{}, err
	case head.UID != "" && head.UID != uid && uid == "":
		return store.ClusterHead{}, conflictError(store.ReasonNoUID, name)
	case head.UID != "" && head.UID != uid:
		return store.ClusterHead{}, conflictError(store.ReasonOtherUID, name)
	}
	return head, nil
}

// judge evaluates doc at the targets it still needs: all of them for a new snapshot, those
// the stored one lacks for a duplicate. An evaluation that fails is logged and the snapshot
// stored without it: reads fall back to a what-if, the fleet shows the cluster's cells as
// outdated, and the next push of it is judged again. Only a busy server refuses the push.
func (h *ingestHandler) judge(ctx context.Context, name string, doc *inventory.Document, head store.ClusterHead, hash string) ([]store.Evaluation, map[string]*report.TargetResult, error) {
	targets := h.plan.plan(currentVersion(doc, head.ServerVersion))
	if head.LatestHash == hash {
		var err error
		if targets, err = h.unevaluated(ctx, head, targets); err != nil {
			return nil, nil, err
		}
	}
	if len(targets) == 0 {
		return nil, nil, nil
	}
	// The cluster's audit webhook section is judged with the pushed inventory (withAudit).
	judged, err := h.snaps.withAudit(ctx, head.ID, doc)
	var evals []store.Evaluation
	var results map[string]*report.TargetResult
	if err == nil {
		evals, results, err = h.eval.evaluate(ctx, judged, targets)
	}
	if errors.Is(err, admission.ErrBusy) {
		return nil, nil, err
	}
	if err != nil {
		h.log.Error("evaluation failed; storing the snapshot without evaluations", "cluster", name, "err", err)
		return nil, nil, nil
	}
	return evals, results, nil
}

// unevaluated answers the targets the cluster's latest snapshot has no stored evaluation
// at with the current bundle set: a duplicate push fills in what an earlier evaluation
// failed to, a new --target, or what the background re-evaluation has not reached yet.
func (h *ingestHandler) unevaluated(ctx context.Context, head store.ClusterHead, targets []string) ([]string, error) {
	cells, err := h.store.ClusterCells(ctx, head.ID)
	if err != nil {
		return nil, err
	}
	// Any bundle set's evaluation will do, from any day: one made with another set, or on
	// an earlier day, is the background re-evaluation's to replace. A duplicate judged
	// again here would let replicas a poll apart on their bundles take a cell back and
	// forth, notifying at every turn, and after midnight every agent's next push would be
	// an evaluation at once, unpaced.
	return missingTargets(cells, current{head.LatestSnapshotID, anySet, anyDay}, targets), nil
}

// anySet matches an evaluation made with any bundle set.
const anySet = ""

// anyDay matches an evaluation made on any day.
var anyDay time.Time

// current is what makes a stored evaluation a cluster's judgement now: of its latest
// snapshot, made with the bundle set key (anySet: with any), on the UTC day of now (anyDay:
// on any). The rules judge dates by the day, so yesterday's judgement of an unchanged
// inventory may be wrong today (an end of life passed) and is made again.
type current struct {
	snapshot int64
	key      string
	now      time.Time
}

func (c current) holds(snapshot int64, key string, evaluatedAt time.Time) bool {
	return snapshot == c.snapshot && (c.key == anySet || key == c.key) && (c.now.IsZero() || sameDay(evaluatedAt, c.now))
}

// missingTargets are the targets at which cells hold no evaluation that is current.
func missingTargets(cells []store.FleetRow, want current, targets []string) []string {
	var out []string
	for _, t := range targets {
		if !slices.ContainsFunc(cells, func(c store.FleetRow) bool {
			return c.Target == t && want.holds(c.SnapshotID, c.BundlesKey, c.EvaluatedAt)
		}) {
			out = append(out, t)
		}
	}
	return out
}

// sameDay says whether a and b fall on the same UTC day: the unit the rules judge dates in.
func sameDay(a, b time.Time) bool {
	return a.UTC().Format(time.DateOnly) == b.UTC().Format(time.DateOnly)
}

// conflictReason is the store's reason for a conflict, without its wrapping.
func conflictReason(err error) string {
	for _, r := range []string{store.ReasonOtherUID, store.ReasonNoUID, store.ReasonTokenMoved, store.ReasonNameTaken} {
		if strings.Contains(err.Error(), r) {
			return r
		}
	}
	return "conflict"
}

func conflictError(reason, name string) error {
	return fail(http.StatusConflict, fmt.Sprintf("cluster %q: %s; give each cluster its own --cluster-name", name, reason))
}

// ingestResult is the metrics label of a refused push.
func ingestResult(err error) string {
	var ae *apiError
	var busy *admission.Refusal
	if errors.As(err, &busy) {
		return "busy"
	}
	if !errors.As(err, &ae) {
		return "error"
	}
	switch ae.status {
	case http.StatusUnauthorized:
		return "unauthorized"
	case http.StatusForbidden:
		return "forbidden"
	case http.StatusConflict:
		return "conflict"
	case http.StatusRequestEntityTooLarge:
		return "too_large"
	case http.StatusServiceUnavailable:
		return "busy"
	case http.StatusUnprocessableEntity, http.StatusUnsupportedMediaType, http.StatusBadRequest, http.StatusRequestTimeout:
		return "invalid"
	}
	return "error"
}
