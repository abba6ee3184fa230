package inventory

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParse feeds arbitrary bytes to the inventory decoder, as eval --inventory and the fleet
// server's ingest do. It must never panic; a refusal names a line or JSON pointers; what it
// accepts it writes back as a document it accepts again, so a stored inventory always
// reads; and the fast paths (withinBounds, acceptFast, the json/v2 decode) never change
// a verdict, an error's wording or a decoded Document (checkSlowPathAgreement).
func FuzzParse(f *testing.F) {
	seeds, _ := filepath.Glob("../testdata/*/inventory.json")
	for _, p := range seeds {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	for _, d := range []*Document{validDocument(), fullDocument()} {
		if data, err := json.Marshal(d); err == nil {
			f.Add(data)
		}
	}
	for _, seed := range []string{
		`{"schemaVersion": 1, "junk": [1, 2, 3]}`,
		`{"schemaVersion": 1, "apiUsage": [{"namespaces": {"a": 1}}, {}]}`,
		`{"capabilities": {"": {"available": true, "skipped": ["a", 1]}}}`,
		`[[[[[[[[[[]]]]]]]]]]`,
		`{"a": "\ud800"} trailing`,
		"{\n\"a\": [1,\n",
		`{"schemaVersion": 1.0, "source": "files", "collectedAt": "2026-11-29T12:00:00Z", "capabilities": {}, "apiUsage": []}`,
		`{"schemaVersion": 1, "source": "files", "collectedAt": "2026-11-29T12:00:00+01:00", "capabilities": {}, "apiUsage": [], "workloadImagesOmitted": -0}`,
		`{"schemaVersion": 1, "source": "files", "source": "cluster", "collectedAt": "2026-11-29T12:00:00Z", "capabilities": {}, "apiUsage": []}`,
		`{"schemaVersion": 1, "source": "files", "collectedAt": "2026-11-29T12:00:00\u005a", "capabilities": {}, "apiUsage": []}`,
		`{"schemaVersion": 1, "\u0073ource": "files", "collectedAt": "2026-11-29T12:00:00Z", "capabilities": {"api-usage": {"available": true}}, "apiUsage": []}`,
		`{"schemaVersion": 1, "source": "files", "collectedAt": "2026-11-29T12:00:00Z", "capabilities": {}, "apiUsage": [], "\u0061piUsage": []}`,
		`{"schemaVersion": 1, "source": "files", "collectedAt": "2026-11-29T12:00:00Z", "capabilities": {"api-usage": {"available": true, "available": false}}, "apiUsage": []}`,
		`{"schemaVersion": 1, "source": "files", "collectedAt": "2026-11-29T12:00:00Z", "capabilities": {}, "apiUsage": [{"group": "", "version": "v1", "kind": "Pod", "count": 1, "namespaces": {"w\u0065b": 1, "web": 2}}]}`,
		"{\"schemaVersion\": 1, \"source\": \"files\", \"collectedAt\": \"2026-11-29T12:00:00Z\", \"capabilities\": {}, \"apiUsage\": [{\"group\": \"\", \"version\": \"v1\", \"kind\": \"Pod\", \"count\": 1, \"namespaces\": {\"a\xff\": 1, \"a\xfe\": 2}}]}",
		`{"schemaVersion": 1, "source": "files", "collectedAt": "2026-11-29T12:00:00Z", "capabilities": {}, "apiUsage": [{"group": "", "version": "v1", "kind": "Pod", "count": 1, "namespaces": {"\ud800": 1, "\udfff": 2}}]}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkFastPath(t, data)
		checkSlowPathAgreement(t, data)
		doc, err := Parse(data)
		if err != nil {
			checkRefusal(t, err)
			return
		}
		if name, ok := duplicateName(data); ok {
			t.Fatalf("Parse accepts a document naming %q twice in one object", name)
		}
		again, err := json.Marshal(doc)
		if err != nil {
			t.Fatalf("an accepted document does not marshal: %v", err)
		}
		if _, err := Parse(again); err != nil {
			t.Fatalf("an accepted document, written back, is refused: %v\n%s", err, again)
		}
	})
}

// checkFastPath fails when the fast bounds check accepts a document prescan refuses: the
// fast path may only skip prescan's work, never its verdict.
func checkFastPath(t *testing.T, data []byte) {
	t.Helper()
	root, err := schemaLimits()
	if err != nil {
		t.Fatal(err)
	}
	if withinBounds(data, root) {
		if err := prescan(data); err != nil {
			t.Fatalf("the fast bounds check accepts what prescan refuses: %v", err)
		}
	}
}

// checkRefusal fails unless err tells the user where the document is wrong.
func checkRefusal(t *testing.T, err error) {
	t.Helper()
	var se *SchemaError
	if errors.As(err, &se) {
		if len(se.Problems) == 0 {
			t.Errorf("a SchemaError without problems")
		}
		for _, p := range se.Problems {
			if !strings.HasPrefix(p, "/") {
				t.Errorf("schema problem %q names no JSON pointer", p)
			}
		}
		return
	}
	if !strings.HasPrefix(err.Error(), "line ") && !strings.Contains(err.Error(), "EOF") {
		t.Errorf("refusal %q names neither a line nor a JSON pointer", err)
	}
}

// duplicateName is the reference the duplicate check is held to: the first name an object
// holds twice as encoding/json decodes names (escapes resolved, invalid bytes and lone
// surrogates as U+FFFD), the decoder eval used to read with.
func duplicateName(data []byte) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var value func() (string, bool)
	value = func() (string, bool) {
		tok, err := dec.Token()
		if err != nil {
			return "", false
		}
		switch tok {
		case json.Delim('{'):
			seen := map[string]bool{}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return "", false
				}
				name, _ := k.(string)
				if seen[name] {
					return name, true
				}
				seen[name] = true
				if name, ok := value(); ok {
					return name, true
				}
			}
		case json.Delim('['):
			for dec.More() {
				if name, ok := value(); ok {
					return name, true
				}
			}
		}
		return "", false
	}
	return value()
}
