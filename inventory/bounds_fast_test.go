package inventory

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The fast bounds check agrees with prescan on documents within bounds and on each kind of
// document beyond them; FuzzParse holds it to never accepting what prescan refuses.
func TestTheFastBoundsCheckAgreesWithPrescan(t *testing.T) {
	root, err := schemaLimits()
	if err != nil {
		t.Fatal(err)
	}
	valid, err := json.Marshal(validDocument())
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]string{
		"a valid document":                  string(valid),
		"duplicate names, counted twice":    `{"schemaVersion": 1, "schemaVersion": 1}`,
		"invalid UTF-8 in a string":         "{\"source\": \"\xff\xfe\"}",
		"a lone surrogate escape":           `{"source": "\ud800"}`,
		"an unknown top-level property":     `{"junk": 1}`,
		"a string past its maxLength":       `{"source": "` + strings.Repeat("x", MaxStringLength+1) + `"}`,
		"a list past its maxItems":          `{"apiUsage": [` + strings.TrimSuffix(strings.Repeat("{},", MaxAPIUsage+1), ",") + `]}`,
		"more values than MaxValues":        `{"namespaces": [` + strings.TrimSuffix(strings.Repeat("1,", MaxValues+1), ",") + `]}`,
		"trailing data after the value":     `{} {}`,
		"a truncated document":              `{"apiUsage": [`,
		"a bare number at the top":          `1`,
		"a key past its maxLength":          `{"capabilities": {"` + strings.Repeat("k", MaxStringLength+1) + `": {}}}`,
		"nesting where the schema has none": `{"capabilities": {"x": {"skipped": [[[[]]]]}}}`,
	}
	paths, _ := filepath.Glob("../testdata/*/inventory.json")
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		cases[p] = string(data)
	}
	for name, doc := range cases {
		t.Run(name, func(t *testing.T) {
			fast, slow := withinBounds([]byte(doc), root), prescan([]byte(doc))
			if fast != (slow == nil) {
				t.Errorf("fast check %v, prescan %v: want the same verdict", fast, slow)
			}
		})
	}
}
