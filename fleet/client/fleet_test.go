package client_test

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/upgradescope/upgradescope/fleet/api"
	"github.com/upgradescope/upgradescope/fleet/client"
)

// getJSON is the server's own answer to GET path with token, decoded without the client's
// types: what the client reads is held to it.
func getJSON(t *testing.T, base, token, path string, out any) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s: %s", path, resp.Status, body)
	}
	if err := json.Unmarshal(body, out); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
}

// mintRead stores a read token scoped to teams and answers it, as tokens create --read does.
func mintRead(t *testing.T, fs fleetServer, teams ...string) string {
	t.Helper()
	tok := rand.Text()
	sum := sha256.Sum256([]byte(tok))
	if _, err := fs.store.CreateReadToken(t.Context(), teams, hex.EncodeToString(sum[:]), tok[:8]); err != nil {
		t.Fatal(err)
	}
	return tok
}

// rawCounts is a fleet answer's counts as the server wrote them.
type rawCounts struct {
	Counts map[string]any `json:"counts"`
}

func countsOf(c api.FleetCounts) map[string]any {
	return map[string]any{"target": c.Target, "clusters": float64(c.Clusters), "ready": float64(c.Ready), "blocked": float64(c.Blocked),
		"unknown": float64(c.Unknown), "alreadyThere": float64(c.AlreadyThere), "notEvaluated": float64(c.NotEvaluated)}
}

// At the server's clock teams (1.32) is blocked at its next minor, 1.33, and clean-is-ready
// is ready at its own.
func TestFleetReadsTheMatrixAndItsCountsAsTheServerWritesThem(t *testing.T) {
	fs := startFleet(t, "teams", "clean-is-ready")
	c := connect(t, fs.url, readToken)
	for _, target := range []string{"", "1.37"} {
		t.Run("at "+cmpOr(target, "each cluster's next minor"), func(t *testing.T) {
			f, err := c.Fleet(t.Context(), target)
			if err != nil {
				t.Fatal(err)
			}
			var raw rawCounts
			getJSON(t, fs.url, readToken, "/api/v1/fleet?target="+target, &raw)
			if got := countsOf(f.Counts); !mapsEqual(got, raw.Counts) {
				t.Errorf("counts %v, the server wrote %v", got, raw.Counts)
			}
			n := f.Counts
			if n.Clusters != 2 || n.Ready+n.Blocked+n.Unknown+n.AlreadyThere+n.NotEvaluated != 2 || n.Target != target {
				t.Errorf("counts %+v: want 2 clusters in five buckets at %q", n, target)
			}
			if len(f.Clusters) != 2 || f.Clusters[0].Name != "clean-is-ready" || f.Clusters[1].Name != "teams" {
				t.Errorf("clusters %+v: want clean-is-ready and teams, by name", f.Clusters)
			}
			if len(f.Bundles) == 0 || f.Bundles[0].Revision == "" || !slices.Contains(f.Targets, "1.37") || f.GeneratedAt.IsZero() {
				t.Errorf("fleet %+v: want the server's bundles with revisions, its targets and a time", f)
			}
		})
	}
	f, err := c.Fleet(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	if cell := f.Clusters[1].Cells["1.33"]; cell == nil || cell.Verdict != "blocked" || f.Counts.Blocked != 1 {
		t.Errorf("teams at 1.33: %+v, counts %+v; want it blocked and counted", cell, f.Counts)
	}
}

func TestFleetFindingsAreTheServersFindingsForTheSameQuery(t *testing.T) {
	fs := startFleet(t, "teams", "clean-is-ready")
	c := connect(t, fs.url, readToken)
	for _, tt := range []struct {
		name string
		q    client.FindingsQuery
		path string
		each func(api.FleetFinding) bool
	}{
		{"every finding at each cluster's next minor", client.FindingsQuery{}, "",
			func(api.FleetFinding) bool { return true }},
		{"blockers only", client.FindingsQuery{Severity: "blocker"}, "severity=blocker",
			func(f api.FleetFinding) bool { return f.Severity == "blocker" && f.ClustersBlocked > 0 }},
		{"one team's at 1.37", client.FindingsQuery{Target: "1.37", Team: "payments"}, "target=1.37&team=payments",
			func(f api.FleetFinding) bool { return slices.Contains(f.Teams, "payments") }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := c.FleetFindings(t.Context(), tt.q)
			if err != nil {
				t.Fatal(err)
			}
			var raw struct {
				Findings []struct{ Key string } `json:"findings"`
			}
			getJSON(t, fs.url, readToken, "/api/v1/fleet/findings?"+tt.path, &raw)
			var want, keys []string
			for _, f := range raw.Findings {
				want = append(want, f.Key)
			}
			for _, f := range got.Findings {
				keys = append(keys, f.Key)
				if !tt.each(f) {
					t.Errorf("%+v: not what %+v asks for", f, tt.q)
				}
			}
			if len(keys) == 0 || !slices.Equal(keys, want) {
				t.Errorf("keys %v, the server's %v", keys, want)
			}
			if got.Unreadable == nil || got.Counts.Clusters != 2 {
				t.Errorf("answer %+v: want an unreadable list and both clusters counted", got)
			}
		})
	}
}

// A read token scoped to a team reads its teams' clusters and findings only, through the
// same calls.
func TestAScopedReadTokenReadsOnlyItsTeamsFleet(t *testing.T) {
	fs := startFleet(t, "teams", "clean-is-ready")
	c := connect(t, fs.url, mintRead(t, fs, "payments"))
	f, err := c.Fleet(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Clusters) != 1 || f.Clusters[0].Name != "teams" || f.Counts.Clusters != 1 {
		t.Errorf("clusters %+v, counts %+v: want teams alone (clean-is-ready has no payments namespace)", f.Clusters, f.Counts)
	}
	ff, err := c.FleetFindings(t.Context(), client.FindingsQuery{})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range ff.Findings {
		for _, team := range x.Teams {
			if team != "payments" && team != "(unattributed)" {
				t.Errorf("%s: team %q is not the token's", x.Key, team)
			}
		}
	}
}

func TestFleetCallsAnswerRefusalsAsErrorsNamingTheTokenFlag(t *testing.T) {
	fs := startFleet(t, "teams")
	labels := client.Labels{Server: "--server", Token: "--read-token", TokenFile: "--read-token-file"}
	for _, tt := range []struct {
		name, token string
		call        func(c *client.Client) error
		says        []string
	}{
		{name: "a wrong token reads no fleet", token: "not-the-token",
			call: func(c *client.Client) error { _, err := c.Fleet(t.Context(), ""); return err },
			says: []string{"GET " + fs.url + "/api/v1/fleet", "401 Unauthorized", "(check --read-token)"}},
		{name: "no token reads no findings",
			call: func(c *client.Client) error {
				_, err := c.FleetFindings(t.Context(), client.FindingsQuery{})
				return err
			},
			says: []string{"401 Unauthorized", "give --read-token or --read-token-file"}},
		{name: "a target that is no minor", token: readToken,
			call: func(c *client.Client) error { _, err := c.Fleet(t.Context(), "next"); return err },
			says: []string{"422", `target "next": write a minor as 1.NN`}},
		{name: "a severity the findings have not", token: readToken,
			call: func(c *client.Client) error {
				_, err := c.FleetFindings(t.Context(), client.FindingsQuery{Severity: "info"})
				return err
			},
			says: []string{"422", "want blocker, warning or all"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call(connect(t, fs.url, tt.token, client.WithLabels(labels)))
			var e *client.Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v, want a *client.Error", err)
			}
			for _, s := range tt.says {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("err = %q, want it saying %q", err, s)
				}
			}
		})
	}
}

// A 200 from something that is not a fleet server is not read as an empty fleet.
func TestFleetCallsRefuseAnAnswerWithoutTheirList(t *testing.T) {
	url, _ := faultServer(t, fault{status: 200, body: `{}`})
	c := connect(t, url, readToken)
	if _, err := c.Fleet(t.Context(), ""); err == nil || !strings.Contains(err.Error(), "has no clusters list") {
		t.Errorf("Fleet: %v, want no clusters list", err)
	}
	if _, err := c.FleetFindings(t.Context(), client.FindingsQuery{}); err == nil || !strings.Contains(err.Error(), "has no findings list") {
		t.Errorf("FleetFindings: %v, want no findings list", err)
	}
	if _, err := c.Report(t.Context(), 1, ""); err == nil || !strings.Contains(err.Error(), "has no report") {
		t.Errorf("Report: %v, want no report", err)
	}
}

func cmpOr(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

func mapsEqual(a, b map[string]any) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
