package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/upgradescope/upgradescope/internal/testenv/syncbuf"
)

// The done-when for the fleet: upgradescope mcp --server against a running serve
// answers fleet_summary over stdio with the server's own counts.
func TestMCPFleetSummaryOverStdioAnswersTheCountsOfARunningServe(t *testing.T) {
	dir := t.TempDir()
	const (
		ingest = "mcp-fleet-ingest-token-0123456789abcdef"
		read   = "mcp-fleet-read-token-0123456789abcdef"
	)
	readFile := writeSecret(t, dir, "read", read)
	p := startServe(t, "--db", filepath.Join(dir, "fleet.db"), "--read-token-file", readFile,
		"--ingest-token-file", writeSecret(t, dir, "ingest", ingest))
	pushInventory(t, p.url, ingest, "prod", "teams") // 1.32, blocked at 1.33

	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	stderr := &syncbuf.Buffer{}
	exited := make(chan int, 1)
	go func() {
		code := run([]string{"mcp", "--server", p.url, "--read-token-file", readFile, "--no-cluster", "--root", dir},
			streams{in: inR, out: outW, err: stderr})
		outW.Close()
		exited <- code
	}()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).
		Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatalf("connect over stdio: %v\nstderr:\n%s", err, stderr)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "fleet_summary", Arguments: map[string]any{}})
	if err != nil || res.IsError {
		t.Fatalf("fleet_summary: %v %+v\nstderr:\n%s", err, res, stderr)
	}
	var got struct {
		Counts     map[string]any `json:"counts"`
		JudgedWith []string       `json:"judgedWith"`
		Clusters   []struct{ Name, Standing string }
	}
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	var want struct {
		Counts map[string]any `json:"counts"`
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, p.url+"/api/v1/fleet", nil)
	req.Header.Set("Authorization", "Bearer "+read)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&want); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /api/v1/fleet: %s: %v", resp.Status, err)
	}
	if len(got.Counts) != len(want.Counts) || want.Counts["blocked"] != 1.0 {
		t.Errorf("counts %v, the server's %v: want prod blocked", got.Counts, want.Counts)
	}
	for k, v := range want.Counts {
		if got.Counts[k] != v {
			t.Errorf("counts[%s] = %v, the server's %v", k, got.Counts[k], v)
		}
	}
	if len(got.Clusters) != 1 || got.Clusters[0].Name != "prod" || got.Clusters[0].Standing != "blocked" || len(got.JudgedWith) == 0 {
		t.Errorf("answer %s: want prod blocked, judged with the server's bundles", b)
	}
	// The assistant closing stdin ends the server, with exit 0.
	_ = cs.Close()
	select {
	case code := <-exited:
		if code != exitOK {
			t.Errorf("mcp exited %d after stdin closed\nstderr:\n%s", code, stderr)
		}
	case <-ctx.Done():
		t.Fatalf("mcp still ran after stdin closed\nstderr:\n%s", stderr)
	}
}
