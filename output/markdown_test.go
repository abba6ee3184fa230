package output_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/output"
	"github.com/upgradescope/upgradescope/report"
)

// cellEnd is a pipe Markdown reads as a cell boundary: one no backslash escapes.
var cellEnd = regexp.MustCompile(`(^|[^\\])\|`)

func TestMarkdownMatchesItsGoldens(t *testing.T) {
	goldenPerScenario(t, output.FormatMarkdown, output.Options{})
}

// Titles, names and reasons come from manifests and clusters: none of them may end a table
// cell, open a link or an image, or reach the page as HTML.
func TestMarkdownEscapesWhatManifestsWrite(t *testing.T) {
	hostile := "a | b [x](https://evil.example) ![i](https://evil.example/i.png) <script>alert(1)</script> `code` *bold*\nnext" +
		" https://bare.example www.bare.example ping @someone mail a@b.example issue #12"
	r := &report.Report{Source: "files", Targets: []report.TargetResult{{
		Target: "1.37", Verdict: report.VerdictBlocked, Score: 75, Blockers: 1,
		Findings: []report.Finding{{
			Key: "removed-api/x", Category: "removed-api", Severity: report.SeverityBlocker, Target: "1.37",
			Title: hostile, Remediation: hostile, Citations: []string{"https://kubernetes.io/docs/x\r**bold** [y](https://evil.example"},
			Objects: []inventory.ObjectRef{{Namespace: "ns`|", Name: hostile, File: "f.yaml", Line: 3}},
		}},
		NotAssessed: []report.Gap{{Capability: "helm|`", Reason: hostile}},
	}}}
	got := string(rendered(t, output.FormatMarkdown, r, output.Options{}))
	for _, bad := range []string{"](https://evil", "<script>", "<img", "\nnext", " | b ", "https://bare", "www.bare", "@someone", "a@b.example", " #12", "\r", "(source)"} {
		if strings.Contains(got, bad) {
			t.Errorf("markdown holds %q unescaped:\n%s", bad, got)
		}
	}
	for _, line := range strings.Split(got, "\n") {
		if strings.HasPrefix(line, "| blocker") && len(cellEnd.FindAllStringIndex(line, -1)) != 5 {
			t.Errorf("a finding row does not have four cells: %s", line)
		}
	}
}
