package output_test

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/output"
)

var update = flag.Bool("update", false, "rewrite golden files; read them before committing")

// report judges the suppressions scenario: blockers, a suppressed finding, an expired rule
// and an optional gap exercise every section of every format.
func report(t *testing.T, dir string) *engine.Report {
	t.Helper()
	inv, err := inventory.ReadFile(filepath.Join("..", "testdata", dir, "inventory.json"))
	if err != nil {
		t.Fatal(err)
	}
	var args struct {
		Targets []string            `json:"targets"`
		Ignore  []engine.IgnoreRule `json:"ignore"`
	}
	raw, _ := os.ReadFile(filepath.Join("..", "testdata", dir, "args.json"))
	if err := json.Unmarshal(raw, &args); err != nil {
		t.Fatal(err)
	}
	eng, err := engine.New(context.Background(), engine.WithToolVersion("test"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := eng.Evaluate(context.Background(), inv, args.Targets, time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC), engine.WithIgnore(args.Ignore))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestEveryFormatMatchesItsGolden(t *testing.T) {
	for _, scenario := range []string{"suppressions", "partial-api-usage-is-unknown", "multi-target"} {
		r := report(t, scenario)
		for _, format := range []string{output.FormatTable, output.FormatJSON, output.FormatSARIF, output.FormatJUnit} {
			t.Run(scenario+"/"+format, func(t *testing.T) {
				var buf bytes.Buffer
				if err := output.Render(&buf, format, r, output.Options{FailOn: engine.FailOnBlocker}); err != nil {
					t.Fatal(err)
				}
				golden := filepath.Join("testdata", scenario+"."+format)
				if *update {
					if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(buf.Bytes(), want) {
					t.Errorf("%s differs from %s:\n%s", format, golden, buf.String())
				}
			})
		}
	}
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
		var buf bytes.Buffer
		if err := output.JSON(&buf, report(t, scenario)); err != nil {
			t.Fatal(err)
		}
		v, err := jsonschema.UnmarshalJSON(&buf)
		if err != nil {
			t.Fatal(err)
		}
		if err := sch.Validate(v); err != nil {
			t.Errorf("%s: report does not match docs/report.schema.json: %v", scenario, err)
		}
	}
}

func TestSARIFHasOneRulePerKeyAndFileLocations(t *testing.T) {
	var buf bytes.Buffer
	if err := output.SARIF(&buf, report(t, "suppressions")); err != nil {
		t.Fatal(err)
	}
	var log struct {
		Version string `json:"version"`
		Runs    []struct {
			Tool struct {
				Driver struct {
					Rules []struct{ ID string } `json:"rules"`
				} `json:"driver"`
			} `json:"tool"`
			Results []struct {
				RuleID    string `json:"ruleId"`
				Level     string `json:"level"`
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct{ URI string }    `json:"artifactLocation"`
						Region           struct{ StartLine int } `json:"region"`
					} `json:"physicalLocation"`
				} `json:"locations"`
				Suppressions []struct{ Kind, Justification string } `json:"suppressions"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(buf.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	run := log.Runs[0]
	if log.Version != "2.1.0" || len(run.Tool.Driver.Rules) != 3 || len(run.Results) != 3 {
		t.Fatalf("version %s, %d rules, %d results; want 2.1.0, 3, 3", log.Version, len(run.Tool.Driver.Rules), len(run.Results))
	}
	first := run.Results[0]
	if first.RuleID != "removed-api/extensions/v1beta1/Ingress" || first.Level != "error" {
		t.Errorf("first result %s %s", first.RuleID, first.Level)
	}
	if loc := first.Locations[0].PhysicalLocation; loc.ArtifactLocation.URI != "ingress.yaml" || loc.Region.StartLine != 1 {
		t.Errorf("location = %+v, want ingress.yaml:1", loc)
	}
	if s := run.Results[2].Suppressions; len(s) != 1 || s[0].Kind != "external" {
		t.Errorf("suppressed result carries %+v, want one external suppression", s)
	}
}

func TestJUnitFailsGatedFindingsAndErrorsOnRequiredGaps(t *testing.T) {
	var buf bytes.Buffer
	if err := output.JUnit(&buf, report(t, "partial-api-usage-is-unknown"), engine.FailOnBlocker); err != nil {
		t.Fatal(err)
	}
	var suites struct {
		Tests  int `xml:"tests,attr"`
		Errors int `xml:"errors,attr"`
	}
	if err := xml.Unmarshal(buf.Bytes(), &suites); err != nil {
		t.Fatal(err)
	}
	if suites.Tests != 1 || suites.Errors != 1 {
		t.Errorf("tests %d errors %d, want the api-usage gap as one error", suites.Tests, suites.Errors)
	}
	buf.Reset()
	_ = output.JUnit(&buf, report(t, "multi-target"), engine.FailOnWarning)
	if got := strings.Count(buf.String(), "<failure"); got != 2 {
		t.Errorf("--fail-on warning: %d failures, want the 1.21 warning and the 1.22 blocker", got)
	}
}

func TestTableIsPlainText(t *testing.T) {
	var buf bytes.Buffer
	if err := output.Table(&buf, report(t, "suppressions")); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "\x1b[") {
		t.Error("table output contains ANSI escapes")
	}
}
