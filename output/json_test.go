package output_test

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/upgradescope/upgradescope/output"
)

func TestJSONMatchesItsGoldens(t *testing.T) {
	goldenPerScenario(t, output.FormatJSON, output.Options{})
}

func TestJSONReportsValidateAgainstThePublishedSchema(t *testing.T) {
	c := jsonschema.NewCompiler()
	sch, err := c.Compile("../docs/report.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	dirs, _ := filepath.Glob("../testdata/*/args.json")
	for _, a := range dirs {
		scenario := filepath.Base(filepath.Dir(a))
		v, err := jsonschema.UnmarshalJSON(bytes.NewReader(rendered(t, output.FormatJSON, judged(t, scenario), output.Options{})))
		if err != nil {
			t.Fatal(err)
		}
		if err := sch.Validate(v); err != nil {
			t.Errorf("%s: report does not match docs/report.schema.json: %v", scenario, err)
		}
	}
}
