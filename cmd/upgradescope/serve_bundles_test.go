package main

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/upgradescope/upgradescope/internal/testenv/bundletest"
	"github.com/upgradescope/upgradescope/inventory"
)

// The server's bundle set is replaced by a signed kb, from a polled --bundle-url (another
// fleet server's /bundles/, as bundle serve serves them) or from its own --publish-dir:
// the stored snapshot is judged again with the new kb in the background and a new push is
// evaluated with it; an unsigned and a tampered kb are refused with a logged error and
// the old set kept.
func TestServeEvaluatesWithTheSignedBundlesItIsGiven(t *testing.T) {
	const ingest = "serve-bundles-ingest-token-0123456789"
	sources := []struct {
		name string
		args func(t *testing.T, dir, key, tokenFile string) []string
	}{
		{"polled from another fleet server's publish directory with an ingest token", func(t *testing.T, dir, key, tokenFile string) []string {
			upstream := startServe(t, "--db", filepath.Join(t.TempDir(), "upstream.db"), "--ingest-token-file", tokenFile,
				"--publish-dir", dir, "--verification-key", key)
			return []string{"--bundle-url", upstream.url + "/bundles/kb.tar.gz", "--bundle-token-file", tokenFile}
		}},
		{"picked up from its own publish directory", func(_ *testing.T, dir, _, _ string) []string {
			return []string{"--publish-dir", dir}
		}},
	}
	for _, source := range sources {
		t.Run(source.name, func(t *testing.T) {
			dir, published := t.TempDir(), t.TempDir()
			private, public := bundletest.Keys(t, t.TempDir())
			kb := filepath.Join(published, "kb.tar.gz")
			bundletest.Publish(t, kb, bundletest.KB(t, private, "2027-01-05.1", "1.37"))
			tokenFile := writeSecret(t, dir, "ingest", ingest)
			args := append([]string{"--db", filepath.Join(dir, "fleet.db"), "--ingest-token-file", tokenFile,
				"--verification-key", public, "--bundle-poll-min-delay", "1s", "--bundle-poll-max-delay", "1s"},
				source.args(t, published, public, tokenFile)...)
			p := startServe(t, args...)
			doc := teamsDocument(t, "9f1c2d3e-0000-4000-8000-00000000000a")
			pushDocument(t, p.url, ingest, "prod", doc)
			expectLatest(t, p.url, "prod", false, "2027-01-05.1")

			for _, refused := range []struct {
				what, logged string
				data         []byte
			}{
				{"unsigned", "bundle missing .signatures.json file", bundletest.KB(t, "", "2027-01-06.1", "1.37")},
				{"tampered", "data.json: digest mismatch", bundletest.Tamper(t, bundletest.KB(t, private, "2027-01-07.1", "1.37"))},
			} {
				bundletest.Publish(t, kb, refused.data)
				if !pollUntil(60*time.Second, 100*time.Millisecond, func() bool {
					return strings.Contains(p.logs.String(), "bundle update failed; keeping the active bundles") && strings.Contains(p.logs.String(), refused.logged)
				}) {
					t.Fatalf("the %s kb was never refused in the log:\n%s", refused.what, p.logs.String())
				}
				expectLatest(t, p.url, "prod", false, "2027-01-05.1")
			}
			if v := bundleMetric(t, p.url, "upgradescope_bundle_update_failing", nil); v != 1 {
				t.Errorf("upgradescope_bundle_update_failing = %v after a refused kb, want 1", v)
			}

			// The background re-evaluation judges the stored snapshot with the new kb, no push
			// needed; until then the stored evaluation reads outdated (server tests pin that).
			bundletest.Publish(t, kb, bundletest.KB(t, private, "2027-01-12.1", "1.37"))
			if !pollUntil(60*time.Second, 100*time.Millisecond, func() bool {
				l, rev := storedLatest(t, p.url, "prod")
				return !l.Outdated && rev == "2027-01-12.1"
			}) {
				t.Fatalf("the stored snapshot was never judged again with the new kb:\n%s", p.logs.String())
			}
			doc.Namespaces = append(doc.Namespaces, inventory.Namespace{Name: "added-after-the-swap"})
			pushDocument(t, p.url, ingest, "prod", doc)
			expectLatest(t, p.url, "prod", false, "2027-01-12.1")
			// /metrics says so too, as an agent's do.
			if v := bundleMetric(t, p.url, "upgradescope_bundle_info", map[string]string{"name": "kb", "revision": "2027-01-12.1"}); v != 1 {
				t.Errorf("upgradescope_bundle_info{name=kb,revision=2027-01-12.1} = %v, want 1", v)
			}
			if v := bundleMetric(t, p.url, "upgradescope_bundle_update_failing", nil); v != 0 {
				t.Errorf("upgradescope_bundle_update_failing = %v after the new kb was taken up, want 0", v)
			}
		})
	}
}

// latest is a cluster's latest cell as GET /api/v1/clusters shows it.
type latest struct {
	ClusterID  int64
	SnapshotID int64 `json:"snapshotId"`
	Outdated   bool  `json:"outdated"`
}

func latestOf(t *testing.T, url, name string) latest {
	t.Helper()
	var list struct {
		Clusters []struct {
			ID     int64   `json:"id"`
			Name   string  `json:"name"`
			Latest *latest `json:"latest"`
		} `json:"clusters"`
	}
	fetchJSON(t, url, "/api/v1/clusters", &list)
	for _, c := range list.Clusters {
		if c.Name == name && c.Latest != nil {
			l := *c.Latest
			l.ClusterID = c.ID
			return l
		}
	}
	t.Fatalf("GET /api/v1/clusters lists no evaluated cluster %s", name)
	return latest{}
}

// expectLatest checks the cluster's latest cell and that its stored report was evaluated
// with kb revision.
func expectLatest(t *testing.T, url, name string, outdated bool, revision string) {
	t.Helper()
	l, kb := storedLatest(t, url, name)
	if l.Outdated != outdated {
		t.Errorf("cluster %s: latest outdated = %v, want %v", name, l.Outdated, outdated)
	}
	if kb != revision {
		t.Errorf("cluster %s: the stored evaluation of snapshot %d has kb %q, want %s", name, l.SnapshotID, kb, revision)
	}
}

// storedLatest is the cluster's latest cell and the kb revision of its stored report.
func storedLatest(t *testing.T, url, name string) (latest, string) {
	t.Helper()
	l := latestOf(t, url, name)
	var rep struct {
		Source     string `json:"source"`
		SnapshotID int64  `json:"snapshotId"`
		Report     struct {
			Bundles []struct{ Name, Revision string }
		} `json:"report"`
	}
	fetchJSON(t, url, fmt.Sprintf("/api/v1/clusters/%d/report", l.ClusterID), &rep)
	if rep.Source != "stored" || rep.SnapshotID != l.SnapshotID {
		t.Fatalf("cluster %s: report %s of snapshot %d, want the stored evaluation of snapshot %d", name, rep.Source, rep.SnapshotID, l.SnapshotID)
	}
	for _, b := range rep.Report.Bundles {
		if b.Name == "kb" {
			return l, b.Revision
		}
	}
	return l, ""
}

// fetchJSON reads base+path, which must answer 200, into out.
func fetchJSON(t *testing.T, base, path string, out any) {
	t.Helper()
	if code := getJSON(t, base, path, "", out); code != http.StatusOK {
		t.Fatalf("GET %s: %d", path, code)
	}
}

// A server restarted with a pack in its publish directory that breaks the findings contract
// rehearses it on the stored snapshot it judged last, before any push reaches it, and
// refuses it: the fleet keeps being judged with the old set.
func TestServeRehearsesANewBundleOnTheStoredFleetAfterARestart(t *testing.T) {
	const ingest = "serve-rehearsal-ingest-token-0123456789"
	dir, published := t.TempDir(), t.TempDir()
	private, public := bundletest.Keys(t, t.TempDir())
	args := []string{"--db", filepath.Join(dir, "fleet.db"), "--ingest-token-file", writeSecret(t, dir, "ingest", ingest),
		"--verification-key", public, "--publish-dir", published, "--bundle-poll-min-delay", "1s", "--bundle-poll-max-delay", "1s"}
	first := startServe(t, args...)
	pushDocument(t, first.url, ingest, "prod", teamsDocument(t, "9f1c2d3e-0000-4000-8000-00000000000b"))
	if code := first.stop(syscall.SIGTERM, 30*time.Second); code != 0 {
		t.Fatalf("serve exited %d:\n%s", code, first.logs.String())
	}

	signedCandidate(t, published, "broken", private)
	again := startServe(t, args...)
	if !pollUntil(30*time.Second, 100*time.Millisecond, func() bool {
		logs := again.logs.String()
		return strings.Contains(logs, "bundle update failed; keeping the active bundles") && strings.Contains(logs, "breaks the findings contract")
	}) {
		t.Fatalf("the broken pack was not refused on the stored snapshot:\n%s", again.logs.String())
	}
	if l := latestOf(t, again.url, "prod"); l.Outdated {
		t.Errorf("the stored evaluation reads outdated: the broken pack was taken up")
	}
}

// bundleMetric reads one sample of a bundle series from a serve's /metrics: the first whose
// labels include want (-1 when none has them).
func bundleMetric(t *testing.T, base, name string, want map[string]string) float64 {
	t.Helper()
	resp, err := httpClient.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range families[name].GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if !containsAll(labels, want) {
			continue
		}
		if m.GetGauge() != nil {
			return m.GetGauge().GetValue()
		}
		return m.GetCounter().GetValue()
	}
	return -1
}

func containsAll(labels, want map[string]string) bool {
	for k, v := range want {
		if labels[k] != v {
			return false
		}
	}
	return true
}
