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
	"strconv"

	"github.com/upgradescope/upgradescope/collectors/files"
	"github.com/upgradescope/upgradescope/config"
	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/output"
	"github.com/upgradescope/upgradescope/report"
)

// InventoryContentType marks a gate body that is an inventory document, not manifests.
const InventoryContentType = "application/vnd.upgradescope.inventory+json"

// Bounds of a gate request besides its bytes (Config.MaxGateBytes).
const (
	// DefaultMaxGateBytes is --max-gate-bytes' default.
	DefaultMaxGateBytes = 10 << 20
	// maxGateDocuments bounds the YAML or JSON documents of a manifest body.
	maxGateDocuments = 20_000
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
	allowIncomplete              bool
	ignore                       []report.IgnoreRule
}

// gate judges the manifests (or the inventory) a pipeline sends against ?target=, exactly as
// `scan --files` (or `eval --inventory`) would, and answers 422 with the report when the
// gate fails, 200 otherwise. Nothing is stored.
func (s *Server) gate(w http.ResponseWriter, r *http.Request, sc scope) error {
	req, err := parseGate(r)
	if err != nil {
		return err
	}
	doc, err := s.gateInventory(w, r)
	if err != nil {
		return err
	}
	if err := acquire(r.Context(), s.whatIfs, 1, whatIfWait); err != nil {
		return err
	}
	mapped := s.cfg.TeamMap.apply(doc)
	rep, err := s.engine.Evaluate(r.Context(), mapped, []string{req.target}, s.now().UTC(), engine.WithIgnore(req.ignore))
	s.whatIfs.Release(1)
	if err != nil {
		return fmt.Errorf("gate evaluation at %s: %w", req.target, err)
	}
	if len(rep.Targets) > 0 {
		scopeResult(&rep.Targets[0], sc, namespaceTeams(mapped))
	}
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
	if len(rep.Targets) > 0 {
		w.Header().Set("X-Upgradescope-Verdict", rep.Targets[0].Verdict)
	}
	w.Header().Set("Content-Type", gateContentTypes[req.format])
	w.WriteHeader(status)
	_, err = w.Write(body.Bytes())
	return err
}

func parseGate(r *http.Request) (gateRequest, error) {
	q := r.URL.Query()
	req := gateRequest{format: output.FormatJSON, failOn: report.FailOnBlocker, path: q.Get("path")}
	if q.Get("cluster") != "" {
		return req, fail(http.StatusUnprocessableEntity, "cluster: judging against a stored cluster is not available yet; leave it out to judge the body alone")
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
