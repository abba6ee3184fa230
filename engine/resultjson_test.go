package engine

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
)

func TestResultJSONReadsBackAsTheTermItWasWrittenFrom(t *testing.T) {
	for _, s := range []string{"plain", `a "quoted" \ path`, "tab\there", "ünïcødé ✓", "<script>&", "nul\x00", ""} {
		term := ast.MustParseTerm(`{"s": ` + mustJSON(t, s) + `, "n": 3, "a": [true, null, 1.5], "set": {"b", "a"}}`)
		var buf bytes.Buffer
		if err := writeJSON(&buf, term.Value); err != nil {
			t.Fatal(err)
		}
		var got struct {
			S   string `json:"s"`
			N   int    `json:"n"`
			A   []any  `json:"a"`
			Set []string
		}
		if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
			t.Fatalf("%q: %v in %s", s, err, buf.Bytes())
		}
		if got.S != s || got.N != 3 || len(got.A) != 3 || len(got.Set) != 2 || got.Set[0] != "a" {
			t.Errorf("%q read back as %+v from %s", s, got, buf.Bytes())
		}
	}
}

func mustJSON(t *testing.T, s string) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
