package client_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/upgradescope/upgradescope/bundles/rollout/outcome"
	"github.com/upgradescope/upgradescope/fleet/client"
	"github.com/upgradescope/upgradescope/internal/testenv/bundletest"
)

// candidate is testdata/dry-run/candidate built as a bundle tarball signed with
// privateKey ("": unsigned).
func candidate(t *testing.T, privateKey string) []byte {
	t.Helper()
	return bundletest.Build(t, filepath.Join(root, "testdata", "dry-run", "candidate"), "2026-11-30.1", privateKey)
}

// At the test server's clock the candidate's rule turns clean-is-ready blocked at 1.37 and
// changes nothing on teams (fleet/server's dry-run golden says why).
func TestDryRunReadsTheServersStreamToItsSummary(t *testing.T) {
	fs := startFleet(t, "teams", "clean-is-ready")
	var progressed []string
	results, summary, err := connect(t, fs.url, readToken).DryRun(t.Context(), candidate(t, fs.privateKey), 0,
		func(r outcome.Result) { progressed = append(progressed, r.Cluster) })
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 2 || results[0].Cluster != "clean-is-ready" || results[1].Cluster != "teams" {
		t.Errorf("results %+v: want clean-is-ready and teams, by name", results)
	}
	if len(progressed) != 2 {
		t.Errorf("progress saw %v, want each cluster once", progressed)
	}
	if summary.Clusters != 2 || strings.Join(summary.TurnedBlocked, ",") != "clean-is-ready" || summary.Fails(outcome.FailOnBlocked) == "" {
		t.Errorf("summary %+v: want clean-is-ready turned blocked, failing at blocked", summary)
	}
}

func TestDryRunAnswersARefusalAsAnError(t *testing.T) {
	fs := startFleet(t, "teams")
	for _, tt := range []struct {
		name, token string
		candidate   func(t *testing.T) []byte
		says        string
	}{
		{name: "an unsigned candidate", token: readToken, candidate: func(t *testing.T) []byte { return candidate(t, "") },
			says: "POST " + fs.url + "/api/v1/bundles/dry-run: "},
		{name: "no token", candidate: func(t *testing.T) []byte { return candidate(t, fs.privateKey) },
			says: "401 Unauthorized"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := connect(t, fs.url, tt.token).DryRun(t.Context(), tt.candidate(t), 0, nil)
			var e *client.Error
			if !errors.As(err, &e) || !strings.Contains(err.Error(), tt.says) {
				t.Errorf("err = %v, want an *Error saying %q", err, tt.says)
			}
		})
	}
}

// What was not judged is never passed: a stream cut before its summary is an error.
func TestDryRunCutShortIsAnError(t *testing.T) {
	const line = `{"cluster":"prod","targets":[]}` + "\n"
	for _, tt := range []struct {
		name   string
		answer fault
		says   string
	}{
		{name: "an answer that ends before its summary", answer: fault{status: 200, body: line + line},
			says: "the answer ended after 2 clusters without its summary"},
		{name: "a dropped connection", answer: fault{drop: true}, says: "POST "},
	} {
		t.Run(tt.name, func(t *testing.T) {
			url, _ := faultServer(t, tt.answer)
			_, _, err := connect(t, url, readToken).DryRun(t.Context(), []byte("candidate"), 0, nil)
			if err == nil || !strings.Contains(err.Error(), tt.says) {
				t.Errorf("err = %v, want one saying %q", err, tt.says)
			}
		})
	}
}
