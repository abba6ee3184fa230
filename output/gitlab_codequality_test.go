package output_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/upgradescope/upgradescope/output"
	"github.com/upgradescope/upgradescope/report"
)

func TestGitLabCodeQualityMatchesItsGoldens(t *testing.T) {
	goldenPerScenario(t, output.FormatGitLab, output.Options{})
}

type gitlabIssue struct {
	Description string `json:"description"`
	CheckName   string `json:"check_name"`
	Fingerprint string `json:"fingerprint"`
	Severity    string `json:"severity"`
	Location    struct {
		Path  string `json:"path"`
		Lines struct {
			Begin int `json:"begin"`
		} `json:"lines"`
	} `json:"location"`
}

func gitlabOf(t *testing.T, r *report.Report, opts output.Options) []gitlabIssue {
	t.Helper()
	var issues []gitlabIssue
	if err := json.Unmarshal(rendered(t, output.FormatGitLab, r, opts), &issues); err != nil {
		t.Fatal(err)
	}
	return issues
}

var sha256Hex = regexp.MustCompile(`^[0-9a-f]{64}$`)

// TestGitLabCodeQualityIssuesCarryWhatGitLabRequires: every issue has the fields GitLab's
// format requires, a severity of its scale and a fingerprint unique in the report.
func TestGitLabCodeQualityIssuesCarryWhatGitLabRequires(t *testing.T) {
	scale := map[string]bool{"info": true, "minor": true, "major": true, "critical": true, "blocker": true}
	for _, scenario := range goldenScenarios {
		issues := gitlabOf(t, judged(t, scenario), output.Options{})
		if len(issues) == 0 {
			t.Errorf("%s: no issue; every golden scenario has a finding or a required gap", scenario)
		}
		seen := map[string]bool{}
		for _, i := range issues {
			if i.Description == "" || i.CheckName == "" || i.Location.Path == "" || i.Location.Lines.Begin < 1 || !scale[i.Severity] {
				t.Errorf("%s: incomplete issue %+v", scenario, i)
			}
			if !sha256Hex.MatchString(i.Fingerprint) || seen[i.Fingerprint] {
				t.Errorf("%s: fingerprint %q not a sha256 or not unique", scenario, i.Fingerprint)
			}
			seen[i.Fingerprint] = true
		}
	}
}

func TestGitLabCodeQualityMapsSeveritiesAndLeavesSuppressedOut(t *testing.T) {
	r := judged(t, "suppressions")
	issues := gitlabOf(t, r, output.Options{})
	want := map[string]string{}
	for _, f := range r.Targets[0].Findings {
		want[f.Key] = map[string]string{report.SeverityBlocker: "critical", report.SeverityWarning: "major", report.SeverityInfo: "info"}[f.Severity]
	}
	for _, f := range r.Targets[0].Suppressed {
		for _, i := range issues {
			if i.CheckName == f.Key {
				t.Errorf("suppressed finding %s is an issue", f.Key)
			}
		}
	}
	for _, i := range issues {
		if want[i.CheckName] != i.Severity {
			t.Errorf("%s: severity %q, want %q", i.CheckName, i.Severity, want[i.CheckName])
		}
	}
	if len(want) == 0 {
		t.Fatal("the scenario has no unsuppressed finding: the test checks nothing")
	}
}

func TestGitLabCodeQualityPlacesIssuesOnRepositoryPaths(t *testing.T) {
	root := t.TempDir()
	scanned := filepath.Join(root, "deploy", "rendered")
	if err := os.MkdirAll(scanned, 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, filesBase, base string
		wantPath, wantAnchor  string
	}{
		{"under the root", scanned, root, "deploy/rendered/ingress.yaml", "deploy/rendered"},
		{"a relative scan without a root", "./deploy/rendered", "", "deploy/rendered/ingress.yaml", "deploy/rendered"},
		{"no scanned path", "", "", "ingress.yaml", ".upgradescope.yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := judged(t, "suppressions")
			r.FilesBase = tt.filesBase
			r.Targets[0].Findings[0].Objects[0].Line = 7
			r.Targets[0].Findings = append(r.Targets[0].Findings, report.Finding{
				Key: "addon-eol/example", Severity: report.SeverityWarning, Target: "1.37", Title: "an add-on without a file",
			})
			issues := gitlabOf(t, r, output.Options{SARIFBase: tt.base})
			first, last := issues[0], issues[len(issues)-1]
			if first.Location.Path != tt.wantPath || first.Location.Lines.Begin != 7 {
				t.Errorf("first issue at %s:%d, want %s:7", first.Location.Path, first.Location.Lines.Begin, tt.wantPath)
			}
			if last.CheckName != "addon-eol/example" || last.Location.Path != tt.wantAnchor || last.Location.Lines.Begin != 1 {
				t.Errorf("file-less issue %s at %s:%d, want %s:1", last.CheckName, last.Location.Path, last.Location.Lines.Begin, tt.wantAnchor)
			}
		})
	}
}

// TestGitLabCodeQualityFingerprintsAreStableAndPerTarget: the same report renders the same
// fingerprints (GitLab compares them across pipelines); the same key at two targets differs.
func TestGitLabCodeQualityFingerprintsAreStableAndPerTarget(t *testing.T) {
	a := gitlabOf(t, judged(t, "multi-target"), output.Options{})
	b := gitlabOf(t, judged(t, "multi-target"), output.Options{})
	if len(a) != len(b) {
		t.Fatalf("%d issues, then %d", len(a), len(b))
	}
	byKey := map[string][]string{}
	for i := range a {
		if a[i].Fingerprint != b[i].Fingerprint {
			t.Errorf("issue %d: fingerprint %s, then %s", i, a[i].Fingerprint, b[i].Fingerprint)
		}
		byKey[a[i].CheckName+" "+a[i].Location.Path] = append(byKey[a[i].CheckName+" "+a[i].Location.Path], a[i].Fingerprint)
	}
	repeated := false
	for k, fps := range byKey {
		if len(fps) > 1 {
			repeated = true
			if fps[0] == fps[1] {
				t.Errorf("%s: one fingerprint for two targets", k)
			}
		}
	}
	if !repeated {
		t.Error("multi-target has no key at two targets: the test checks nothing")
	}
}

func TestGitLabCodeQualityMakesARequiredGapCritical(t *testing.T) {
	issues := gitlabOf(t, judged(t, "partial-api-usage-is-unknown"), output.Options{})
	if len(issues) != 1 || issues[0].CheckName != "not-assessed/api-usage" || issues[0].Severity != "critical" {
		t.Errorf("issues = %+v, want the api-usage gap as one critical issue", issues)
	}
}
