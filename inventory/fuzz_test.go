package inventory

import (
	"encoding/json"
	"errors"
	"testing"
)

// FuzzParse feeds arbitrary bytes to the inventory decoder: it must never panic, a refusal is
// a syntax error naming a line or a SchemaError naming JSON pointers, and a document it
// accepts is written back as one it accepts again.
func FuzzParse(f *testing.F) {
	valid, err := json.Marshal(validDocument())
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range []string{
		string(valid),
		`{"schemaVersion": 1, "junk": [1, 2, 3]}`,
		`{"schemaVersion": 1, "apiUsage": [{"namespaces": {"a": 1}}, {}]}`,
		`{"capabilities": {"": {"available": true, "skipped": ["a", 1]}}}`,
		`[[[[[[[[[[]]]]]]]]]]`,
		`{"a": "\ud800"} trailing`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := Parse(data)
		if err != nil {
			if se, ok := errors.AsType[*SchemaError](err); ok && len(se.Problems) == 0 {
				t.Fatalf("a SchemaError without problems for %q", data)
			}
			return
		}
		again, err := json.Marshal(d)
		if err != nil {
			t.Fatalf("marshal an accepted document: %v", err)
		}
		if err := Validate(again); err != nil {
			t.Fatalf("accepted %q, refused it written back %q: %v", data, again, err)
		}
	})
}
