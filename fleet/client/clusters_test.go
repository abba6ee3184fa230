package client_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/upgradescope/upgradescope/fleet/client"
)

func TestClustersListsWhatTheServerHoldsAsItsWireTypes(t *testing.T) {
	fs := startFleet(t, "teams", "clean-is-ready")
	cs, err := connect(t, fs.url, readToken).Clusters(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	names := []string{}
	for _, c := range cs {
		names = append(names, c.Name)
	}
	slices.Sort(names)
	if strings.Join(names, ",") != "clean-is-ready,teams" {
		t.Fatalf("clusters %v, want clean-is-ready and teams", names)
	}
	for _, c := range cs {
		if c.ID < 1 || c.LatestSnapshotID < 1 || c.Bundles == nil || c.LastSeen.IsZero() {
			t.Errorf("%s: %+v: want an id, a snapshot, a bundles list and a last-seen time", c.Name, c)
		}
		if c.Name == "teams" && (c.DefaultTarget != "1.33" || c.Latest == nil || c.Latest.Verdict != "blocked") {
			t.Errorf("teams: default target %q, latest %+v; want 1.33, blocked", c.DefaultTarget, c.Latest)
		}
	}
}

// clusterID is the id of the cluster named name.
func clusterID(t *testing.T, c *client.Client, name string) int64 {
	t.Helper()
	cs, err := c.Clusters(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, cl := range cs {
		if cl.Name == name {
			return cl.ID
		}
	}
	t.Fatalf("no cluster %q in %+v", name, cs)
	return 0
}

func TestClusterReadsOneClustersDetail(t *testing.T) {
	fs := startFleet(t, "teams")
	c := connect(t, fs.url, readToken)
	d, err := c.Cluster(t.Context(), clusterID(t, c, "teams"))
	if err != nil {
		t.Fatal(err)
	}
	if d.Name != "teams" || !slices.Contains(d.Targets, "1.37") || len(d.Evaluations) == 0 || d.Snapshot == nil || d.Snapshot.KBVersion != "kb-test" {
		t.Errorf("detail %+v, snapshot %+v: want teams judged at 1.37 with its snapshot", d, d.Snapshot)
	}
}

// TestClusterCallsAnswerTheServersRefusalsAsErrors: each refusal is an *Error carrying the
// server's message and a hint, matching ErrNotFound and ErrConflict where they apply.
func TestClusterCallsAnswerTheServersRefusalsAsErrors(t *testing.T) {
	fs := startFleet(t, "teams", "clean-is-ready")
	labels := client.Labels{Server: "--server", CAFile: "--server-ca-file", Token: "--admin-token", TokenFile: "--admin-token-file"}
	admin := connect(t, fs.url, adminToken, client.WithLabels(labels))
	teams := clusterID(t, admin, "teams")
	for _, tt := range []struct {
		name  string
		call  func(c *client.Client) error
		token string
		is    error
		says  []string
	}{
		{name: "an unknown cluster", token: readToken, is: client.ErrNotFound,
			call: func(c *client.Client) error { _, err := c.Cluster(t.Context(), 9999); return err },
			says: []string{"GET " + fs.url + "/api/v1/clusters/9999: 404 Not Found: cluster not found"}},
		{name: "a rename to a name another cluster holds", token: adminToken, is: client.ErrConflict,
			call: func(c *client.Client) error {
				_, err := c.RenameCluster(t.Context(), teams, "clean-is-ready")
				return err
			},
			says: []string{"PATCH ", "409 Conflict"}},
		{name: "a delete of an unknown cluster", token: adminToken, is: client.ErrNotFound,
			call: func(c *client.Client) error { return c.DeleteCluster(t.Context(), 9999) },
			says: []string{"DELETE ", "404 Not Found"}},
		{name: "a read token deletes nothing", token: readToken,
			call: func(c *client.Client) error { return c.DeleteCluster(t.Context(), teams) },
			says: []string{"DELETE ", "(check --admin-token)"}},
		{name: "no token lists nothing", token: "",
			call: func(c *client.Client) error { _, err := c.Clusters(t.Context()); return err },
			says: []string{"GET ", "401 Unauthorized", "(no token was sent: give --admin-token or --admin-token-file)"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call(connect(t, fs.url, tt.token, client.WithLabels(labels)))
			var e *client.Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v, want an *client.Error", err)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("err = %v, want one matching %v", err, tt.is)
			}
			for _, s := range tt.says {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("err = %q, want it saying %q", err, s)
				}
			}
			if strings.Contains(err.Error(), adminToken) || strings.Contains(err.Error(), readToken) {
				t.Errorf("the error shows a token: %v", err)
			}
		})
	}
}

func TestRenameAndDeleteChangeTheFleet(t *testing.T) {
	fs := startFleet(t, "teams", "clean-is-ready")
	c := connect(t, fs.url, adminToken)
	id := clusterID(t, c, "teams")
	renamed, err := c.RenameCluster(t.Context(), id, "teams-eu")
	if err != nil || renamed.ID != id || renamed.Name != "teams-eu" {
		t.Fatalf("rename: %+v, %v; want cluster %d named teams-eu", renamed, err, id)
	}
	if err := c.DeleteCluster(t.Context(), id); err != nil {
		t.Fatalf("delete: %v", err)
	}
	cs, err := c.Clusters(t.Context())
	if err != nil || len(cs) != 1 || cs[0].Name != "clean-is-ready" {
		t.Errorf("after the delete: %+v, %v; want clean-is-ready alone", cs, err)
	}
	if err := c.DeleteCluster(t.Context(), id); !errors.Is(err, client.ErrNotFound) {
		t.Errorf("a second delete: %v, want ErrNotFound", err)
	}
}

// A 200 without a clusters list is no fleet server's (another service behind the URL): a
// real fleet server cannot answer one, so a handler of the test's plays that service. An
// empty list is a fleet with no cluster yet, and is read as one.
func TestClustersRefusesAnAnswerWithoutItsList(t *testing.T) {
	for _, tc := range []struct {
		body    string
		refused bool
	}{
		{`{"status":"ok"}`, true},
		{`{"clusters":null}`, true},
		{`{"clusters":[]}`, false},
	} {
		other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, tc.body)
		}))
		cs, err := connect(t, other.URL, readToken).Clusters(t.Context())
		other.Close()
		switch {
		case tc.refused && (err == nil || !strings.Contains(err.Error(), "the answer has no clusters list: is server URL an upgradescope server?")):
			t.Errorf("%s: err = %v, want one saying the answer has no clusters list", tc.body, err)
		case !tc.refused && (err != nil || cs == nil || len(cs) != 0):
			t.Errorf("%s: %#v, %v; want an empty list", tc.body, cs, err)
		}
	}
}
