// Package apitest checks real HTTP responses of the fleet server against
// its OpenAPI contract, docs/openapi.yaml. The server's tests call Check on
// every response they get, so a handler that drifts from the documented
// shape fails a test instead of a client.
//
// It must not import package server: server's tests import it.
package apitest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// Spec is a loaded, validated OpenAPI document and its router.
type Spec struct {
	doc    *openapi3.T
	router routers.Router
}

// Load reads the OpenAPI document at path (YAML or JSON), resolves its
// $refs, external files included (docs/report.schema.json), and validates
// it. Any error fails t at once: no response can be checked against a
// broken contract.
func Load(t testing.TB, path string) *Spec {
	t.Helper()
	s, err := load(path)
	if err != nil {
		t.Fatalf("apitest: %v", err)
	}
	return s
}

// The exports and the dashboard answer HTML, the dashboard's assets JavaScript and CSS, and
// the gate Markdown and JUnit XML; kin-openapi decodes text/plain and text/csv bodies as
// strings but knows no decoder for these, so they get the same one.
func init() {
	for _, t := range []string{"text/html", "text/markdown", "application/xml", "text/javascript", "text/css"} {
		openapi3filter.RegisterBodyDecoder(t, openapi3filter.PlainBodyDecoder)
	}
	// A newline-delimited JSON answer (the dry run's stream) is checked line by line
	// (checkLines): each line is one JSON document of the documented schema.
	openapi3filter.RegisterBodyDecoder(ndjson, openapi3filter.JSONBodyDecoder)
}

const ndjson = "application/x-ndjson"

func load(path string) (*Spec, error) {
	ctx := context.Background()
	loader := &openapi3.Loader{Context: ctx, IsExternalRefsAllowed: true}
	doc, err := loader.LoadFromFile(path)
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", path, err)
	}
	// Validate picks the OpenAPI 3.1 rules itself from doc.OpenAPI.
	if err := doc.Validate(ctx); err != nil {
		return nil, fmt.Errorf("validate %s: %w", path, err)
	}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("route %s: %w", path, err)
	}
	return &Spec{doc: doc, router: router}, nil
}

// Check validates one response the server gave to req: the route must be
// in the document, status must be documented for it, the documented
// headers must be there, and body must match the schema of that status
// and content type. It reports failures with t.Errorf, so one test can
// check several responses; each message names method, path and status.
//
// The request's parameters are validated too, but only when the status is
// 2xx: tests send invalid requests on purpose to get a 4xx, while a 2xx to
// a request the document calls invalid means the server accepted too much.
// Request bodies and credentials are not checked: bodies may be gzipped or
// already read, and auth is the server's own tests' business.
//
// Two answers come before routing and have no operation in the document,
// as docs/openapi.yaml says: 405 (with Allow) for a wrong method on a
// documented path, and 404 for an unknown /api/ path. Both must carry an
// Error body. Any other status on an unknown route is a failure.
func (s *Spec) Check(t testing.TB, req *http.Request, status int, header http.Header, body []byte) {
	t.Helper()
	if err := s.check(req, status, header, body); err != nil {
		t.Errorf("apitest: %s %s -> %d: %v", req.Method, req.URL.RequestURI(), status, err)
	}
}

func (s *Spec) check(req *http.Request, status int, header http.Header, body []byte) error {
	ctx := context.Background()
	route, pathParams, err := s.router.FindRoute(req)
	switch {
	case errors.Is(err, routers.ErrMethodNotAllowed) && status == http.StatusMethodNotAllowed:
		if header.Get("Allow") == "" {
			return errors.New("405 without an Allow header")
		}
		return s.checkError(header, body)
	case errors.Is(err, routers.ErrPathNotFound) && status == http.StatusNotFound && strings.HasPrefix(req.URL.Path, "/api/"):
		return s.checkError(header, body)
	case err != nil:
		return fmt.Errorf("route not in the OpenAPI document: %w", err)
	}

	op := route.Operation
	if op.Responses.Status(status) == nil {
		return fmt.Errorf("status %d is not documented for operation %s (documented: %s)",
			status, op.OperationID, strings.Join(statusKeys(op), ", "))
	}

	opts := &openapi3filter.Options{
		IncludeResponseStatus: true,
		MultiError:            true,
		ExcludeRequestBody:    true,
		SkipSettingDefaults:   true, // leave the caller's request as it was
		AuthenticationFunc:    openapi3filter.NoopAuthenticationFunc,
	}
	opts.WithCustomSchemaErrorFunc(shortSchemaError)
	reqInput := &openapi3filter.RequestValidationInput{
		Request:    req,
		PathParams: pathParams,
		Route:      route,
		Options:    opts,
	}
	if status >= 200 && status < 300 {
		if err := openapi3filter.ValidateRequest(ctx, reqInput); err != nil {
			return fmt.Errorf("operation %s answered %d to a request the document calls invalid: %w", op.OperationID, status, err)
		}
	}

	respInput := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: reqInput,
		Status:                 status,
		Header:                 header,
		Options:                opts,
	}
	if strings.HasPrefix(header.Get("Content-Type"), ndjson) {
		if err := checkLines(ctx, respInput, body); err != nil {
			return fmt.Errorf("operation %s: %w", op.OperationID, err)
		}
		return nil
	}
	respInput.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(ctx, respInput); err != nil {
		return fmt.Errorf("operation %s: %w", op.OperationID, err)
	}
	// openapi3filter does not look at a response that documents no content
	// (such as 204), so say here that such a response must have no body.
	if resp := op.Responses.Status(status).Value; len(resp.Content) == 0 && len(bytes.TrimSpace(body)) > 0 {
		return fmt.Errorf("operation %s: status %d documents no body, got %d bytes", op.OperationID, status, len(body))
	}
	return nil
}

// checkLines validates each line of a newline-delimited JSON body against the documented
// schema, as one response each; an empty stream, or one whose last line is cut, fails.
func checkLines(ctx context.Context, in *openapi3filter.ResponseValidationInput, body []byte) error {
	if len(body) == 0 || body[len(body)-1] != '\n' {
		return errors.New("a newline-delimited JSON answer must end each line, the last included, with a newline")
	}
	for i, line := range bytes.Split(body[:len(body)-1], []byte("\n")) {
		in.SetBodyBytes(line)
		if err := openapi3filter.ValidateResponse(ctx, in); err != nil {
			return fmt.Errorf("line %d: %w", i+1, err)
		}
	}
	return nil
}

// checkError validates body as the document's Error schema, for the
// answers that have no operation of their own.
func (s *Spec) checkError(header http.Header, body []byte) error {
	ref := s.doc.Components.Schemas["Error"]
	if ref == nil {
		return errors.New("the document has no components/schemas/Error")
	}
	ct := header.Get("Content-Type")
	if !strings.HasPrefix(ct, "application/json") {
		return fmt.Errorf("content type %q, want application/json", ct)
	}
	value, err := decodeJSON(body)
	if err != nil {
		return err
	}
	err = ref.Value.VisitJSON(value, openapi3.EnableJSONSchema2020(), openapi3.SetSchemaErrorMessageCustomizer(shortSchemaError))
	if err != nil {
		return fmt.Errorf("body does not match Error: %w", err)
	}
	return nil
}

// shortSchemaError words a schema error as where and why. The library's
// own message appends the whole schema and value, which for a report is
// pages of JSON in the test log.
func shortSchemaError(err *openapi3.SchemaError) string {
	reason := err.Reason
	if err.Origin != nil {
		reason = err.Origin.Error()
	}
	if reason == "" {
		reason = fmt.Sprintf("does not match %q", err.SchemaField)
	}
	if ptr := err.JSONPointer(); len(ptr) > 0 {
		return fmt.Sprintf("at /%s: %s", strings.Join(ptr, "/"), reason)
	}
	return reason
}

func decodeJSON(body []byte) (any, error) {
	var value any
	if err := json.Unmarshal(body, &value); err != nil {
		return nil, fmt.Errorf("body is not JSON: %w", err)
	}
	return value, nil
}

func statusKeys(op *openapi3.Operation) []string {
	// Sorted so the message is the same from run to run.
	return slices.Sorted(maps.Keys(op.Responses.Map()))
}
