package main

import (
	"bytes"
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/fleet/push"
	"github.com/upgradescope/upgradescope/internal/testenv/probetest"
	"github.com/upgradescope/upgradescope/inventory"
)

// pushInventory pushes testdata/<scenario>'s inventory to a real serve as cluster name, its
// probes observed as finding nothing.
func pushInventory(t *testing.T, url, token, name, scenario string) {
	t.Helper()
	eng, err := engine.New(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	pushDocument(t, url, token, name, probetest.Scenario(t, "../..", scenario, eng.Observe().Probes))
}

// pushDocument pushes doc to a real serve as cluster name and expects it accepted.
func pushDocument(t *testing.T, url, token, name string, doc *inventory.Document) {
	t.Helper()
	body, err := push.Encode(push.Envelope{SchemaVersion: push.SchemaVersion, ClusterName: name, AgentVersion: "test",
		KBVersion: "test", Inventory: doc})
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("POST", url+push.Path, bytes.NewReader(body))
	req.Header.Set("Content-Encoding", "gzip")
	req.Header.Set("Content-Type", push.ContentType)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("push %s: %s", name, resp.Status)
	}
}

// A pull request's rendered manifests judged against the cluster a fleet server keeps, by
// the client and by the Action: re-applying what the cluster runs passes although the
// cluster is blocked; a new object at a removed API fails.
func TestGateAndTheActionJudgeManifestsAgainstAStoredCluster(t *testing.T) {
	dir := t.TempDir()
	const ingest = "gate-ingest-token-0123456789abcdef"
	p := startServe(t, "--db", filepath.Join(dir, "fleet.db"), "--read-token-file", writeSecret(t, dir, "read", gateReadToken),
		"--ingest-token-file", writeSecret(t, dir, "ingest", ingest))
	pushInventory(t, p.url, ingest, "prod", "teams") // 1.32, blocked at 1.33 by Ingress shop/a and a PodSecurityPolicy
	manifests := t.TempDir()
	write(t, manifests, "ingress.yaml", "apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata: {name: a, namespace: shop}\nspec: {}\n")
	gate := func() result {
		return runCLI(t, "gate", "--server", p.url, "--read-token", gateReadToken, "--cluster", "prod", "--files", manifests,
			"--target", "1.33", "-o", "json")
	}
	g := gate()
	if g.code != exitOK || !strings.Contains(g.stdout, `"source": "cluster"`) || !strings.Contains(g.stdout, `"name": "prod"`) ||
		strings.Contains(g.stdout, `"source": "manifest"`) {
		t.Errorf("re-applying shop/a: exit %d\n%s\n%s", g.code, g.stdout, g.stderr)
	}
	write(t, manifests, "new.yaml", "apiVersion: extensions/v1beta1\nkind: Ingress\nmetadata: {name: b, namespace: shop}\nspec: {}\n")
	if g := gate(); g.code != exitGate || !strings.Contains(g.stdout, `"source": "manifest"`) || !strings.Contains(g.stdout, `"file": "new.yaml"`) ||
		!strings.Contains(g.stdout, `"filesBase": "`+manifests+`"`) {
		t.Errorf("a new Ingress at a removed API: exit %d\n%s\n%s", g.code, g.stdout, g.stderr)
	}
	r := runAction(t, map[string]string{"path": manifests, "target": "1.33", "version": "preinstalled", "server": p.url,
		"cluster": "prod", "read-token": gateReadToken})
	if r.code != exitGate || r.outputs["verdict"] != "blocked" || r.outputs["blockers"] != "1" || !strings.Contains(r.summary, "*cluster*") {
		t.Errorf("the Action against prod: exit %d, outputs %v\nsummary:\n%s\nstderr:\n%s", r.code, r.outputs, r.summary, r.stderr)
	}
}
