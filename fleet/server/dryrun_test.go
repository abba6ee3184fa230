package server_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/bundles"
	"github.com/upgradescope/upgradescope/bundles/rollout/outcome"
	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/fleet/server"
	"github.com/upgradescope/upgradescope/fleet/server/store"
	"github.com/upgradescope/upgradescope/internal/testenv/bundletest"
	"github.com/upgradescope/upgradescope/internal/testenv/pgtest"
	"github.com/upgradescope/upgradescope/internal/testenv/probetest"
)

var update = flag.Bool("update", false, "rewrite golden files; read them before committing")

const (
	dryRunPath   = "/api/v1/bundles/dry-run"
	dryRunRead   = "fleet-read-token"
	dryRunIngest = "shared-ingest-token"
)

// dryRunKeys are a signing key pair for candidates, made once per test.
type dryRunKeys struct{ private, public string }

func newDryRunKeys(t *testing.T) dryRunKeys {
	t.Helper()
	priv, pub := bundletest.Keys(t, t.TempDir())
	return dryRunKeys{priv, pub}
}

// signedPack builds testdata/dry-run/<pack> into a bundle tarball, signed with keys
// (empty private key: unsigned).
func signedPack(t *testing.T, pack, privateFile string) []byte {
	t.Helper()
	return bundletest.Build(t, filepath.Join("..", "..", "testdata", "dry-run", pack), "2026-11-30.1", privateFile)
}

// tampered is a signed bundle with a comment added to its Rego after signing.
func tampered(t *testing.T, signed []byte) []byte {
	t.Helper()
	return bundletest.Edit(t, signed, func(name string, data []byte) []byte {
		if strings.HasSuffix(name, ".rego") {
			return append(data, "\n# changed after signing\n"...)
		}
		return data
	})
}

// withDryRun turns dry runs on as serve does: candidates verified with keys' public key,
// and the candidate engine the built-in bundles with the candidate beside them.
func withDryRun(keys dryRunKeys) func(*server.Config) {
	return func(cfg *server.Config) {
		vc, err := bundles.VerificationFromFile(keys.public, "RS256")
		if err != nil {
			panic(err)
		}
		cfg.Verification = vc
		cfg.WithCandidate = func(ctx context.Context, c *bundles.Fetched) (*engine.Engine, error) {
			return engine.New(ctx, engine.WithToolVersion("test"), engine.WithBundle(c.Source, c.Bundle, c.Signature))
		}
		cfg.ReadToken, cfg.IngestToken, cfg.Targets = dryRunRead, dryRunIngest, []string{"1.37"}
	}
}

// pushScenarios pushes golden scenarios through the real ingest, one cluster each named as the
// scenario, their probes observed as finding nothing.
func pushScenarios(t *testing.T, ts *testServer, scenarios ...string) {
	t.Helper()
	eng, err := sharedEngine()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range scenarios {
		doc := probetest.Scenario(t, "../..", s, eng.Observe().Probes)
		if res := ts.push(dryRunIngest, envelope(t, s, doc)); res.status != http.StatusAccepted {
			t.Fatalf("push %s: %d %s", s, res.status, res.body)
		}
	}
}

// dryRunAnswer is a streamed dry run read back: the cluster lines, sorted by cluster (the
// stream has them in the order they finished), and the summary line, which must be last.
type dryRunAnswer struct {
	Results []outcome.Result `json:"results"`
	Summary outcome.Summary  `json:"summary"`
}

func parseDryRun(t *testing.T, body []byte) dryRunAnswer {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(string(body), "\n"), "\n")
	var out dryRunAnswer
	for i, line := range lines {
		if i == len(lines)-1 {
			var last struct {
				Summary *outcome.Summary `json:"summary"`
			}
			if err := json.Unmarshal([]byte(line), &last); err != nil || last.Summary == nil {
				t.Fatalf("the last line is not the summary: %v: %s", err, line)
			}
			out.Summary = *last.Summary
			continue
		}
		var res outcome.Result
		if err := json.Unmarshal([]byte(line), &res); err != nil || res.Cluster == "" {
			t.Fatalf("line %d is not a cluster's result: %v: %s", i+1, err, line)
		}
		out.Results = append(out.Results, res)
	}
	slices.SortFunc(out.Results, func(a, b outcome.Result) int { return strings.Compare(a.Cluster, b.Cluster) })
	return out
}

// The golden file is checked by hand against the scenarios, judged at the test server's
// clock (2026-11-30 12:00 UTC) with --targets 1.37:
//   - teams (v1.32, an Ingress at extensions/v1beta1 and a PodSecurityPolicy): judged at 1.33
//     and 1.37, blocked 50 with 2 blockers before and after at both; the candidate's rule
//     matches networking.k8s.io Ingresses only, so nothing new.
//   - addon-eol-approaching (v1.32, AKS app-routing NGINX): the kb's EOL for it is
//     2026-11-30, passed at this clock, so blocked 75 with 1 blocker at 1.33 and 1.37 on both
//     sides (testdata/dry-run/expected.table, pinned a day earlier, shows it ready 95).
//   - clean-is-ready (no server version, an Ingress at networking.k8s.io/v1): judged at 1.37
//     only, ready 100 before, blocked 75 after with fleet-gateway/ingress new, as in
//     expected.table.
//   - summary: clean-is-ready turned blocked and changed, nothing else.
func TestADryRunComparesEveryStoredClusterWithTheCandidateAndStoresNothing(t *testing.T) {
	for _, backend := range []struct {
		name  string
		start func(t *testing.T, edit func(*server.Config)) *testServer
	}{
		{"sqlite", newServer},
		{"postgres", func(t *testing.T, edit func(*server.Config)) *testServer {
			st, err := store.OpenPostgres(t.Context(), pgtest.URL(t))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { st.Close() })
			return newServerOn(t, st, edit)
		}},
	} {
		t.Run(backend.name, func(t *testing.T) { dryRunMatchesTheGolden(t, backend.start) })
	}
}

func dryRunMatchesTheGolden(t *testing.T, start func(t *testing.T, edit func(*server.Config)) *testServer) {
	keys := newDryRunKeys(t)
	ts := start(t, withDryRun(keys))
	pushScenarios(t, ts, "teams", "clean-is-ready", "addon-eol-approaching")
	before, err := ts.store.FleetVersion(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	res := ts.do("POST", dryRunPath, dryRunRead, signedPack(t, "candidate", keys.private), nil)
	if res.status != http.StatusOK || res.header.Get("Content-Type") != "application/x-ndjson" {
		t.Fatalf("%d %s: %s", res.status, res.header.Get("Content-Type"), res.body)
	}
	got := parseDryRun(t, res.body)
	data, err := json.MarshalIndent(got, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "dry-run.golden.json")
	if *update {
		if err := os.WriteFile(golden, append(data, '\n'), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != string(data)+"\n" {
		t.Errorf("the dry run differs from %s:\n%s", golden, data)
	}
	after, err := ts.store.FleetVersion(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if after != before {
		t.Errorf("the fleet changed from %s to %s: a dry run stores nothing", before, after)
	}
}

func TestADryRunNamesTheClusterAndThePackThatBreaksTheFindingsContract(t *testing.T) {
	keys := newDryRunKeys(t)
	ts := newServer(t, withDryRun(keys))
	pushScenarios(t, ts, "teams", "clean-is-ready")
	res := ts.do("POST", dryRunPath, dryRunRead, signedPack(t, "broken", keys.private), nil)
	if res.status != http.StatusOK {
		t.Fatalf("%d: %s", res.status, res.body)
	}
	got := parseDryRun(t, res.body)
	if len(got.Results) != 2 || got.Results[0].Error != "" || !got.Results[1].Candidate ||
		!strings.Contains(got.Results[1].Error, "policy custom/broken breaks the findings contract") ||
		!strings.Contains(got.Results[1].Error, "broken/endpoints") ||
		!slices.Equal(got.Summary.CandidateErrors, []string{"teams"}) {
		t.Errorf("want teams named as broken by custom/broken's finding broken/endpoints and clean-is-ready judged, got %+v", got)
	}
	if got.Summary.Fails(outcome.FailOnBlocked) == "" {
		t.Error("a candidate failing on a cluster must fail the dry run at every threshold but never")
	}
}

// A stored evaluation made on an earlier day is not the cluster's judgement today: the kb's
// end of life for addon-eol-approaching (2026-11-30) passed since it was stored, which the
// candidate has nothing to do with. The dry run judges that side again with the active set,
// so the cluster is blocked before and after instead of "turned blocked" by the candidate.
func TestADryRunDoesNotBlameTheCandidateForADayThatPassed(t *testing.T) {
	keys := newDryRunKeys(t)
	var clock atomic.Pointer[time.Time]
	day := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	clock.Store(&day)
	ts := newServer(t, func(cfg *server.Config) {
		withDryRun(keys)(cfg)
		cfg.Now = func() time.Time { return *clock.Load() }
	})
	pushScenarios(t, ts, "addon-eol-approaching")
	next := day.Add(24 * time.Hour)
	clock.Store(&next)
	res := ts.do("POST", dryRunPath, dryRunRead, signedPack(t, "candidate", keys.private), nil)
	if res.status != http.StatusOK {
		t.Fatalf("%d: %s", res.status, res.body)
	}
	got := parseDryRun(t, res.body)
	if len(got.Summary.TurnedBlocked) != 0 || len(got.Summary.Changed) != 0 {
		t.Errorf("the candidate is blamed for the day that passed: %+v", got.Summary)
	}
	for _, d := range got.Results[0].Targets {
		if d.Before == nil || d.Before.Verdict != "blocked" || d.After.Verdict != "blocked" {
			t.Errorf("at %s: before %+v, after %+v; want blocked on both sides, judged today", d.Target, d.Before, d.After)
		}
	}
}

// A cluster the server has no target for (no version, no --targets) is not judged today
// either: it is listed as skipped and fails no threshold.
func TestADryRunSkipsAClusterWithNoTargetWithoutFailing(t *testing.T) {
	keys := newDryRunKeys(t)
	ts := newServer(t, func(cfg *server.Config) {
		withDryRun(keys)(cfg)
		cfg.Targets = nil
	})
	pushScenarios(t, ts, "clean-is-ready", "teams")
	res := ts.do("POST", dryRunPath, dryRunRead, signedPack(t, "candidate", keys.private), nil)
	if res.status != http.StatusOK {
		t.Fatalf("%d: %s", res.status, res.body)
	}
	got := parseDryRun(t, res.body)
	if !slices.Equal(got.Summary.Skipped, []string{"clean-is-ready"}) || len(got.Summary.Unjudged) != 0 ||
		got.Results[0].Skipped == "" || got.Summary.Fails(outcome.FailOnBlocked) != "" {
		t.Errorf("want clean-is-ready skipped, nothing unjudged and the dry run passing, got %+v", got)
	}
}

func TestADryRunRefusesWhatItCannotTrustOrWhoMayNotAskNamingWhy(t *testing.T) {
	keys := newDryRunKeys(t)
	ts := newServer(t, withDryRun(keys))
	pushScenarios(t, ts, "clean-is-ready")
	team := ts.mintRead("payments")
	signed := signedPack(t, "candidate", keys.private)
	otherKeys := newDryRunKeys(t)
	tests := []struct {
		name   string
		token  string
		query  string
		body   []byte
		status int
		says   string
	}{
		{"an unsigned candidate", dryRunRead, "", signedPack(t, "candidate", ""), 422, "missing .signatures.json"},
		{"a candidate changed after signing", dryRunRead, "", tampered(t, signed), 422, "digest mismatch"},
		{"a candidate signed by another key", dryRunRead, "", signedPack(t, "candidate", otherKeys.private), 422, "failed to verify JWT signature"},
		{"a body that is no bundle", dryRunRead, "", []byte("not a tarball"), 422, "gzip: invalid header"},
		{"an empty body", dryRunRead, "", nil, 422, "the body is empty"},
		{"a budget past the cap", dryRunRead, "?budget=2h", signed, 422, "want a duration from 1s to 15m"},
		{"a budget that is no duration", dryRunRead, "?budget=soon", signed, 422, "e.g. 90s or 5m"},
		{"a team-scoped read token", team, "", signed, 403, "team-scoped"},
		{"no credential", "", "", signed, 401, "read credential"},
		{"an ingest token", dryRunIngest, "", signed, 401, "invalid read token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := ts.do("POST", dryRunPath+tt.query, tt.token, tt.body, nil)
			if res.status != tt.status || !strings.Contains(string(res.body), tt.says) {
				t.Errorf("%d %s; want %d naming %q", res.status, res.body, tt.status, tt.says)
			}
		})
	}
}

func TestADryRunOnAServerWithoutAVerificationKeySaysWhichFlagTurnsItOn(t *testing.T) {
	keys := newDryRunKeys(t)
	ts := newServer(t, func(cfg *server.Config) {
		withDryRun(keys)(cfg)
		cfg.Verification = nil
	})
	res := ts.do("POST", dryRunPath, dryRunRead, signedPack(t, "candidate", keys.private), nil)
	if res.status != http.StatusNotImplemented || !strings.Contains(string(res.body), "--verification-key") {
		t.Errorf("%d %s; want 501 naming --verification-key", res.status, res.body)
	}
}

// flushRecorder records what had been written at each Flush.
type flushRecorder struct {
	*httptest.ResponseRecorder
	flushed []string
}

func (f *flushRecorder) Flush() {
	f.flushed = append(f.flushed, f.Body.String())
	f.ResponseRecorder.Flush()
}

// Each line is flushed as soon as it is written, so a client sees every cluster as it is
// judged rather than the whole answer at the end.
func TestADryRunFlushesEachLineAsItIsWritten(t *testing.T) {
	keys := newDryRunKeys(t)
	ts := newServer(t, withDryRun(keys))
	pushScenarios(t, ts, "teams", "clean-is-ready", "addon-eol-approaching")
	req := httptest.NewRequestWithContext(t.Context(), "POST", "http://127.0.0.1"+dryRunPath, bytes.NewReader(signedPack(t, "candidate", keys.private)))
	req.Header.Set("Authorization", "Bearer "+dryRunRead)
	rec := &flushRecorder{ResponseRecorder: httptest.NewRecorder()}
	ts.srv.Handler().ServeHTTP(rec, req)
	checkContract(t, req, rec.Code, rec.Header(), rec.Body.Bytes())
	if rec.Code != http.StatusOK || len(rec.flushed) != 4 {
		t.Fatalf("%d, %d flushes; want 200 and one flush per line (3 clusters and the summary): %s", rec.Code, len(rec.flushed), rec.Body)
	}
	for i, seen := range rec.flushed {
		if n := strings.Count(seen, "\n"); n != i+1 || !strings.HasSuffix(seen, "\n") {
			t.Errorf("flush %d saw %d whole lines, want %d: %q", i+1, n, i+1, seen)
		}
	}
}

// A dry run's workers wait in line for the evaluation slots pushes take, so pushes keep
// being accepted while it runs: here one arrives once the stream has begun.
func TestAPushDuringADryRunIsAccepted(t *testing.T) {
	keys := newDryRunKeys(t)
	ts := newServer(t, withDryRun(keys))
	eng, err := sharedEngine()
	if err != nil {
		t.Fatal(err)
	}
	doc := probetest.Scenario(t, "../..", "teams", eng.Observe().Probes)
	const fleet = 12
	for i := range fleet {
		doc.ClusterID = fmt.Sprintf("00000000-0000-4000-8000-%012d", i)
		if res := ts.push(dryRunIngest, envelope(t, fmt.Sprintf("cluster-%02d", i), doc)); res.status != http.StatusAccepted {
			t.Fatalf("push %d: %d %s", i, res.status, res.body)
		}
	}
	req, err := http.NewRequestWithContext(t.Context(), "POST", ts.URL+dryRunPath, bytes.NewReader(signedPack(t, "candidate", keys.private)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+dryRunRead)
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	lines := bufio.NewScanner(resp.Body)
	if !lines.Scan() {
		t.Fatalf("no first line: %v", lines.Err())
	}
	doc.ClusterID = "00000000-0000-4000-8000-000000000999"
	if res := ts.push(dryRunIngest, envelope(t, "pushed-meanwhile", doc)); res.status != http.StatusAccepted {
		t.Errorf("a push during the dry run: %d %s, want 202", res.status, res.body)
	}
	body := append(slices.Clone(lines.Bytes()), '\n')
	for lines.Scan() {
		body = append(append(body, lines.Bytes()...), '\n')
	}
	checkContract(t, req, resp.StatusCode, resp.Header, body)
	if got := parseDryRun(t, body); len(got.Results) != fleet || got.Summary.Clusters != fleet {
		t.Errorf("%d results, summary %+v: want a line for each cluster the run began with", len(got.Results), got.Summary)
	}
}
