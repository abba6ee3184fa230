package output_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/upgradescope/upgradescope/output"
	"github.com/upgradescope/upgradescope/report"
)

func TestSARIFMatchesItsGoldens(t *testing.T) {
	goldenPerScenario(t, output.FormatSARIF, output.Options{})
}

type sarifLog struct {
	Version string `json:"version"`
	Runs    []struct {
		Tool struct {
			Driver struct {
				Rules []struct{ ID string } `json:"rules"`
			} `json:"driver"`
		} `json:"tool"`
		OriginalURIBaseIDs map[string]struct{ URI string } `json:"originalUriBaseIds"`
		Results            []struct {
			RuleID    string `json:"ruleId"`
			Level     string `json:"level"`
			Locations []struct {
				PhysicalLocation struct {
					ArtifactLocation struct {
						URI       string `json:"uri"`
						URIBaseID string `json:"uriBaseId"`
					} `json:"artifactLocation"`
					Region struct{ StartLine int } `json:"region"`
				} `json:"physicalLocation"`
			} `json:"locations"`
			Suppressions []struct{ Kind, Justification string } `json:"suppressions"`
		} `json:"results"`
	} `json:"runs"`
}

func sarifOf(t *testing.T, r *report.Report, opts output.Options) sarifLog {
	t.Helper()
	var log sarifLog
	if err := json.Unmarshal(rendered(t, output.FormatSARIF, r, opts), &log); err != nil {
		t.Fatal(err)
	}
	return log
}

func TestSARIFHasOneRulePerKeyAndFileLocations(t *testing.T) {
	log := sarifOf(t, judged(t, "suppressions"), output.Options{})
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

func TestSARIFLocationsAreRelativeToTheRepositoryRoot(t *testing.T) {
	root := t.TempDir()
	scanned := filepath.Join(root, "deploy", "rendered")
	if err := os.MkdirAll(scanned, 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, filesBase, base string
		wantURI, wantBaseID   string
	}{
		{"an absolute scan under the root", scanned, root, "deploy/rendered/ingress.yaml", "%SRCROOT%"},
		{"the root itself", root, root, "ingress.yaml", "%SRCROOT%"},
		{"an absolute scan outside the root is a file URI", scanned, filepath.Join(root, "elsewhere"),
			"file://" + filepath.ToSlash(scanned) + "/ingress.yaml", ""},
		{"a relative scan without a root keeps its path", "deploy/rendered", "", "deploy/rendered/ingress.yaml", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := judged(t, "suppressions")
			r.FilesBase = tt.filesBase
			run := sarifOf(t, r, output.Options{SARIFBase: tt.base}).Runs[0]
			got := run.Results[0].Locations[0].PhysicalLocation.ArtifactLocation
			if got.URI != tt.wantURI || got.URIBaseID != tt.wantBaseID {
				t.Errorf("artifact = %+v, want uri %q base %q", got, tt.wantURI, tt.wantBaseID)
			}
			if tt.wantBaseID != "" && run.OriginalURIBaseIDs["%SRCROOT%"].URI != "file://"+filepath.ToSlash(root)+"/" {
				t.Errorf("originalUriBaseIds = %+v, want %%SRCROOT%% at %s", run.OriginalURIBaseIDs, root)
			}
		})
	}
}
