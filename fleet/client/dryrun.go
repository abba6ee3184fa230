package client

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
	"slices"
	"time"

	"github.com/upgradescope/upgradescope/bundles/rollout/outcome"
)

// maxDryRunLine bounds one line of a dry run's answer: a cluster's finding keys.
const maxDryRunLine = 16 << 20

// DryRun posts a signed candidate bundle tarball to POST /api/v1/bundles/dry-run and reads
// the streamed answer: a line per cluster, passed to progress (when not nil) as it
// arrives, then the summary. budget, when positive, is the run's time budget (else the
// server's default). Results are answered by cluster name, the order of the summary's
// lists. An answer that ends before its summary is an error: the clusters not shown were
// never judged.
//
// The answer streams for as long as the run takes: ctx bounds it, not WithTimeout.
func (c *Client) DryRun(ctx context.Context, candidate []byte, budget time.Duration, progress func(outcome.Result)) ([]outcome.Result, outcome.Summary, error) {
	path := []string{"api", "v1", "bundles", "dry-run"}
	q := url.Values{}
	if budget > 0 {
		q.Set("budget", budget.String())
	}
	req, err := c.request(ctx, http.MethodPost, bytes.NewReader(candidate), q, path...)
	if err != nil {
		return nil, outcome.Summary{}, err
	}
	req.Header.Set("Content-Type", "application/gzip")
	req.Header.Set("Accept", "application/x-ndjson")
	streaming := *c.http
	streaming.Timeout = 0
	resp, err := streaming.Do(req)
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

// readDryRunStream reads the lines of a dry run's answer until its summary: each line an
// outcome.Result, the last {"summary": outcome.Summary}.
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
