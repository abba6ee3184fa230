package main

import (
	"context"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/internal/testenv/bundletest"
)

// signedCandidate builds testdata/dry-run/<pack> into dir/<pack>.tar.gz, signed with
// privateFile (empty: unsigned), and answers its path.
func signedCandidate(t *testing.T, dir, pack, privateFile string) string {
	t.Helper()
	path := filepath.Join(dir, pack+".tar.gz")
	bundletest.Publish(t, path, bundletest.Build(t, filepath.Join(dryRunData, pack), "2026-11-30.1", privateFile))
	return path
}

// TestBundleDryRunAgainstARealServer runs `bundle dry-run --server` against the built
// binary's serve, its fleet pushed through ingest: the same table and exit codes as
// --inventories, a progress line per cluster, and a candidate the server cannot verify
// refused with exit 1 and the server's reason.
func TestBundleDryRunAgainstARealServer(t *testing.T) {
	dir := t.TempDir()
	private, public := bundletest.Keys(t, dir)
	const ingest, read = "dry-run-ingest-token", "dry-run-read-token"
	p := startServe(t, "--db", filepath.Join(dir, "fleet.db"), "--target", "1.37", "--verification-key", public,
		"--ingest-token-file", writeSecret(t, dir, "ingest", ingest), "--read-token-file", writeSecret(t, dir, "read", read))
	for _, s := range []string{"teams", "clean-is-ready"} {
		pushInventory(t, p.url, ingest, s, s)
	}
	tokenFile := writeSecret(t, dir, "read-client", read)
	dryRun := func(candidate string, args ...string) result {
		return runBuilt(t, append([]string{"bundle", "dry-run", candidate, "--server", p.url, "--read-token-file", tokenFile}, args...)...)
	}

	res := dryRun(signedCandidate(t, dir, "candidate", private))
	row := regexp.MustCompile(`(?m)^clean-is-ready +1\.37 +ready 100 +blocked 75 +1 +0 +0$`)
	if res.code != exitGate || !row.MatchString(res.stdout) || !strings.Contains(res.stdout, "clean-is-ready 1.37 new: fleet-gateway/ingress") ||
		!strings.Contains(res.stdout, "2 clusters in the dry run.") {
		t.Errorf("exit %d, stdout:\n%s\nwant exit 2 and clean-is-ready turned blocked at 1.37", res.code, res.stdout)
	}
	if strings.Count(res.stderr, "] ") != 2 || !strings.Contains(res.stderr, "clean-is-ready: 1.37 ready → blocked") ||
		!strings.Contains(res.stderr, "dry run failed: 1 cluster would turn blocked (clean-is-ready)") {
		t.Errorf("stderr should hold a progress line per cluster and the reason:\n%s", res.stderr)
	}
	if r := dryRun(signedCandidate(t, dir, "candidate", private), "-q", "--fail-on", "never"); r.code != exitOK {
		t.Errorf("--fail-on never: exit %d, want 0: %s", r.code, r.stderr)
	}
	if r := dryRun(signedCandidate(t, dir, "broken", private), "-q", "-o", "json"); r.code != exitGate ||
		!strings.Contains(r.stdout, `"candidateError": true`) || !strings.Contains(r.stderr, "where the candidate fails (teams)") {
		t.Errorf("a broken candidate: exit %d, want 2 naming teams:\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	unsigned := t.TempDir()
	for _, tt := range []struct {
		name string
		args []string
		says string
	}{
		{"an unsigned candidate", []string{signedCandidate(t, unsigned, "candidate", "")}, "missing .signatures.json"},
		{"a pack directory", []string{filepath.Join(dryRunData, "candidate")}, "is a directory"},
		{"a local-only flag", []string{signedCandidate(t, dir, "candidate", private), "--target", "1.38"}, "--target applies to --inventories"},
	} {
		if r := dryRun(tt.args[0], tt.args[1:]...); r.code != exitErr || !strings.Contains(r.stderr, tt.says) {
			t.Errorf("%s: exit %d, stderr %q; want 1 naming %q", tt.name, r.code, r.stderr, tt.says)
		}
	}
	if r := runBuilt(t, "bundle", "dry-run", signedCandidate(t, dir, "candidate", private), "--server", p.url, "--inventories", dir); r.code != exitErr ||
		!strings.Contains(r.stderr, "[inventories server] were all set") {
		t.Errorf("both --server and --inventories: exit %d, stderr %q; want 1", r.code, r.stderr)
	}
}

// Against a real serve: the server's answer names the blockers a cluster already blocked
// gains, so --fail-on new-blocker fails on it, and --changed-only leaves the unchanged
// cluster out of the table.
func TestBundleDryRunAgainstARealServerFailsOnANewBlockerAndShowsTheChangesOnly(t *testing.T) {
	dir := t.TempDir()
	private, public := bundletest.Keys(t, dir)
	const ingest, read = "dry-run-ingest-token", "dry-run-read-token"
	p := startServe(t, "--db", filepath.Join(dir, "fleet.db"), "--target", "1.37", "--verification-key", public,
		"--ingest-token-file", writeSecret(t, dir, "ingest", ingest), "--read-token-file", writeSecret(t, dir, "read", read))
	eng, err := engine.New(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	pushInventory(t, p.url, ingest, "teams", "teams")
	pushDocument(t, p.url, ingest, "teams-gateway", gatewayDocument(t, eng))
	candidate := signedCandidate(t, dir, "candidate", private)
	tokenFile := writeSecret(t, dir, "read-client", read)
	dryRun := func(args ...string) result {
		return runBuilt(t, append([]string{"bundle", "dry-run", candidate, "--server", p.url, "--read-token-file", tokenFile, "-q"}, args...)...)
	}
	if r := dryRun(); r.code != exitOK {
		t.Errorf("--fail-on blocked: exit %d, want 0 (nothing turns blocked): %s", r.code, r.stderr)
	}
	res := dryRun("--fail-on", "new-blocker", "--changed-only")
	rows := regexp.MustCompile(`(?m)^teams-gateway +1\.(33|37) +blocked 50 +blocked 25 +1 +0 +0$`)
	if res.code != exitGate || len(rows.FindAllString(res.stdout, -1)) != 2 || strings.Contains(res.stdout, "\nteams ") ||
		!strings.Contains(res.stdout, "1 cluster without change omitted.") ||
		!strings.Contains(res.stdout, "would gain a blocker: 1 (teams-gateway)") ||
		!strings.Contains(res.stderr, "dry run failed: 1 cluster already blocked would gain a blocker (teams-gateway)") {
		t.Errorf("exit %d, stdout:\n%s\nstderr:\n%s\nwant exit 2, teams-gateway's rows only and its new blocker named", res.code, res.stdout, res.stderr)
	}
}
