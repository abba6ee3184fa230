package server_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/upgradescope/upgradescope/fleet/server"
)

func writeFile(t *testing.T, name, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestLoadTeamMap(t *testing.T) {
	for _, tc := range []struct {
		name, body, says string
	}{
		{"a list of patterns and teams loads", "- pattern: shop*\n  team: checkout\n", ""},
		{"the unattributed group is not a team", "- pattern: '*'\n  team: (unattributed)\n", "(unattributed)"},
		{"an entry without a team is refused", "- pattern: shop\n", "both required"},
		{"a malformed glob is refused", "- pattern: '['\n  team: x\n", "syntax error in pattern"},
		{"an unknown key is refused", "- pattern: shop\n  team: x\n  owner: y\n", "owner"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := server.LoadTeamMap(writeFile(t, "teams.yaml", tc.body))
			if tc.says == "" && err != nil || tc.says != "" && (err == nil || !strings.Contains(err.Error(), tc.says)) {
				t.Errorf("LoadTeamMap: %v, want an error saying %q", err, tc.says)
			}
		})
	}
}

func TestTheTeamMapOverridesNamespaceLabelsFirstMatchWins(t *testing.T) {
	tm, err := server.LoadTeamMap(writeFile(t, "teams.yaml", "- pattern: sh*\n  team: checkout\n- pattern: shop\n  team: never\n"))
	if err != nil {
		t.Fatal(err)
	}
	ts := newServer(t, func(c *server.Config) { c.IngestToken, c.TeamMap = "shared", tm })
	doc := teamsInventory(t)
	if r := ts.push("shared", envelope(t, "prod", doc)); r.status != 202 {
		t.Fatalf("push: %d %s", r.status, r.body)
	}
	teams := ts.get(fmt.Sprintf("/api/v1/clusters/%d/teams?target=1.33", ts.idOf("prod")), "").json(t)["teams"].(map[string]any)
	if teams["checkout"] == nil || teams["payments"] != nil || teams["never"] != nil {
		t.Errorf("teams %v: want shop's label payments replaced by checkout, the first match", teams)
	}
	if doc.Namespaces[0].Team != "payments" {
		t.Errorf("the team map changed the pushed document: %v", doc.Namespaces[0])
	}
}

func TestASnapshotWhoseEvaluationFailsIsKeptAndNeverCalledReady(t *testing.T) {
	eng := spinningEngine(t)
	ts := newServer(t, func(c *server.Config) { c.IngestToken, c.Engine = "shared", eng })
	r := ts.push("shared", envelope(t, "prod", teamsInventory(t)))
	if r.status != 202 || fmt.Sprint(r.json(t)["evaluated"]) != "[]" {
		t.Fatalf("push: %d %s, want 202 with nothing evaluated", r.status, r.body)
	}
	c := ts.get("/api/v1/clusters", "").json(t)["clusters"].([]any)[0].(map[string]any)
	if c["latest"] != nil || c["latestSnapshotId"].(float64) == 0 {
		t.Errorf("cluster %v: want the snapshot kept and no stored evaluation", c)
	}
	cell := ts.get("/api/v1/fleet", "").json(t)["clusters"].([]any)[0].(map[string]any)["cells"].(map[string]any)["1.33"]
	if cell != nil {
		t.Errorf("fleet cell %v, want null", cell)
	}
	if r := ts.get(fmt.Sprintf("/api/v1/clusters/%d/report", ts.idOf("prod")), ""); r.status != 500 || strings.Contains(string(r.body), "spin") {
		t.Errorf("a what-if that fails: %d %s, want 500 with the detail only in the log", r.status, r.body)
	}
}
