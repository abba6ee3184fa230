package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/upgradescope/upgradescope/bundles"
	"github.com/upgradescope/upgradescope/bundles/rollout/outcome"
	"github.com/upgradescope/upgradescope/internal/smallfile"
)

const (
	// serverDryRunBudget is the server's own default budget, the wait when --budget is unset.
	serverDryRunBudget = 5 * time.Minute
	// dryRunSlack is how long past its budget a server's dry run may take to answer: the
	// upload, the clusters in flight when it ran out, the summary.
	dryRunSlack = 2 * time.Minute
	// maxDryRunLine bounds one line of the answer: a cluster's finding keys.
	maxDryRunLine = 16 << 20
)

// localDryRunOnly are the flags that shape a dry run over --inventories, which a server decides
// for itself: it judges at its own targets, with its own bundles, limits, clock and workers.
// serverDryRunOnly are those of --server alone.
var (
	localDryRunOnly = []string{"targets", "workers", "now", "bundle", "verification-key", "signing-alg",
		"bundle-token-file", "bundle-ca-file", "bundle-timeout", "policy-timeout", "policy-memory"}
	serverDryRunOnly = []string{"server-ca-file", "read-token", "read-token-file"}
)

// refuseFlags names the first of flags given, which the mode does not use: a flag silently
// ignored would let a pipeline believe it judged what it did not.
func refuseFlags(cmd *cobra.Command, flags []string, why string) error {
	for _, name := range flags {
		if cmd.Flags().Changed(name) {
			return fmt.Errorf("--%s %s", name, why)
		}
	}
	return nil
}

// runServerDryRun sends the candidate to a fleet server's dry run and prints its answer as
// the --inventories mode prints its own, with the same exit codes.
func runServerDryRun(cmd *cobra.Command, s streams, candidate string, f *dryRunFlags) error {
	if err := refuseFlags(cmd, localDryRunOnly, "applies to --inventories: with --server the server judges at its own targets, with its own bundles"); err != nil {
		return err
	}
	if _, err := f.validate(); err != nil {
		return err
	}
	raw, err := readCandidateTarball(candidate)
	if err != nil {
		return err
	}
	c, err := readClient(s, f.server, f.caFile, f.token)
	if err != nil {
		return err
	}
	budget, q := serverDryRunBudget, url.Values{}
	if cmd.Flags().Changed("budget") {
		budget = f.budget
		q.Set("budget", f.budget.String())
	}
	// The answer streams for as long as the dry run takes: the context bounds it, not the
	// client's per-request timeout.
	c.http.Timeout = 0
	ctx, cancel := context.WithTimeout(cmd.Context(), budget+dryRunSlack)
	defer cancel()
	results, summary, err := c.dryRun(ctx, raw, q, dryRunProgress(s, f.quiet))
	if err != nil {
		return err
	}
	if err := writeDryRun(s, f.output, results, summary); err != nil {
		return err
	}
	return dryRunGate(summary, f.failOn)
}

// readCandidateTarball reads the candidate a server verifies: a bundle tarball (a server
// cannot be sent a directory, and would refuse it unsigned anyway).
func readCandidateTarball(path string) ([]byte, error) {
	if info, err := os.Stat(path); err == nil && info.IsDir() {
		return nil, fmt.Errorf("candidate %s is a directory: a server takes a signed bundle tarball, made with `upgradescope bundle build` and `bundle sign`", path)
	}
	if bundles.IsURL(path) {
		return nil, fmt.Errorf("candidate %s: with --server give a local signed bundle tarball", bundles.SanitizedURL(path))
	}
	raw, err := smallfile.Read(path, bundles.MaxSize)
	if err != nil {
		return nil, fmt.Errorf("candidate: %w", err)
	}
	return raw, nil
}

// dryRunProgress prints a line per cluster on stderr as the server judges it (nil with -q).
func dryRunProgress(s streams, quiet bool) func(outcome.Result) {
	if quiet {
		return nil
	}
	done := 0
	return func(r outcome.Result) {
		done++
		fmt.Fprintf(s.err, "[%d] %s\n", done, progressLine(r))
	}
}

// dryRun posts the candidate and reads the streamed answer: a line per cluster, passed to
// progress as it arrives, then the summary. Results are answered by cluster name, the
// order of the summary's lists. An answer that ends before its summary is an error: the
// clusters not shown were never judged.
func (c *apiClient) dryRun(ctx context.Context, candidate []byte, q url.Values, progress func(outcome.Result)) ([]outcome.Result, outcome.Summary, error) {
	path := []string{"api", "v1", "bundles", "dry-run"}
	req, err := c.request(ctx, http.MethodPost, bytes.NewReader(candidate), q, path...)
	if err != nil {
		return nil, outcome.Summary{}, err
	}
	req.Header.Set("Content-Type", "application/gzip")
	req.Header.Set("Accept", "application/x-ndjson")
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, outcome.Summary{}, fmt.Errorf("POST %s: %w", c.endpoint(path...), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, outcome.Summary{}, c.refusal(req, resp)
	}
	results, summary, err := readDryRunStream(resp.Body, progress)
	if err != nil {
		return nil, outcome.Summary{}, fmt.Errorf("POST %s: %w", c.endpoint(path...), err)
	}
	slices.SortFunc(results, func(a, b outcome.Result) int { return cmp.Compare(a.Cluster, b.Cluster) })
	return results, summary, nil
}

// readDryRunStream reads the lines of a dry run's answer until its summary.
func readDryRunStream(body io.Reader, progress func(outcome.Result)) ([]outcome.Result, outcome.Summary, error) {
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 0, 64<<10), maxDryRunLine)
	var results []outcome.Result
	for sc.Scan() {
		var line struct {
			*outcome.Result
			Summary *outcome.Summary `json:"summary"`
		}
		line.Result = &outcome.Result{}
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			return nil, outcome.Summary{}, fmt.Errorf("line %d of the answer is not JSON: %w", len(results)+1, err)
		}
		if line.Summary != nil {
			return results, *line.Summary, nil
		}
		if line.Cluster == "" {
			return nil, outcome.Summary{}, fmt.Errorf("line %d of the answer is neither a cluster's result nor the summary", len(results)+1)
		}
		results = append(results, *line.Result)
		if progress != nil {
			progress(*line.Result)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, outcome.Summary{}, fmt.Errorf("the answer broke off after %d clusters: %w", len(results), err)
	}
	return nil, outcome.Summary{}, fmt.Errorf("the answer ended after %d clusters without its summary: the dry run did not finish", len(results))
}
