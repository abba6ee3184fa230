package audit

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// errNotProvider says a record is not in a managed provider's export shape.
var errNotProvider = errors.New("not a managed provider's audit record")

// provider turns one record of a managed provider's audit export (EKS, GKE, AKS) into the
// events it holds, naming its format. A record is one JSON object: a line, or one element of
// a document's array. A record no shape claims is errNotProvider. Once a shape claims it,
// format names that shape even when err is not nil (err does not repeat it), and emit has
// been called for every event read before or beside the part that failed: a batch of log
// events with one bad message still yields the others. A record can hold no event at all:
// a CloudWatch control message, a log stream or category other than the audit log. Errors
// never quote the record: they name the field, the byte offset or the JSON kind.
func provider(raw []byte, emit func(*Event)) (format string, err error) {
	raw = bytes.TrimSpace(raw)
	var rec object
	if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &rec, providerOptions) != nil {
		return "", errNotProvider
	}
	s := rec.shape(shapes)
	if s == nil {
		return "", errNotProvider
	}
	return s.format, s.read(rec, emit)
}

// providerOptions decode as leniently as the reader's decodeOptions (duplicate names,
// invalid UTF-8). Names match exactly, as go-json-experiment matches them by default: an
// upstream Event's "verb" is no Log Analytics row's "Verb".
var providerOptions = json.JoinOptions(jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))

// An object is a record by its member names: shapes are told apart on them, and only then
// decoded.
type object map[string]jsontext.Value

func (r object) has(keys ...string) bool {
	for _, k := range keys {
		if _, ok := r[k]; !ok {
			return false
		}
	}
	return true
}

// is says whether key holds a JSON value of kind: '"' string, '{' object, '[' array, '0'
// number.
func (r object) is(key string, kind byte) bool {
	v := bytes.TrimSpace(r[key])
	if len(v) == 0 {
		return false
	}
	if kind == '0' {
		return v[0] == '-' || (v[0] >= '0' && v[0] <= '9')
	}
	return v[0] == kind
}

// str is key's value when it is a JSON string, and "" otherwise.
func (r object) str(key string) string {
	var s string
	if !r.is(key, '"') || json.Unmarshal(r[key], &s, providerOptions) != nil {
		return ""
	}
	return s
}

// A shape is one provider export format: match tells it from its own documented keys, read
// turns a record of it into events.
type shape struct {
	format string
	match  func(object) bool
	read   func(object, func(*Event)) error
}

// shape is the first of shapes that claims r. No record of the samples in
// testdata/providers is claimed by two (TestEachSampleRecordHasOneShape).
func (r object) shape(shapes []shape) *shape {
	for i := range shapes {
		if shapes[i].match(r) {
			return &shapes[i]
		}
	}
	return nil
}

// shapes are the formats provider reads, by provider.
var shapes = []shape{
	{formatEKSInsight, isEKSInsight, readEKSInsight},
	{formatCloudWatchSubscription, isCloudWatchSubscription, readCloudWatchSubscription},
	{formatLogsInsights, isLogsInsightsResults, readLogsInsightsResults},
	{formatCloudWatch, isCloudWatchEvent, readCloudWatchEvent},
	{formatGKE, isLogEntry, readLogEntry},
	{formatAKSDiagnostics, isAKSResourceLog, readAKSResourceLog},
	{formatAKSLogAnalytics, isAKSAuditRow, readAKSAuditRow},
	{formatAKSLogAnalytics, isLogAnalyticsResponse, readLogAnalyticsResponse},
	{formatAKSAzureDiagnostics, isAzureDiagnosticsRow, readAzureDiagnosticsRow},
}

// decodeEmbedded decodes an audit.k8s.io Event that a provider carries as a JSON string
// (CloudWatch's message, AKS's properties.log and log_s), into the same Event an upstream
// log line is read into.
func decodeEmbedded(s string) (*Event, error) {
	var e struct {
		Kind       string `json:"kind"`
		APIVersion string `json:"apiVersion"`
		Event
	}
	if err := decode([]byte(s), &e); err != nil {
		return nil, fmt.Errorf("not an audit event: %w", err)
	}
	if e.Kind != "Event" || !strings.HasPrefix(e.APIVersion, "audit.k8s.io/") {
		return nil, errors.New("not an audit event: no kind Event of apiVersion audit.k8s.io")
	}
	return &e.Event, nil
}

// decode is json.Unmarshal with errors that do not quote the input.
func decode(raw []byte, v any) error {
	if err := json.Unmarshal(raw, v, providerOptions); err != nil {
		return jsonError(err)
	}
	return nil
}

// jsonError restates a decoding error without the input's content: a syntax error by its
// offset, a type error by the JSON kind, the Go type and the pointer up to its first name
// that is no field decoded here (a map's key is content).
func jsonError(err error) error {
	if own, ok := errors.AsType[*valueError](err); ok {
		return own
	}
	if syn, ok := errors.AsType[*jsontext.SyntacticError](err); ok {
		return fmt.Errorf("invalid JSON at byte %d", syn.ByteOffset)
	}
	sem, ok := errors.AsType[*json.SemanticError](err)
	if !ok || sem.GoType == nil {
		return errors.New("invalid JSON")
	}
	kind := "value"
	if sem.JSONKind != 0 {
		kind = sem.JSONKind.String()
	}
	if p := fieldPointer(sem.JSONPointer); p != "" {
		return fmt.Errorf("%s is a JSON %s, not %s", p, kind, sem.GoType)
	}
	return fmt.Errorf("a JSON %s where %s was expected", kind, sem.GoType)
}

// fieldPointer is p up to its first name that is not a field of the structs here: an index,
// or a name the decoding knows, never a key of a map.
func fieldPointer(p jsontext.Pointer) string {
	var known strings.Builder
	for name := range p.Tokens() {
		if !decodedFields[name] && strings.Trim(name, "0123456789") != "" {
			break
		}
		known.WriteString("/" + name)
	}
	return known.String()
}

// decodedFields are the JSON names of the fields decoded here.
var decodedFields = map[string]bool{
	"kind": true, "apiVersion": true, "stage": true, "verb": true, "user": true, "username": true,
	"sourceIPs": true, "userAgent": true, "objectRef": true, "resource": true, "apiGroup": true,
	"subresource": true, "stageTimestamp": true, "annotations": true,
	"message": true, "logEvents": true, "results": true, "category": true,
	"categorySpecificSummary": true, "deprecationDetails": true, "usage": true,
	"stopServingVersion": true, "clientStats": true,
	"numberOfRequestsLast30Days": true, "lastRequestTime": true,
	"@type": true, "serviceName": true, "methodName": true, "resourceName": true,
	"authenticationInfo": true, "principalEmail": true, "requestMetadata": true,
	"callerIp": true, "callerSuppliedUserAgent": true,
	"columns": true, "rows": true, "name": true,
}

// A valueError is an UnmarshalJSON method's own error, which names the field and never
// the value.
type valueError struct{ msg string }

func (e *valueError) Error() string { return e.msg }

// rfc3339Micro is how the API server writes stageTimestamp. The providers' own times are
// rewritten to it, in UTC, so that every shape's times compare alike.
const rfc3339Micro = "2006-01-02T15:04:05.000000Z07:00"

func stageTime(s string) (string, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return "", errors.New("not an RFC 3339 time")
	}
	return t.UTC().Format(rfc3339Micro), nil
}

// firstErr keeps the first of a batch's errors and counts them all, so that one bad
// element is reported without hiding how many there were.
type firstErr struct {
	err   error
	count int
}

func (f *firstErr) add(err error) {
	if f.err == nil {
		f.err = err
	}
	f.count++
}

func (f *firstErr) result(of int) error {
	if f.err == nil {
		return nil
	}
	if f.count == 1 {
		return f.err
	}
	return fmt.Errorf("%w (and %d more of %d)", f.err, f.count-1, of)
}
