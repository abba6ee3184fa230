package server

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/upgradescope/upgradescope/collectors/files"
	"github.com/upgradescope/upgradescope/config"
	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/output"
	"github.com/upgradescope/upgradescope/report"
	"github.com/upgradescope/upgradescope/server/store"
)

// InventoryContentType marks a gate body that is an inventory document, not manifests.
const InventoryContentType = "application/vnd.upgradescope.inventory+json"

// Bounds of a gate request besides its bytes (Config.MaxGateBytes).
const (
	// DefaultMaxGateBytes is --max-gate-bytes' default.
	DefaultMaxGateBytes = 10 << 20
	// maxGateDocuments bounds the YAML or JSON documents of a manifest body.
	maxGateDocuments = 20_000
	// maxGatePath and maxGateConfig bound the query's free-text values: a path in a
	// repository, and an .upgradescope.yaml of ignore rules.
	maxGatePath   = 512
	maxGateConfig = 32 << 10
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
	output.FormatTable: "text/plain; charset=utf-8",
}

// gateRequest is a gate's query, validated.
type gateRequest struct {
	target, format, failOn, path string
	cluster                      string // an id or a name; "" judges the body alone
	allowIncomplete              bool
	ignore                       []report.IgnoreRule
}

// gate judges the manifests (or the inventory) a pipeline sends against ?target=: alone,
// exactly as `scan --files` (or `eval --inventory`) would, or with ?cluster= applied to that
// cluster's latest stored inventory, counting only what the body introduces. It answers 422
// with the report when the gate fails, 200 otherwise. Nothing is stored.
func (s *Server) gate(w http.ResponseWriter, r *http.Request, sc scope) error {
	req, err := parseGate(r)
	if err != nil {
		return err
	}
	var context *gateContext
	if req.cluster != "" {
		if context, err = s.gateContext(r, req, sc); err != nil {
			return err
		}
	}
	doc, err := s.gateInventory(w, r)
	if err != nil {
		return err
	}
	rep, nsTeam, err := s.judgeGate(r, req, doc, context)
	if err != nil {
		return err
	}
	t := &rep.Targets[0]
	if context != nil || !sc.fleet {
		t.Recount(func(f report.Finding) bool { return f.Introduced() && inShare(f, sc) })
	}
	scopeResult(t, sc, nsTeam)
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
	w.Header().Set("X-Upgradescope-Verdict", t.Verdict)
	if t.Cluster != nil {
		w.Header().Set("X-Upgradescope-Cluster-Verdict", t.Cluster.Verdict)
	}
	w.Header().Set("Content-Type", gateContentTypes[req.format])
	w.WriteHeader(status)
	_, err = w.Write(body.Bytes())
	return err
}

// inShare reports whether a finding is the scope's to answer for: a team-scoped reader
// judges its teams' findings and those no team owns, as a team's verdict does.
func inShare(f report.Finding, sc scope) bool {
	return sc.fleet || len(f.Teams) == 0 || slices.ContainsFunc(f.Teams, sc.sees)
}

// gateContext is a stored cluster a gate judges its body against.
type gateContext struct {
	cluster    store.Cluster
	snapshotID int64
	doc        *inventory.Document
}

// gateContext reads ?cluster='s latest snapshot: by id, else by name. A cluster out of a
// team-scoped reader's reach is not found, as on every per-cluster read.
func (s *Server) gateContext(r *http.Request, req gateRequest, sc scope) (*gateContext, error) {
	id, err := strconv.ParseInt(req.cluster, 10, 64)
	if err != nil || id < 1 {
		head, err := s.store.Head(r.Context(), req.cluster)
		if errors.Is(err, store.ErrNotFound) {
			return nil, errClusterNotFound
		} else if err != nil {
			return nil, err
		}
		id = head.ID
	}
	c, _, err := s.clusterByID(r, id, sc)
	if err != nil {
		return nil, err
	}
	if _, err := targetParam(r, c); err != nil {
		return nil, err
	}
	doc, snapID, err := s.latestInventory(r.Context(), c)
	if err != nil {
		return nil, err
	}
	return &gateContext{cluster: c, snapshotID: snapID, doc: doc}, nil
}

// judgeGate evaluates the body at the gate's target, applied to the context when there is
// one; the context is then evaluated alone as well, to tell what the body introduces. It
// answers the report and each namespace's team.
func (s *Server) judgeGate(r *http.Request, req gateRequest, doc *inventory.Document, context *gateContext) (*report.Report, map[string]string, error) {
	if err := acquire(r.Context(), s.whatIfs, 1, whatIfWait); err != nil {
		return nil, nil, err
	}
	defer s.whatIfs.Release(1)
	now, opts := s.now().UTC(), []engine.EvalOption{engine.WithIgnore(req.ignore)}
	if context != nil {
		doc = inventory.Overlay(context.doc, doc)
	}
	mapped := s.cfg.TeamMap.apply(doc)
	rep, err := s.engine.Evaluate(r.Context(), mapped, []string{req.target}, now, opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("gate evaluation at %s: %w", req.target, err)
	}
	if len(rep.Targets) != 1 {
		return nil, nil, fmt.Errorf("gate evaluation at %s answered %d targets", req.target, len(rep.Targets))
	}
	if context == nil {
		return rep, namespaceTeams(mapped), nil
	}
	base, err := s.engine.Evaluate(r.Context(), s.cfg.TeamMap.apply(context.doc), []string{req.target}, now, opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("gate evaluation of cluster %q alone at %s: %w", context.cluster.Name, req.target, err)
	}
	report.AgainstContext(&rep.Targets[0], base.Targets[0], context.cluster.Name, context.snapshotID)
	return rep, namespaceTeams(mapped), nil
}

func parseGate(r *http.Request) (gateRequest, error) {
	q := r.URL.Query()
	req := gateRequest{format: output.FormatJSON, failOn: report.FailOnBlocker, path: q.Get("path"),
		cluster: q.Get("cluster")}
	if len(req.path) > maxGatePath || len(q.Get("config")) > maxGateConfig {
		return req, fail(http.StatusUnprocessableEntity, fmt.Sprintf("path is at most %d bytes and config at most %d", maxGatePath, maxGateConfig))
	}
	minor, err := inventory.ParseTarget(q.Get("target"))
	if q.Get("target") == "" || err != nil || minor != q.Get("target") {
		return req, fail(http.StatusUnprocessableEntity, fmt.Sprintf("target %q: required, a minor written 1.NN", q.Get("target")))
	}
	req.target = minor
	if f := q.Get("format"); f != "" {
		if _, ok := gateContentTypes[f]; !ok {
			return req, fail(http.StatusUnprocessableEntity, fmt.Sprintf("format %q: want json, sarif, junit, markdown or table", f))
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

// gateInventory reads the body as an inventory document or collects its manifests, bounded.
func (s *Server) gateInventory(w http.ResponseWriter, r *http.Request) (*inventory.Document, error) {
	media, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || media != InventoryContentType && !manifestTypes[media] {
		return nil, fail(http.StatusUnsupportedMediaType, fmt.Sprintf("content type %q: send manifests as application/yaml or application/json, or an inventory as %s", r.Header.Get("Content-Type"), InventoryContentType))
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, int64(s.cfg.MaxGateBytes)))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return nil, fail(http.StatusRequestEntityTooLarge, fmt.Sprintf("the body is larger than %d bytes (--max-gate-bytes)", s.cfg.MaxGateBytes))
	} else if err != nil {
		return nil, fail(http.StatusBadRequest, "read the body: "+err.Error())
	}
	if media == InventoryContentType {
		doc, err := inventory.Parse(body)
		if err != nil {
			return nil, fail(http.StatusUnprocessableEntity, "inventory: "+err.Error())
		}
		return doc, nil
	}
	return s.collectManifests(body)
}

// collectManifests runs the files collector over the body, written to a private temporary
// file: one implementation for `scan --files` and the gate, so their reports agree.
func (s *Server) collectManifests(body []byte) (*inventory.Document, error) {
	dir, err := os.MkdirTemp("", "upgradescope-gate-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if err := os.WriteFile(filepath.Join(dir, "manifests.yaml"), body, 0o600); err != nil {
		return nil, err
	}
	e := s.engine
	res, err := files.Collect(dir, files.Options{Watched: e.WatchedKinds(), Known: e.KnownKinds(),
		BuiltinGroups: e.BuiltinGroups(), Images: e.ImageWatch(), Probes: e.Probes(), Workers: 1})
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
	doc := files.Inventory(res, s.now())
	doc.FilesBase = "" // the temporary directory means nothing to the caller
	return doc, nil
}
