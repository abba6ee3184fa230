package output_test

import (
	"encoding/xml"
	"strings"
	"testing"

	"github.com/upgradescope/upgradescope/output"
	"github.com/upgradescope/upgradescope/report"
)

func TestJUnitMatchesItsGoldens(t *testing.T) {
	goldenPerScenario(t, output.FormatJUnit, output.Options{FailOn: report.FailOnBlocker})
}

func TestJUnitFailsGatedFindingsAndErrorsOnRequiredGaps(t *testing.T) {
	out := rendered(t, output.FormatJUnit, judged(t, "partial-api-usage-is-unknown"), output.Options{FailOn: report.FailOnBlocker})
	var suites struct {
		Tests  int `xml:"tests,attr"`
		Errors int `xml:"errors,attr"`
	}
	if err := xml.Unmarshal(out, &suites); err != nil {
		t.Fatal(err)
	}
	if suites.Tests != 1 || suites.Errors != 1 {
		t.Errorf("tests %d errors %d, want the api-usage gap as one error", suites.Tests, suites.Errors)
	}
	out = rendered(t, output.FormatJUnit, judged(t, "multi-target"), output.Options{FailOn: report.FailOnWarning})
	if got := strings.Count(string(out), "<failure"); got != 2 {
		t.Errorf("failing on warnings: %d failures, want the 1.21 warning and the 1.22 blocker", got)
	}
}
