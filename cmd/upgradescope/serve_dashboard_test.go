package main

import (
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
)

// A real serve under --path-prefix, filled by a real push, shows the cluster on the fleet
// page's fragment, serves the shell and its assets there, and nothing outside the prefix.
func TestServeUnderAPathPrefixShowsAPushedClusterOnTheDashboard(t *testing.T) {
	dir := t.TempDir()
	const ingest, read = "dashboard-ingest-token", "dashboard-read-token"
	p := startServe(t, "--db", filepath.Join(dir, "fleet.db"), "--path-prefix", "/upgradescope/",
		"--ingest-token-file", writeSecret(t, dir, "ingest", ingest), "--read-token-file", writeSecret(t, dir, "read", read))
	if !strings.HasSuffix(p.url, "/upgradescope") {
		t.Fatalf("serve says it listens on %s, not under the prefix", p.url)
	}
	pushInventory(t, p.url, ingest, "prod", "teams")

	get := func(url, token string) (int, string) {
		t.Helper()
		req, err := http.NewRequest("GET", url, nil)
		if err != nil {
			t.Fatal(err)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	status, shell := get(p.url+"/", "")
	if status != 200 || !strings.Contains(shell, `src="/upgradescope/assets/app.`) {
		t.Fatalf("the fleet page: %d %.300s", status, shell)
	}
	if status, _ := get(p.url+"/ui/fleet", ""); status != 401 {
		t.Errorf("the fleet fragment without the read token: %d, want 401", status)
	}
	status, fleet := get(p.url+"/ui/fleet", read)
	if status != 200 || !strings.Contains(fleet, `<tr data-cluster="prod" data-status="blocked">`) {
		t.Errorf("the fleet fragment does not show prod blocked: %d %s", status, fleet)
	}
	root := strings.TrimSuffix(p.url, "/upgradescope")
	for _, path := range []string{"/", "/healthz", "/api/v1/fleet"} {
		if status, _ := get(root+path, read); status != 404 {
			t.Errorf("%s outside the prefix: %d, want 404", path, status)
		}
	}
}
