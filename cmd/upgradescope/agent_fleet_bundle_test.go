package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/internal/testenv/bundletest"
	"github.com/upgradescope/upgradescope/internal/testenv/kubetest"
)

// TestAnAgentTakesItsKBFromTheFleetServerAndReportsIt runs serve, publishing a signed kb, and
// the agent binary against the real API server, polling that kb from the server with the
// ingest token it pushes with. Its pushes name the revision it evaluates with, so the
// fleet shows it; a new revision published to the server is taken by the server itself and
// reaches the same agent process, whose next push reports it: the fleet shows the agent's
// kb current (not behind the server's).
func TestAnAgentTakesItsKBFromTheFleetServerAndReportsIt(t *testing.T) {
	kubeconfig := kubetest.Kubeconfig(t, kubetest.EnvServer)
	dir, publish := t.TempDir(), t.TempDir()
	private, public := bundletest.Keys(t, t.TempDir())
	bundletest.Publish(t, filepath.Join(publish, "kb.tar.gz"), bundletest.KB(t, private, "2027-01-05.1", "1.37"))
	const ingest = "fleet-bundle-ingest-token-0123456789"
	tokenFile := writeSecret(t, dir, "ingest", ingest)
	p := startServe(t, "--db", filepath.Join(dir, "fleet.db"), "--ingest-token-file", tokenFile, "--publish-dir", publish,
		"--verification-key", public, "--bundle-poll-min-delay", "1s", "--bundle-poll-max-delay", "1s")
	startAgent(t, kubeconfig, "--cr-name", "fleet-bundles-e2e", "--cluster-name", "fleet-bundles-e2e",
		"--server", p.url, "--ingest-token-file", tokenFile,
		"--bundle-url", p.url+"/bundles/kb.tar.gz", "--bundle-token-file", tokenFile, "--verification-key", public,
		"--bundle-poll-min-delay", "1s", "--bundle-poll-max-delay", "2s")

	waitForFleetKB(t, p.url, "2027-01-05.1")
	bundletest.Publish(t, filepath.Join(publish, "kb.tar.gz"), bundletest.KB(t, private, "2027-01-12.1", "1.37"))
	waitForFleetKB(t, p.url, "2027-01-12.1")
}

// waitForFleetKB waits until the fleet server's cluster list shows the agent's kb revision,
// not behind the server's own.
func waitForFleetKB(t *testing.T, url, revision string) {
	t.Helper()
	var last string
	ok := pollUntil(90*time.Second, 500*time.Millisecond, func() bool {
		resp, err := http.Get(url + "/api/v1/clusters")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		var list struct {
			Clusters []struct {
				Name    string
				Bundles []struct {
					Name, Revision string
					Behind         bool
				}
			}
		}
		if json.NewDecoder(resp.Body).Decode(&list) != nil {
			return false
		}
		for _, c := range list.Clusters {
			for _, b := range c.Bundles {
				if c.Name == "fleet-bundles-e2e" && b.Name == "kb" {
					last = fmt.Sprintf("%s, behind %v", b.Revision, b.Behind)
					return b.Revision == revision && !b.Behind
				}
			}
		}
		return false
	})
	if !ok {
		t.Fatalf("the fleet never showed kb %s, not behind, for the cluster (last: %q)", revision, strings.TrimSpace(last))
	}
}
