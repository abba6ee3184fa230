package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/upgradescope/upgradescope/collectors/files"
	"github.com/upgradescope/upgradescope/config"
	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/fleet/api"
	"github.com/upgradescope/upgradescope/fleet/server/admission"
	"github.com/upgradescope/upgradescope/fleet/server/store"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/output"
	"github.com/upgradescope/upgradescope/report"
)

// Bounds of a gate request besides its bytes (Config.MaxGateBytes).
const (
	// DefaultMaxGateBytes is --max-gate-bytes' default.
	DefaultMaxGateBytes = 10 << 20
	// maxGateDocuments bounds the YAML or JSON documents of a manifest body.
	maxGateDocuments = 20_000
	// maxGatePath bounds the query's path in a repository (api.MaxGateConfig its config).
	maxGatePath = 512
)

// manifestTypes are the content types a manifest stream may be sent as.
var manifestTypes = map[string]bool{
	"application/yaml": true, "application/x-yaml": true, "text/yaml": true, "text/x-yaml": true,
	"application/json": true, "text/plain": true,
}

// gateContentTypes are what each format is answered as.
var gateContentTypes = map[string]string{
	output.FormatJSON: "application/json", output.FormatSARIF: "application/sarif+json",
	output.FormatJUnit: "application/xml", output.FormatMarkdown: "text/markdown; charset=utf-8",
	output.FormatTable: "text/plain; charset=utf-8", output.FormatGitLab: "application/json",
}

// gateRequest is a gate's query, validated.
type gateRequest struct {
	target, format, failOn, path string
	cluster                      string // an id or a name; "" judges the body alone
	allowIncomplete              bool
	ignore                       []report.IgnoreRule
}

// gateHandler is POST /api/v1/gate.
type gateHandler struct {
	store    store.Store
	reads    *fleetReads
	snaps    *snapshots
	admit    *admission.Turns
	policy   *activePolicy
	teamMap  TeamMap
	now      func() time.Time
	maxBytes int
}

// serve judges the manifests (or the inventory) a pipeline sends against ?target=: alone,
// exactly as `scan --files` (or `eval --inventory`) would, or applied to ?cluster='s latest
// stored inventory, counting only what the body introduces. It answers 422 with the report
// when the gate fails, 200 otherwise. Nothing is stored.
func (h *gateHandler) serve(w http.ResponseWriter, r *http.Request, sc scope) error {
	req, err := parseGate(r)
	if err != nil {
		return err
	}
	var c *store.Cluster
	if req.cluster != "" {
		if c, err = h.cluster(r, req, sc); err != nil {
			return err
		}
	}
	doc, ignore, err := h.inventory(w, r)
	if err != nil {
		return err
	}
	if ignore != nil {
		req.ignore = ignore
	}
	rep, err := h.judge(r, req, doc, c, sc)
	if err != nil {
		return err
	}
	if c != nil {
		rep.Targets[0].Recount(report.Finding.Introduced)
	}
	return writeGate(w, req, rep)
}

// writeGate renders the gate's report: 422 when the gate fails, 200 otherwise, the verdicts
// in headers either way.
func writeGate(w http.ResponseWriter, req gateRequest, rep *report.Report) error {
	renderer, err := output.New(req.format, output.Options{FailOn: req.failOn, SARIFBase: req.path})
	if err != nil {
		return fail(http.StatusUnprocessableEntity, err.Error())
	}
	var body bytes.Buffer
	if err := renderer.Render(&body, rep); err != nil {
		return fmt.Errorf("render the gate's report: %w", err)
	}
	status := http.StatusOK
	if rep.Gate(req.failOn, req.allowIncomplete) != "" {
		status = http.StatusUnprocessableEntity
	}
	t := rep.Targets[0]
	w.Header().Set(api.VerdictHeader, t.Verdict)
	if t.Cluster != nil {
		w.Header().Set(api.ClusterVerdictHeader, t.Cluster.Verdict)
	}
	w.Header().Set("Content-Type", gateContentTypes[req.format])
	w.WriteHeader(status)
	_, err = w.Write(body.Bytes())
	return err
}

// cluster finds ?cluster= by name, else by id (a name may be all digits), as the
// scope may read it: a cluster out of a team-scoped reader's reach is not found, as on
// every per-cluster read. A target the cluster already runs is refused.
func (h *gateHandler) cluster(r *http.Request, req gateRequest, sc scope) (*store.Cluster, error) {
	head, err := h.store.Head(r.Context(), req.cluster)
	var id int64
	switch {
	case err == nil:
		id = head.ID
	case !errors.Is(err, store.ErrNotFound):
		return nil, err
	default:
		if id, err = strconv.ParseInt(req.cluster, 10, 64); err != nil || id < 1 {
			return nil, errClusterNotFound
		}
	}
	c, _, err := h.reads.clusterByID(r, id, sc)
	if err != nil {
		return nil, err
	}
	if _, err := targetParam(r, c); err != nil {
		return nil, err
	}
	return &c, nil
}

// judge evaluates the body at the gate's target, applied to cluster c's latest snapshot
// when there is one, read within the evaluation's turn (it may be tens of megabytes); the
// snapshot is then evaluated alone as well, to tell what the body introduces. A team-scoped
// reader's body is applied to its share of the snapshot (shareOf), never to the whole: what
// it is answered would otherwise tell whether an object it guessed is another team's, and
// the cluster's judgement beside it is the share's, never ready. Who owns a namespace is
// the stored cluster's to say, never the body's: a namespace of another team is not in the
// share, so an object the body puts there is judged as in a namespace no team owns: it
// counts (fail closed), and the answer is the same whether or not that team has it.
func (h *gateHandler) judge(r *http.Request, req gateRequest, doc *inventory.Document, c *store.Cluster, sc scope) (*report.Report, error) {
	ctx := r.Context()
	turn, err := h.admit.WhatIf(ctx)
	if err != nil {
		return nil, err
	}
	defer turn()
	now, opts := h.now().UTC(), []engine.EvalOption{engine.WithIgnore(req.ignore)}
	eng := h.policy.load().eng
	var context *inventory.Document
	var snapID int64
	if c != nil {
		if context, snapID, err = h.snaps.latest(ctx, *c); err != nil {
			return nil, err
		}
		context = shareOf(h.teamMap.apply(context), sc)
		doc = inventory.Overlay(context, doc)
	} else {
		doc = h.teamMap.apply(doc)
	}
	rep, err := eng.Evaluate(ctx, doc, []string{req.target}, now, opts...)
	if err != nil {
		return nil, gateEvalError(fmt.Errorf("gate evaluation at %s: %w", req.target, err))
	}
	if len(rep.Targets) != 1 {
		return nil, fmt.Errorf("gate evaluation at %s answered %d targets", req.target, len(rep.Targets))
	}
	if c == nil {
		return rep, nil
	}
	base, err := eng.Evaluate(ctx, context, []string{req.target}, now, opts...)
	if err != nil {
		return nil, gateEvalError(fmt.Errorf("gate evaluation of cluster %q alone at %s: %w", c.Name, req.target, err))
	}
	t := &rep.Targets[0]
	report.AgainstContext(t, base.Targets[0], c.Name, snapID)
	if !sc.fleet {
		// The cluster's judgement is its share's, judged as every share is (asShare).
		t.Cluster.Verdict = report.Verdict(t.Cluster.Blockers, append(slices.Clone(t.NotAssessed), othersGap))
	}
	return rep, nil
}

func parseGate(r *http.Request) (gateRequest, error) {
	q := r.URL.Query()
	req := gateRequest{format: output.FormatJSON, failOn: report.FailOnBlocker, path: q.Get("path"),
		cluster: q.Get("cluster")}
	if len(req.path) > maxGatePath || len(q.Get("config")) > api.MaxGateConfig {
		return req, fail(http.StatusUnprocessableEntity, fmt.Sprintf("path is at most %d bytes and config at most %d", maxGatePath, api.MaxGateConfig))
	}
	minor, err := inventory.ParseTarget(q.Get("target"))
	if q.Get("target") == "" || err != nil || minor != q.Get("target") {
		return req, fail(http.StatusUnprocessableEntity, fmt.Sprintf("target %q: required, a minor written 1.NN", q.Get("target")))
	}
	req.target = minor
	if f := q.Get("format"); f != "" {
		if _, ok := gateContentTypes[f]; !ok {
			return req, fail(http.StatusUnprocessableEntity, fmt.Sprintf("format %q: want json, sarif, junit, markdown, table or gitlab-codequality", f))
		}
		req.format = f
	}
	if f := q.Get("fail-on"); f != "" {
		if req.failOn, err = report.ParseFailOn(f); err != nil {
			return req, fail(http.StatusUnprocessableEntity, "fail-on: "+err.Error())
		}
	}
	if a := q.Get("allow-incomplete"); a != "" {
		if req.allowIncomplete, err = strconv.ParseBool(a); err != nil {
			return req, fail(http.StatusUnprocessableEntity, fmt.Sprintf("allow-incomplete %q: want true or false", a))
		}
	}
	if c := q.Get("config"); c != "" {
		cfg, err := config.Parse("config", []byte(c))
		if err != nil {
			return req, fail(http.StatusUnprocessableEntity, err.Error())
		}
		req.ignore = cfg.Ignore
	}
	return req, nil
}

// inventory reads the body as an inventory document or collects its manifests, bounded.
func (h *gateHandler) inventory(w http.ResponseWriter, r *http.Request) (*inventory.Document, []report.IgnoreRule, error) {
	media, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || media != api.InventoryContentType && media != api.GateContentType && !manifestTypes[media] {
		return nil, nil, fail(http.StatusUnsupportedMediaType, fmt.Sprintf("content type %q: send manifests as application/yaml or application/json, or an inventory as %s", r.Header.Get("Content-Type"), api.InventoryContentType))
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, int64(h.maxBytes)))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return nil, nil, fail(http.StatusRequestEntityTooLarge, fmt.Sprintf("the body is larger than %d bytes (--max-gate-bytes)", h.maxBytes))
	} else if err != nil {
		return nil, nil, fail(http.StatusBadRequest, "read the body: "+err.Error())
	}
	switch media {
	case api.GateContentType:
		return gateEnvelope(body)
	case api.InventoryContentType:
		doc, err := inventory.Parse(body)
		if err != nil {
			return nil, nil, fail(http.StatusUnprocessableEntity, "inventory: "+err.Error())
		}
		return doc, nil, nil
	}
	doc, err := h.collectManifests(body)
	return doc, nil, err
}

// gateEnvelope reads an inventory and its suppression file; no config is no ignore rule.
func gateEnvelope(body []byte) (*inventory.Document, []report.IgnoreRule, error) {
	var env api.GateRequest
	if err := json.Unmarshal(body, &env); err != nil {
		return nil, nil, fail(http.StatusUnprocessableEntity, "gate body: "+err.Error())
	}
	if len(env.Config) > api.MaxGateConfig {
		return nil, nil, fail(http.StatusUnprocessableEntity, fmt.Sprintf("config: at most %d bytes", api.MaxGateConfig))
	}
	doc, err := inventory.Parse(env.Inventory)
	if err != nil {
		return nil, nil, fail(http.StatusUnprocessableEntity, "inventory: "+err.Error())
	}
	if env.Config == "" {
		return doc, nil, nil // the query's config, if any, applies
	}
	cfg, err := config.Parse("config", []byte(env.Config))
	if err != nil {
		return nil, nil, fail(http.StatusUnprocessableEntity, err.Error())
	}
	return doc, cfg.Ignore, nil
}

// collectManifests runs the files collector over the body, one file held in memory: one
// implementation for `scan --files` and the gate, so their reports agree.
func (h *gateHandler) collectManifests(body []byte) (*inventory.Document, error) {
	e := h.policy.load().eng
	res, err := files.CollectBytes("manifests.yaml", body, files.Options{Observe: e.Observe(), Workers: 1})
	if err != nil {
		return nil, err
	}
	if res.Documents > maxGateDocuments {
		return nil, fail(http.StatusRequestEntityTooLarge, fmt.Sprintf("%d documents: a gate judges at most %d", res.Documents, maxGateDocuments))
	}
	for _, w := range res.Warnings {
		if w.Bound {
			return nil, fail(http.StatusRequestEntityTooLarge, fmt.Sprintf("line %d: %s", w.Line, w.Message))
		}
	}
	if res.Objects == 0 {
		return nil, fail(http.StatusUnprocessableEntity, "the body holds no Kubernetes object")
	}
	return files.Inventory(res, h.now()), nil
}

// gateEvalError answers an evaluation that ran out of time as busy (503 with Retry-After):
// on a loaded server that is what it is, and a pipeline retries. One that crossed the memory
// bound would cross it again: it is refused (422) naming the pack.
func gateEvalError(err error) error {
	var le *engine.LimitError
	switch {
	case errors.As(err, &le) && le.Limit == engine.LimitMemory:
		return fail(http.StatusUnprocessableEntity, err.Error())
	case errors.As(err, &le):
		return fail(http.StatusServiceUnavailable, "the server is busy: the evaluation ran out of time ("+le.Error()+"), retry later")
	}
	return err
}
