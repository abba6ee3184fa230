package main

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"
)

// The chart's templates start with "{{- if": they are unrendered templates, skipped with a
// warning, not JSON that failed to decode and made the verdict unknown.
func TestScanOfTheUnrenderedChartSkipsTemplatesWithoutAnUnknownVerdict(t *testing.T) {
	r := runCLI(t, "scan", "--files", "../../deploy/chart/upgradescope", "--target", "1.37", "-o", "json", "--fail-on", "never", pinned)
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	var rep struct {
		Targets []struct {
			Verdict     string `json:"verdict"`
			NotAssessed []struct {
				Capability string `json:"capability"`
				Reason     string `json:"reason"`
			} `json:"notAssessed"`
		} `json:"targets"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if v := rep.Targets[0].Verdict; v == "unknown" {
		t.Errorf("verdict unknown: %+v", rep.Targets[0].NotAssessed)
	}
	if !strings.Contains(r.stderr, "templates/bundle-key.yaml:1: unrendered template skipped") || strings.Contains(r.stderr, "invalid JSON") {
		t.Errorf("stderr:\n%s\nwant bundle-key.yaml skipped as an unrendered template", r.stderr)
	}
}

// make build stamps the version and commit (buildBinary builds through it); an unstamped
// build, as go run and these tests are, says dev.
func TestMakeBuildStampsTheVersionAndCommit(t *testing.T) {
	buildBinary(t)
	out, err := exec.Command(agentBin, "version", "-o", "json").Output()
	if err != nil {
		t.Fatalf("version: %v", err)
	}
	var v versionInfo
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatal(err)
	}
	if v.Version != builtVersion || v.Commit != builtCommit {
		t.Errorf("version %q commit %q; want %q and %q", v.Version, v.Commit, builtVersion, builtCommit)
	}
	if r := runCLI(t, "version"); !strings.HasPrefix(r.stdout, "upgradescope dev\ncommit:     ") {
		t.Errorf("an unstamped build says:\n%s", r.stdout)
	}
}
