package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/upgradescope/upgradescope/crd"
	"github.com/upgradescope/upgradescope/internal/testenv/browsertest"
	"github.com/upgradescope/upgradescope/internal/testenv/kubetest"
)

// The agent binary against the real API server pushes to a real serve: the fleet shows the
// cluster with the verdict and score the agent wrote into its ClusterReadiness, an unchanged
// inventory pushed again is a duplicate, and a changed cluster is a new history point.
func TestServeEndToEndWithTheAgentOnARealAPIServer(t *testing.T) {
	kubeconfig := kubetest.Kubeconfig(t, kubetest.EnvServer)
	cfg := kubetest.Config(t, kubetest.EnvServer, "admin")
	objects := dynamic.NewForConfigOrDie(cfg).Resource(crd.GVR)
	core := kubernetes.NewForConfigOrDie(cfg).CoreV1().Namespaces()
	ctx := context.Background()
	// A namespace takes a while to go after a delete: each run names its own.
	crName, nsName := "serve-e2e", fmt.Sprintf("serve-e2e-%d", time.Now().UnixNano())
	_ = objects.Delete(ctx, crName, metav1.DeleteOptions{})
	t.Cleanup(func() {
		_ = objects.Delete(ctx, crName, metav1.DeleteOptions{})
		_ = core.Delete(ctx, nsName, metav1.DeleteOptions{})
	})

	dir := t.TempDir()
	db := filepath.Join(dir, "fleet.db")
	tokenFile := writeSecret(t, dir, "token", mintIngestToken(t, "e2e", "--db", db))
	p := startServe(t, "--db", db)
	// Every tick pushes (a forced sync each second), so an unchanged tick is a duplicate,
	// whether its pod images are listed or reused from the last pod pass (the default, every
	// third tick).
	startAgent(t, kubeconfig, "--cr-name", crName, "--server", p.url, "--ingest-token-file", tokenFile,
		"--cluster-name", "e2e", "--force-sync-every", "1s")

	cr := waitForStatus(t, objects, crName, 1)
	want := cr.Status.Targets[0]
	// The agent judged its next minor, as the server does by default; asking for that column
	// keeps the check independent of the default columns (see gaps below).
	first := waitForCell(t, p.url, "?targets="+want.Target, want.Target, 0)
	if got, w := fmt.Sprintf("%s/%d", first.Verdict, first.Score), fmt.Sprintf("%s/%d", want.Verdict, want.Score); got != w {
		t.Errorf("fleet cell at %s = %s, the agent's ClusterReadiness says %s", want.Target, got, w)
	}

	// What one agent pushed is on the dashboard's fleet page, in a real browser: at the
	// agent's target its row's verdict says the verdict and score.
	t.Run("the dashboard's fleet page shows the cluster the agent pushed", func(t *testing.T) {
		browsertest.Paths(t)
		page := browsertest.Start(t, p.url).Open(browsertest.Desktop)
		page.Goto("/?target="+want.Target, `tr[data-cluster="e2e"]`)
		cell := page.TextContent(`tr[data-cluster="e2e"] td[data-label="Verdict"]`)
		if !strings.Contains(cell, want.Verdict) || !strings.Contains(cell, strconv.Itoa(want.Score)) {
			t.Errorf("the fleet page's verdict at %s reads %q, want the agent's %s %d", want.Target, cell, want.Verdict, want.Score)
		}
	})

	// Other packages' tests share this API server and change it now and then, so only some
	// pushes are duplicates; TestAPodPassEveryThreeCollectionsAndAChartChangeForcesOne
	// shows a pod pass and the ticks reusing its images give the same inventory.
	if !pollUntil(30*time.Second, 250*time.Millisecond, func() bool { return ingested(t, p.url, "duplicate") >= 1 }) {
		t.Errorf("no push of the unchanged inventory was answered as a duplicate (accepted %d)", ingested(t, p.url, "accepted"))
	}

	before := historyLen(t, p.url, first.clusterID, want.Target)
	labelled := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: nsName, Labels: map[string]string{"team": "e2e"}}}
	if _, err := core.Create(ctx, labelled, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// A changed inventory is a new snapshot, evaluated: the cell moves to it.
	waitForCell(t, p.url, "?targets="+want.Target, want.Target, first.SnapshotID)

	if !pollUntil(30*time.Second, 250*time.Millisecond, func() bool { return historyLen(t, p.url, first.clusterID, want.Target) > before }) {
		t.Errorf("history at %s still has %d points after a namespace was added", want.Target, before)
	}
	if cell := fleetCell(t, p.url, "", want.Target); cell == nil {
		t.Errorf("GET /api/v1/fleet has no default column %s for e2e, the cluster's next minor", want.Target)
	}
}

// e2eCell is one fleet cell of cluster e2e.
type e2eCell struct {
	clusterID  int64
	Verdict    string `json:"verdict"`
	Score      int    `json:"score"`
	SnapshotID int64  `json:"snapshotId"`
}

// fleetCell is cluster e2e's cell at target in GET /api/v1/fleet+query, nil when none.
func fleetCell(t *testing.T, base, query, target string) *e2eCell {
	t.Helper()
	var fleet struct {
		Clusters []struct {
			ClusterID int64               `json:"clusterId"`
			Name      string              `json:"name"`
			Cells     map[string]*e2eCell `json:"cells"`
		} `json:"clusters"`
	}
	if getJSON(t, base, "/api/v1/fleet"+query, "", &fleet) != http.StatusOK {
		return nil
	}
	for _, c := range fleet.Clusters {
		if cell := c.Cells[target]; c.Name == "e2e" && cell != nil {
			cell.clusterID = c.ClusterID
			return cell
		}
	}
	return nil
}

// waitForCell waits until cluster e2e has a cell at target for a snapshot other than notSnap.
func waitForCell(t *testing.T, base, query, target string, notSnap int64) *e2eCell {
	t.Helper()
	var cell *e2eCell
	if !pollUntil(60*time.Second, 250*time.Millisecond, func() bool {
		cell = fleetCell(t, base, query, target)
		return cell != nil && cell.SnapshotID != notSnap
	}) {
		t.Fatalf("the fleet never showed cluster e2e with a cell at %s for a snapshot other than %d", target, notSnap)
	}
	return cell
}

// historyLen is the number of points of cluster id's history at target.
func historyLen(t *testing.T, base string, id int64, target string) int {
	t.Helper()
	var h struct {
		History []struct {
			SnapshotID int64 `json:"snapshotId"`
		} `json:"history"`
	}
	if code := getJSON(t, base, fmt.Sprintf("/api/v1/clusters/%d/history?target=%s", id, target), "", &h); code != http.StatusOK {
		t.Fatalf("history of cluster %d: %d", id, code)
	}
	return len(h.History)
}

// ingested reads upgradescope_ingest_total{result=...} from /metrics.
func ingested(t *testing.T, base, result string) int {
	t.Helper()
	resp, err := httpClient.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	text, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	m := regexp.MustCompile(`(?m)^upgradescope_ingest_total\{result="` + regexp.QuoteMeta(result) + `"\} (\d+)`).FindSubmatch(text)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(string(m[1]))
	return n
}
