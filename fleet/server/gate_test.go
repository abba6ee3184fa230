package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/collectors/files"
	"github.com/upgradescope/upgradescope/fleet/api"
	"github.com/upgradescope/upgradescope/fleet/server"
	"github.com/upgradescope/upgradescope/output"
)

var yamlBody = http.Header{"Content-Type": {"application/yaml"}}

// The gate judges a manifest stream as `scan --files` judges the same file: the files
// collector and the engine, at the server's clock.
func TestTheGateJudgesManifestsAsAScanOfTheSameFile(t *testing.T) {
	ts := newServer(t, nil)
	manifest, err := os.ReadFile("../../examples/manifests/ci-runner.yaml")
	if err != nil {
		t.Fatal(err)
	}
	r := ts.do("POST", "/api/v1/gate?target=1.37", "", manifest, yamlBody)
	if r.status != 422 || r.header.Get("X-Upgradescope-Verdict") != "blocked" {
		t.Fatalf("gate: %d %q %s", r.status, r.header.Get("X-Upgradescope-Verdict"), r.body)
	}
	// The same file scanned the way `scan --files` does, at the same clock.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "manifests.yaml"), manifest, 0o600); err != nil {
		t.Fatal(err)
	}
	eng, _ := sharedEngine()
	res, err := files.Collect(dir, files.Options{Observe: eng.Observe()})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	doc := files.Inventory(res, now)
	doc.FilesBase = ""
	rep, err := eng.Evaluate(context.Background(), doc, []string{"1.37"}, now)
	if err != nil {
		t.Fatal(err)
	}
	renderer, _ := output.New(output.FormatJSON, output.Options{})
	var want bytes.Buffer
	if err := renderer.Render(&want, rep); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(r.body, want.Bytes()) {
		t.Errorf("the gate's report differs from the scan's:\n%s\nwant\n%s", r.body, want.Bytes())
	}
	var got struct {
		Targets []struct{ Findings []struct{ Key string } }
	}
	if err := json.Unmarshal(r.body, &got); err != nil || len(got.Targets) != 1 || len(got.Targets[0].Findings) == 0 ||
		got.Targets[0].Findings[0].Key != "removed-behaviour/docker-socket" {
		t.Errorf("gate report %s: want the docker-socket blocker", r.body)
	}
}

func TestTheGatePassesWhatNothingStopsAndFailsClosed(t *testing.T) {
	ts := newServer(t, nil)
	clean := []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\nspec:\n  template:\n    spec:\n      containers: [{name: web, image: nginx}]\n")
	r := ts.do("POST", "/api/v1/gate?target=1.37&format=markdown", "", clean, yamlBody)
	if r.status != 200 || r.header.Get("X-Upgradescope-Verdict") != "ready" || !strings.Contains(string(r.body), "READY") ||
		r.header.Get("Content-Type") != "text/markdown; charset=utf-8" {
		t.Errorf("a clean Deployment: %d %v %s", r.status, r.header, r.body)
	}
	for format, ctype := range map[string]string{"json": "application/json", "sarif": "application/sarif+json",
		"junit": "application/xml", "table": "text/plain; charset=utf-8", "gitlab-codequality": "application/json"} {
		if r := ts.do("POST", "/api/v1/gate?target=1.37&format="+format, "", clean, yamlBody); r.status != 200 || r.header.Get("Content-Type") != ctype {
			t.Errorf("format %s: %d %q", format, r.status, r.header.Get("Content-Type"))
		}
	}
	inv, err := os.ReadFile("../../testdata/clean-is-ready/inventory.json")
	if err != nil {
		t.Fatal(err)
	}
	invBody := http.Header{"Content-Type": {api.InventoryContentType}}
	// Collected without the kb's probes: unknown, which fails unless incomplete is allowed.
	if r := ts.do("POST", "/api/v1/gate?target=1.37", "", inv, invBody); r.status != 422 || r.header.Get("X-Upgradescope-Verdict") != "unknown" {
		t.Errorf("an inventory without the probes: %d %q", r.status, r.header.Get("X-Upgradescope-Verdict"))
	}
	if r := ts.do("POST", "/api/v1/gate?target=1.37&allow-incomplete=true", "", inv, invBody); r.status != 200 {
		t.Errorf("an inventory without the probes, incomplete allowed: %d %s", r.status, r.body)
	}
	socket, _ := os.ReadFile("../../examples/manifests/ci-runner.yaml")
	cfg := url.QueryEscape("ignore:\n  - key: removed-behaviour/docker-socket\n    reason: the runner moves to kaniko in sprint 12\n")
	if r := ts.do("POST", "/api/v1/gate?target=1.37&config="+cfg, "", socket, yamlBody); r.status != 200 {
		t.Errorf("a suppressed blocker still fails the gate: %d %s", r.status, r.body)
	}
}

func TestTheGateRefusesWhatItCannotJudge(t *testing.T) {
	ts := newServer(t, func(c *server.Config) { c.MaxGateBytes = 64 << 10 })
	deploy := []byte("apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n")
	tests := []struct {
		name, query string
		body        []byte
		header      http.Header
		status      int
		says        string
	}{
		{"no target", "", deploy, yamlBody, 422, "target"},
		{"a target that is no minor", "?target=1.37.1", deploy, yamlBody, 422, "target"},
		{"an unknown format", "?target=1.37&format=pdf", deploy, yamlBody, 422, "format"},
		{"an unknown threshold", "?target=1.37&fail-on=sometimes", deploy, yamlBody, 422, "fail-on"},
		{"a config that does not parse", "?target=1.37&config=" + url.QueryEscape("ignore: [{key: x}]"), deploy, yamlBody, 422, "config"},
		{"a path past 512 bytes", "?target=1.37&path=" + strings.Repeat("d/", 257), deploy, yamlBody, 422, "path is at most 512 bytes"},
		{"a config past 32 KiB", "?target=1.37&config=" + strings.Repeat("%23", 33<<10), deploy, yamlBody, 422, "config at most"},
		{"an unsupported content type", "?target=1.37", deploy, http.Header{"Content-Type": {"text/html"}}, 415, "content type"},
		{"a body past --max-gate-bytes", "?target=1.37", bytes.Repeat([]byte("#\n"), 40<<10), yamlBody, 413, "max-gate-bytes"},
		{"no Kubernetes object", "?target=1.37", []byte("replicaCount: 1\n"), yamlBody, 422, "no Kubernetes object"},
		{"an inventory the schema refuses", "?target=1.37", []byte(`{"schemaVersion": 2}`), http.Header{"Content-Type": {api.InventoryContentType}}, 422, "inventory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := ts.do("POST", "/api/v1/gate"+tt.query, "", tt.body, tt.header)
			if r.status != tt.status || !strings.Contains(string(r.body), tt.says) {
				t.Errorf("%d %s; want %d saying %q", r.status, r.body, tt.status, tt.says)
			}
		})
	}
	// Within the default 10 MiB, more documents than a gate judges.
	many := []byte(strings.Repeat("---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n", 20_001))
	if r := newServer(t, nil).do("POST", "/api/v1/gate?target=1.37", "", many, yamlBody); r.status != 413 || !strings.Contains(string(r.body), "20001 documents: a gate judges at most 20000") {
		t.Errorf("more than 20,000 documents: %d %.300s", r.status, r.body)
	}
	// Within the default 10 MiB, a document of more YAML nodes than the collector parses.
	nodes := []byte("apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: big}\nspec: {k: [" +
		strings.Repeat("1,", files.MaxDocumentNodes) + "1]}\n")
	if r := newServer(t, nil).do("POST", "/api/v1/gate?target=1.37", "", nodes, yamlBody); r.status != 413 || !strings.Contains(string(r.body), "YAML nodes") {
		t.Errorf("a document past the YAML node budget: %d %.300s", r.status, r.body)
	}
}

// upgradescope gate sends the inventory and its suppression file in one body, so the file
// never travels in a URL.
func TestTheGateReadsAnInventoryAndItsSuppressionFileFromTheBody(t *testing.T) {
	ts := newServer(t, nil)
	inv, err := json.Marshal(teamsInventory(t))
	if err != nil {
		t.Fatal(err)
	}
	body := func(config string) []byte {
		data, _ := json.Marshal(map[string]any{"inventory": json.RawMessage(inv), "config": config})
		return data
	}
	header := http.Header{"Content-Type": {api.GateContentType}}
	cfg := "ignore:\n  - category: removed-api\n    reason: migrating this sprint\n"
	r := ts.do("POST", "/api/v1/gate?target=1.33", "", body(cfg), header)
	if r.status != 200 || !strings.Contains(string(r.body), `"reason": "migrating this sprint"`) {
		t.Errorf("the body's suppression file should take both blockers out: %d %.400s", r.status, r.body)
	}
	if r := ts.do("POST", "/api/v1/gate?target=1.33", "", body(""), header); r.status != 422 {
		t.Errorf("without a suppression file the blockers count: %d", r.status)
	}
	if r := ts.do("POST", "/api/v1/gate?target=1.33&config="+url.QueryEscape(cfg), "", body(""), header); r.status != 200 {
		t.Errorf("a body without a suppression file keeps the query's: %d %.300s", r.status, r.body)
	}
	for name, b := range map[string][]byte{
		"a suppression file past 32 KiB": body(strings.Repeat("#", 33<<10)),
		"a body that is no JSON":         []byte("{"),
		"an invalid suppression file":    body("ignore: [{key: x}]"),
	} {
		if r := ts.do("POST", "/api/v1/gate?target=1.33", "", b, header); r.status != 422 {
			t.Errorf("%s: %d %s", name, r.status, r.body)
		}
	}
}
