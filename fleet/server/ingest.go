package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	jsonv2 "github.com/go-json-experiment/json"

	"github.com/upgradescope/upgradescope/fleet/push"
	"github.com/upgradescope/upgradescope/fleet/server/store"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/report"
)

// ingestTimeout bounds evaluating and storing one push once its body is read; the work is
// detached from the request, so an agent that hangs up does not waste an evaluation.
const ingestTimeout = time.Minute

// pusher is who may push: a per-cluster token's cluster, or any cluster for the shared token.
type pusher struct {
	cluster   string // "" for the shared token
	tokenHash string // the per-cluster token's hash, re-checked in the commit
}

// accepted is the 202 answer to a push, and without Evaluated the 200 to a duplicate.
type accepted struct {
	ClusterID  int64     `json:"clusterId"`
	SnapshotID int64     `json:"snapshotId"`
	Duplicate  bool      `json:"duplicate"`
	Evaluated  *[]string `json:"evaluated,omitempty"`
}

// ingest is POST /api/v1/snapshots. Checks run cheapest first, and nothing is written
// before every one has passed: token, encoding, size, body, envelope and inventory, the
// token's cluster, then the name's binding in the store's own transaction.
func (s *Server) ingest(w http.ResponseWriter, r *http.Request) {
	res, err := s.acceptPush(w, r)
	if err != nil {
		s.metrics.ingested(ingestResult(err))
		s.answer(w, r, err)
		return
	}
	status, result := http.StatusAccepted, "accepted"
	if res.Duplicate {
		status, result = http.StatusOK, "duplicate"
	}
	s.metrics.ingested(result)
	writeJSON(w, status, res)
}

func (s *Server) acceptPush(w http.ResponseWriter, r *http.Request) (accepted, error) {
	who, err := s.authenticatePush(r)
	if err != nil {
		return accepted{}, err
	}
	if err := s.checkHeaders(r); err != nil {
		return accepted{}, err
	}
	// The body's time runs from here, so waiting for a turn counts against it too: a client
	// sending slowly holds its turn for BodyTimeout at most. Without a deadline nothing would
	// bound it, so a connection that cannot take one is refused.
	if err := http.NewResponseController(w).SetReadDeadline(time.Now().Add(s.cfg.BodyTimeout)); err != nil {
		return accepted{}, fmt.Errorf("bound the push body's time: %w", err)
	}
	release, err := s.pushes.admit(r.Context(), who)
	if err != nil {
		return accepted{}, err
	}
	defer release()
	s.pushesActive.Add(1)
	defer s.pushesActive.Add(-1)
	env, stored, err := s.readPush(w, r)
	if err != nil {
		return accepted{}, err
	}
	if who.cluster != "" && who.cluster != env.ClusterName {
		return accepted{}, fail(http.StatusForbidden, fmt.Sprintf("this token pushes only as cluster %q, not %q", who.cluster, env.ClusterName))
	}
	ctx, cancel := context.WithTimeout(s.work, ingestTimeout)
	defer cancel()
	return s.commit(ctx, env, stored, who)
}

// checkHeaders refuses what the headers already show is unacceptable, before a turn is taken.
func (s *Server) checkHeaders(r *http.Request) error {
	enc := r.Header.Get("Content-Encoding")
	if enc != "gzip" && enc != "identity" && enc != "" {
		return fail(http.StatusUnsupportedMediaType, fmt.Sprintf("unsupported Content-Encoding %q: send gzip or identity", enc))
	}
	if r.ContentLength > int64(s.cfg.MaxSnapshotBytes) {
		return tooLarge(s.cfg.MaxSnapshotBytes)
	}
	return nil
}

// authenticatePush reads the bearer: the shared --ingest-token, or a per-cluster token.
func (s *Server) authenticatePush(r *http.Request) (pusher, error) {
	tok := bearer(r)
	if tok == "" {
		return pusher{}, fail(http.StatusUnauthorized, "an ingest token is required: send Authorization: Bearer <token>")
	}
	if equal(tok, s.cfg.IngestToken) {
		return pusher{}, nil
	}
	hash := hashToken(tok)
	cluster, err := s.store.IngestTokenCluster(r.Context(), hash)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return pusher{}, fail(http.StatusUnauthorized, "invalid ingest token")
	case err != nil:
		return pusher{}, err
	}
	return pusher{cluster: cluster, tokenHash: hash}, nil
}

// readPush reads, inflates and decodes the body. The decode, validating and parsing the
// JSON, takes about eleven times the JSON's size in memory: it waits for a share of a
// budget of one --max-snapshot-bytes, at least half of it, so two decodes run at once and a
// large one alone.
//
// It also answers what the store keeps of the push: the gzip envelope as the agent sent
// it, compressed here only when it came uncompressed (decodeInventory reads it back).
func (s *Server) readPush(w http.ResponseWriter, r *http.Request) (*push.Envelope, []byte, error) {
	limit := s.cfg.MaxSnapshotBytes
	wire, err := readLimited(http.MaxBytesReader(w, r.Body, int64(limit)), limit)
	if err != nil {
		return nil, nil, bodyError(err, limit, s.cfg.BodyTimeout)
	}
	encoding := r.Header.Get("Content-Encoding")
	plain, err := push.Inflate(bytes.NewReader(wire), encoding, limit)
	if err != nil {
		return nil, nil, decodeError(err, limit)
	}
	weight := int64(min(max(len(plain), limit/2), limit))
	if err := acquire(r.Context(), s.decodes, weight, slotWait); err != nil {
		return nil, nil, err
	}
	defer s.decodes.Release(weight)
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
func (s *Server) commit(ctx context.Context, env *push.Envelope, stored []byte, who pusher) (accepted, error) {
	doc := env.Inventory
	hash, err := inventory.HashJSON(env.InventoryJSON)
	if err != nil {
		return accepted{}, fmt.Errorf("hash inventory: %w", err)
	}
	head, err := s.head(ctx, env.ClusterName, doc.ClusterID)
	if err != nil {
		return accepted{}, err
	}
	// The version a cluster is judged from (its emulated minor when it has one) is the one
	// stored: reads derive default targets from it.
	in := store.Ingest{ClusterName: env.ClusterName, ClusterUID: doc.ClusterID, Hash: hash,
		CollectedAt: doc.CollectedAt, AgentVersion: env.AgentVersion, KBVersion: env.KBVersion,
		AgentBundles: storedBundles(env.Bundles), ServerVersion: currentVersion(doc, ""), TokenHash: who.tokenHash}
	var results map[string]*report.TargetResult
	if in.Evaluations, results, err = s.judge(ctx, env.ClusterName, doc, head, hash); err != nil {
		return accepted{}, err
	}
	if err := s.notify(ctx, &in, results, head, env.ClusterName); err != nil {
		return accepted{}, err
	}
	in.Inventory = stored
	res, err := s.store.Ingest(ctx, in)
	for try := 1; errors.Is(err, store.ErrBaselineMoved) && try < baselineTries; try++ {
		// Another ingest of the cluster committed a decided evaluation first: compare again.
		if head, err = s.head(ctx, env.ClusterName, doc.ClusterID); err == nil {
			err = s.notify(ctx, &in, results, head, env.ClusterName)
		}
		if err == nil {
			res, err = s.store.Ingest(ctx, in)
		}
	}
	switch {
	case errors.Is(err, store.ErrRevoked):
		return accepted{}, fail(http.StatusUnauthorized, "the ingest token was revoked")
	case errors.Is(err, store.ErrConflict):
		return accepted{}, conflictError(conflictReason(err), env.ClusterName)
	case errors.Is(err, store.ErrBaselineMoved):
		return accepted{}, errBusy
	case err != nil:
		return accepted{}, err
	}
	if in.Notification != nil {
		s.notifier.Wake()
	}
	out := accepted{ClusterID: res.ClusterID, SnapshotID: res.SnapshotID, Duplicate: res.Duplicate}
	if !res.Duplicate {
		evaluated := []string{}
		for _, ev := range in.Evaluations {
			evaluated = append(evaluated, ev.Target)
		}
		out.Evaluated = &evaluated
	}
	return out, nil
}

// head answers the cluster registered as name (zero before its first push), refusing a
// push from another UID before anything is evaluated.
func (s *Server) head(ctx context.Context, name, uid string) (store.ClusterHead, error) {
	head, err := s.store.Head(ctx, name)
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
func (s *Server) judge(ctx context.Context, name string, doc *inventory.Document, head store.ClusterHead, hash string) ([]store.Evaluation, map[string]*report.TargetResult, error) {
	targets := s.planTargets(currentVersion(doc, head.ServerVersion))
	if head.LatestHash == hash {
		var err error
		if targets, err = s.unevaluated(ctx, head, targets); err != nil {
			return nil, nil, err
		}
	}
	if len(targets) == 0 {
		return nil, nil, nil
	}
	evals, results, err := s.evaluate(ctx, doc, targets)
	if errors.Is(err, errBusy) {
		return nil, nil, err
	}
	if err != nil {
		s.log.Error("evaluation failed; storing the snapshot without evaluations", "cluster", name, "err", err)
		return nil, nil, nil
	}
	return evals, results, nil
}

// unevaluated answers the targets the cluster's latest snapshot has no stored evaluation
// at with the current bundle set: a duplicate push fills in what an earlier evaluation
// failed to, a new --targets, or what the background re-evaluation has not reached yet.
func (s *Server) unevaluated(ctx context.Context, head store.ClusterHead, targets []string) ([]string, error) {
	cells, err := s.store.ClusterCells(ctx, head.ID)
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

// decodeInventory reads a stored snapshot's inventory back: the gzip of the push's envelope
// (readPush), or, as servers before it stored it, of the inventory alone. An inventory has
// no "inventory" member (the schema closes its top level), so the member tells them apart.
// The member is read as push.DecodeJSON read it, so that of an envelope naming it twice the
// last is read, as it was validated: decoded straight into a Document the copies would merge.
//
// The inventory was accepted by inventory.Parse when it was pushed, so it is decoded with
// inventory.DecodeStored, Parse's json/v2 decode without its acceptor's pass (with the
// envelope's split, about half of the two encoding/json passes it took before): a dry run
// reads every cluster's. A schema grown stricter since does not make a stored snapshot
// unreadable.
func (s *Server) decodeInventory(snap store.SnapshotRecord) (*inventory.Document, error) {
	plain, release, err := s.inflateSnapshot(snap)
	if err != nil {
		return nil, err
	}
	defer release()
	return decodeSnapshot(snap.ID, plain)
}

// decodeInventoryShared is decodeInventory for the background re-evaluation and the dry
// run: the decode waits for its share of the budget pushes decode in (readPush), so work
// no one waits for never adds a large decode to those of the pushes in flight.
func (s *Server) decodeInventoryShared(ctx context.Context, snap store.SnapshotRecord) (*inventory.Document, error) {
	plain, release, err := s.inflateSnapshot(snap)
	if err != nil {
		return nil, err
	}
	defer release()
	limit := s.cfg.MaxSnapshotBytes
	weight := int64(min(max(len(plain), limit/2), limit))
	if err := s.decodes.Acquire(ctx, weight); err != nil {
		return nil, err
	}
	defer s.decodes.Release(weight)
	return decodeSnapshot(snap.ID, plain)
}

// inflateSnapshot inflates a stored snapshot into a pooled buffer, valid until release.
func (s *Server) inflateSnapshot(snap store.SnapshotRecord) (plain []byte, release func(), err error) {
	plain, release, err = inflatePooled(snap.Inventory, s.cfg.MaxSnapshotBytes*2)
	if err != nil {
		return nil, nil, fmt.Errorf("read snapshot %d: %w", snap.ID, err)
	}
	return plain, release, nil
}

func decodeSnapshot(id int64, plain []byte) (*inventory.Document, error) {
	// A stored envelope is one the server accepted: its inventory is decoded where it
	// stands, in one json/v2 pass, as inventory.DecodeStored decodes it alone. Anything v2
	// refuses takes the path below, which splits the envelope first.
	var env struct {
		Inventory *inventory.Document `json:"inventory"`
	}
	if err := jsonv2.Unmarshal(plain, &env); err == nil && env.Inventory != nil {
		return env.Inventory, nil
	}
	raw, err := push.InventoryJSON(plain)
	if err != nil {
		return nil, fmt.Errorf("read snapshot %d: %w", id, err)
	}
	if len(raw) == 0 || string(raw) == "null" {
		raw = plain
	}
	doc, err := inventory.DecodeStored(raw)
	if err != nil {
		return nil, fmt.Errorf("read snapshot %d: %w", id, err)
	}
	return doc, nil
}
