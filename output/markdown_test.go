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

// A finding about calls has no objects; its evidence cell names the busiest callers the
// audit log gave, escaped like any text from a cluster, and counts the others exactly.
func TestMarkdownNamesTheCallersOfAFindingWithoutObjects(t *testing.T) {
	reporter := report.Caller{UserAgent: "reporter/1.0", User: "system:serviceaccount:ops:reporter", ServiceAccount: "ops/reporter", Verb: "list", Count: 3}
	alice := report.Caller{UserAgent: "kubectl/v1.30.2 | *x*", User: "alice", Verb: "get", Count: 1}
	anonymous := report.Caller{Verb: "get", Count: 2}
	cases := []struct {
		name    string
		callers []report.Caller
		omitted *report.CallersOmitted
		want    string
	}{
		{"one caller", []report.Caller{reporter}, nil,
			`reporter/1.0 \(service account ops/reporter\): 3 calls`},
		{"a user agent from the log is escaped", []report.Caller{alice}, nil,
			`kubectl/v1.30.2 \| \*x\* \(user alice\): 1 call`},
		{"past three, listed and omitted callers are counted", []report.Caller{reporter, alice, anonymous, reporter}, &report.CallersOmitted{Callers: 1, Calls: 9},
			`reporter/1.0 \(service account ops/reporter\): 3 calls, kubectl/v1.30.2 \| \*x\* \(user alice\): 1 call, no user agent \(no user\): 2 calls, and 2 more callers`},
		{"only omitted callers", nil, &report.CallersOmitted{Callers: 1, Calls: 4},
			`and 1 more caller`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := &report.Report{Source: "cluster", Targets: []report.TargetResult{{
				Target: "1.32", Verdict: report.VerdictBlocked, Score: 75, Blockers: 1,
				Findings: []report.Finding{{
					Key: "deprecated-api-in-use/core/v1/x", Category: "deprecated-api-in-use", Severity: report.SeverityBlocker,
					Target: "1.32", Title: "t", Remediation: "r", Callers: c.callers, CallersOmitted: c.omitted,
				}},
			}}}
			got := string(rendered(t, output.FormatMarkdown, r, output.Options{}))
			if want := "| " + c.want + " | r |"; !strings.Contains(got, want) {
				t.Errorf("markdown lacks %q:\n%s", want, got)
			}
		})
	}
}
