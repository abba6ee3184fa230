package mcpserver_test

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/upgradescope/upgradescope/bundles"
	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/fleet/client"
	"github.com/upgradescope/upgradescope/fleet/push"
	"github.com/upgradescope/upgradescope/fleet/server"
	"github.com/upgradescope/upgradescope/fleet/server/store"
	"github.com/upgradescope/upgradescope/hack/corpus"
	"github.com/upgradescope/upgradescope/internal/testenv/bundletest"
	"github.com/upgradescope/upgradescope/internal/testenv/probetest"
	"github.com/upgradescope/upgradescope/inventory"
	"github.com/upgradescope/upgradescope/mcpserver"
)

// The fleet tools are tested against a real fleet server (server.New over a SQLite store,
// behind httptest on loopback) holding clusters an agent's client pushed, read with real
// tokens; every answer is held to the server's own JSON for the same query.

const (
	fleetReadToken   = "mcp-fleet-read-token"
	fleetIngestToken = "mcp-fleet-ingest-token"
)

// fleetClusters are the clusters the test fleet holds, by scenario: teams (1.32, teams
// payments and data) is blocked at 1.33 and 1.37; clean-is-ready and
// missing-capability-is-unknown name no version, so they are judged at --target 1.37 alone,
// ready and unknown; featuregates-live-kubelets-removed-at-target runs 1.36, so it is
// already at 1.35. At 1.35 no cluster is evaluated. Enough clusters that fleet_summary's
// first answer cannot hold them all.
var fleetClusters = map[string]string{
	"teams-a": "teams", "teams-b": "teams", "teams-c": "teams", "teams-d": "teams", "teams-e": "teams", "teams-f": "teams",
	"teams-g": "teams", "teams-h": "teams", "teams-i": "teams", "teams-j": "teams",
	"clean-a": "clean-is-ready", "clean-b": "clean-is-ready",
	"gap-a": "missing-capability-is-unknown", "gap-b": "missing-capability-is-unknown",
	"late-a": "featuregates-live-kubelets-removed-at-target",
}

// fleet is a running fleet server: its URL, its store (to mint scoped read tokens) and the
// key its dry runs verify candidates with.
type fleet struct {
	url        string
	store      store.Store
	privateKey string
}

// startFleet starts a fleet server judging at 1.37 besides each cluster's next minor, with
// a read and an ingest token and dry runs on, holding fleetClusters.
func startFleet(t *testing.T) fleet {
	t.Helper()
	return startFleetOf(t, fleetClusters)
}

// startFleetOf is startFleet holding clusters (name → scenario) instead.
func startFleetOf(t *testing.T, clusters map[string]string) fleet {
	t.Helper()
	f := serveFleet(t, time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	for name, scenario := range clusters {
		f.push(t, name, probetest.Scenario(t, repoRoot(t), scenario, builtinEngine(t).Observe().Probes))
	}
	return f
}

// serveFleet starts an empty fleet server on loopback at the clock now, judging at 1.37
// besides each cluster's next minor, with the read and ingest tokens and dry runs on.
func serveFleet(t *testing.T, now time.Time) fleet {
	t.Helper()
	st, err := store.OpenSQLite(t.Context(), filepath.Join(t.TempDir(), "fleet.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	private, public := bundletest.Keys(t, t.TempDir())
	vc, err := bundles.VerificationFromFile(public, "RS256")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Config{Store: st, Engine: builtinEngine(t), HostCheck: true, ReadToken: fleetReadToken,
		IngestToken: fleetIngestToken, Targets: []string{"1.37"}, Verification: vc,
		WithCandidate: func(ctx context.Context, c *bundles.Fetched) (*engine.Engine, error) {
			return engine.New(ctx, engine.WithBundle(c.Source, c.Bundle, c.Signature))
		},
		Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	return fleet{url: hs.URL, store: st, privateKey: private}
}

// push delivers doc as cluster name, as an agent pushes it.
func (f fleet) push(t *testing.T, name string, doc *inventory.Document) {
	t.Helper()
	agent, err := push.New(push.Options{URL: f.url, Token: func() (string, error) { return fleetIngestToken, nil },
		ClusterName: name, AgentVersion: "test", KBVersion: "kb-test"})
	if err != nil {
		t.Fatal(err)
	}
	if res, err := agent.Offer(t.Context(), doc); res != push.Delivered {
		t.Fatalf("push %s: %s: %v", name, res, err)
	}
}

// mintRead stores a read token scoped to teams, as tokens create --read does.
func (f fleet) mintRead(t *testing.T, teams ...string) string {
	t.Helper()
	tok := rand.Text()
	sum := sha256.Sum256([]byte(tok))
	if _, err := f.store.CreateReadToken(t.Context(), teams, hex.EncodeToString(sum[:]), tok[:8]); err != nil {
		t.Fatal(err)
	}
	return tok
}

// fleetServer is an MCP server reading f with token, its client's errors naming the
// command's flags; root is where it reads files.
func (f fleet) mcpServer(t *testing.T, root, token string) *mcpserver.Server {
	t.Helper()
	fc, err := client.New(f.url, client.WithToken(token), client.WithLabels(client.Labels{Server: "--server",
		CAFile: "--server-ca-file", Token: "--read-token", TokenFile: "--read-token-file"}))
	if err != nil {
		t.Fatal(err)
	}
	return newServer(t, root, func(c *mcpserver.Config) { c.Fleet = fc })
}

// get is the fleet server's own answer to GET path with token, decoded into out.
func (f fleet) get(t *testing.T, token, path string, out any) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, f.url+path, nil)
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

// pages calls tool with args, then with each answer's next until there is none, and
// answers every page. Each page is held within MaxAnswer by call.
func pages[Out any](t *testing.T, cs *mcp.ClientSession, tool string, args map[string]any, next func(Out) string) []Out {
	t.Helper()
	var out []Out
	for range 100 {
		a, _ := call[Out](t, cs, tool, args)
		out = append(out, a)
		if next(a) == "" {
			return out
		}
		args = map[string]any{"cursor": next(a)}
	}
	t.Fatalf("%s: still paging after 100 pages", tool)
	return nil
}

// serverFleet is GET /api/v1/fleet as the server writes it, decoded without the client's types.
type serverFleet struct {
	Counts   map[string]any `json:"counts"`
	Clusters []struct {
		Name string `json:"name"`
	} `json:"clusters"`
	Bundles []struct{ Name, Revision string } `json:"bundles"`
}

func TestFleetSummaryCountsTheClustersAsTheFleetAPIDoes(t *testing.T) {
	f := startFleet(t)
	for _, tr := range transports {
		cs := connect(t, f.mcpServer(t, t.TempDir(), fleetReadToken), tr)
		for _, target := range []string{"", "1.35", "1.37"} {
			t.Run(fmt.Sprintf("%s at %q", tr, target), func(t *testing.T) {
				var want serverFleet
				f.get(t, fleetReadToken, "/api/v1/fleet?target="+target, &want)
				answers := pages(t, cs, "fleet_summary", map[string]any{"target": target}, func(a mcpserver.FleetSummary) string { return a.Next })
				// At 1.35 no cluster has a blocker to name, and fifteen short lines fit.
				if len(answers) < 2 && target != "1.35" {
					t.Errorf("%d clusters in one answer: want the first answer to hold only some", len(answers[0].Clusters))
				}
				var names, judged []string
				for _, b := range want.Bundles {
					judged = append(judged, b.Name+" "+b.Revision)
				}
				tally := map[string]int{}
				last := -1
				for _, a := range answers {
					if got := countsMap(t, a.Counts); !equalMaps(got, want.Counts) {
						t.Errorf("counts %v, the server's %v", got, want.Counts)
					}
					if !slices.Equal(a.JudgedWith, judged) || len(judged) == 0 {
						t.Errorf("judgedWith %v, the server's bundles %v", a.JudgedWith, judged)
					}
					for _, l := range a.Clusters {
						names = append(names, l.Name)
						tally[l.Standing]++
						rank := slices.Index([]string{"blocked", "unknown", "not-evaluated", "ready", "already-there"}, l.Standing)
						if rank < last {
							t.Errorf("%s (%s) after a cluster standing worse: blocked and unknown come first", l.Name, l.Standing)
						}
						last = rank
						if l.Standing == "blocked" && (l.TopBlocker == "" || len(l.Teams) == 0 || l.Blockers == 0) {
							t.Errorf("%+v: a blocked cluster names its top blocker, its blockers and their teams", l)
						}
					}
				}
				var all []string
				for _, c := range want.Clusters {
					all = append(all, c.Name)
				}
				slices.Sort(names)
				if !slices.Equal(names, all) {
					t.Errorf("clusters %v, the server's %v", names, all)
				}
				// Each cluster's standing is the server's row standing: it must add up to the
				// server's counts.
				for standing, key := range map[string]string{"blocked": "blocked", "unknown": "unknown", "ready": "ready",
					"not-evaluated": "notEvaluated", "already-there": "alreadyThere"} {
					if float64(tally[standing]) != want.Counts[key] {
						t.Errorf("%d clusters %s, the server counts %v", tally[standing], standing, want.Counts[key])
					}
				}
			})
		}
	}
}

func TestFleetFindingsListsEachKeyTheFleetAPIDoes(t *testing.T) {
	f := startFleet(t)
	for _, tr := range transports {
		cs := connect(t, f.mcpServer(t, t.TempDir(), fleetReadToken), tr)
		for _, tt := range []struct {
			name  string
			args  map[string]any
			query string
		}{
			{"every finding at each cluster's next minor", map[string]any{}, ""},
			{"blockers at 1.37", map[string]any{"target": "1.37", "severity": "blocker"}, "target=1.37&severity=blocker"},
			{"one team's at 1.37", map[string]any{"team": "payments", "target": "1.37"}, "team=payments&target=1.37"},
			{"what no team owns", map[string]any{"team": "(unattributed)"}, "team=%28unattributed%29"},
		} {
			t.Run(string(tr)+": "+tt.name, func(t *testing.T) {
				var want struct {
					Counts   map[string]any `json:"counts"`
					Findings []struct {
						Key             string
						ClustersBlocked int
						Objects         int
					} `json:"findings"`
				}
				f.get(t, fleetReadToken, "/api/v1/fleet/findings?"+tt.query, &want)
				var keys, wantKeys []string
				for _, x := range want.Findings {
					wantKeys = append(wantKeys, fmt.Sprintf("%s blocks %d, %d objects", x.Key, x.ClustersBlocked, x.Objects))
				}
				for _, a := range pages(t, cs, "fleet_findings", tt.args, func(a mcpserver.FleetFindingsAnswer) string { return a.Next }) {
					if a.Total != len(want.Findings) || len(a.JudgedWith) == 0 || len(a.Unreadable) != 0 {
						t.Errorf("total %d, judgedWith %v, unreadable %v: want %d findings judged with the server's bundles, all read",
							a.Total, a.JudgedWith, a.Unreadable, len(want.Findings))
					}
					if got := countsMap(t, a.Counts); !equalMaps(got, want.Counts) {
						t.Errorf("counts %v, the server's %v", got, want.Counts)
					}
					for _, x := range a.Findings {
						keys = append(keys, fmt.Sprintf("%s blocks %d, %d objects", x.Key, x.ClustersBlocked, x.Objects))
					}
				}
				if len(keys) == 0 || !slices.Equal(keys, wantKeys) {
					t.Errorf("findings\n%s\nthe server's\n%s", strings.Join(keys, "\n"), strings.Join(wantKeys, "\n"))
				}
			})
		}
	}
}

func TestListFindingsOfAFleetClusterPagesTheServersReport(t *testing.T) {
	f := startFleet(t)
	var clusters struct {
		Clusters []struct {
			ID   int64
			Name string
		} `json:"clusters"`
	}
	f.get(t, fleetReadToken, "/api/v1/clusters", &clusters)
	i := slices.IndexFunc(clusters.Clusters, func(c struct {
		ID   int64
		Name string
	}) bool {
		return c.Name == "teams-a"
	})
	id := clusters.Clusters[i].ID
	for _, tr := range transports {
		cs := connect(t, f.mcpServer(t, t.TempDir(), fleetReadToken), tr)
		for _, target := range []string{"", "1.37"} {
			t.Run(fmt.Sprintf("%s at %q", tr, target), func(t *testing.T) {
				var want struct {
					SnapshotID int64 `json:"snapshotId"`
					Report     struct {
						Targets []struct {
							Findings []struct{ Target, Key, Severity string }
						}
					}
				}
				f.get(t, fleetReadToken, fmt.Sprintf("/api/v1/clusters/%d/report?target=%s", id, target), &want)
				var keys, wantKeys []string
				for _, x := range want.Report.Targets[0].Findings {
					wantKeys = append(wantKeys, x.Target+" "+x.Key+" "+x.Severity)
				}
				answers := pages(t, cs, "list_findings", map[string]any{"cluster": "teams-a", "target": target},
					func(a mcpserver.FindingsAnswer) string { return a.Next })
				for _, a := range answers {
					if !strings.HasPrefix(a.Source, fmt.Sprintf("fleet cluster teams-a (snapshot %d, evaluated at 2026-11-30T12:00:00Z", want.SnapshotID)) ||
						len(a.JudgedWith) == 0 {
						t.Errorf("source %q, judgedWith %v: want the cluster, its snapshot and when it was judged, and the bundles", a.Source, a.JudgedWith)
					}
					for _, x := range a.Findings {
						keys = append(keys, x.Target+" "+x.Key+" "+x.Severity)
					}
				}
				if len(keys) == 0 || !slices.Equal(keys, wantKeys) {
					t.Errorf("findings\n%s\nthe server's report\n%s", strings.Join(keys, "\n"), strings.Join(wantKeys, "\n"))
				}
			})
		}
	}
}

// A read token scoped to a team sees, through every fleet tool, the clusters where the team
// owns a namespace and the findings of its objects and of those no team owns.
func TestAScopedReadTokenSeesOnlyItsTeamsThroughTheFleetTools(t *testing.T) {
	f := startFleet(t)
	token := f.mintRead(t, "payments")
	var scoped, whole serverFleet
	f.get(t, token, "/api/v1/fleet", &scoped)
	f.get(t, fleetReadToken, "/api/v1/fleet", &whole)
	if len(scoped.Clusters) == 0 || len(scoped.Clusters) >= len(whole.Clusters) {
		t.Fatalf("the scoped token sees %d of %d clusters: the test needs some and not all", len(scoped.Clusters), len(whole.Clusters))
	}
	own := func(teams []string) bool {
		return !slices.ContainsFunc(teams, func(team string) bool { return team != "payments" && team != "(unattributed)" })
	}
	for _, tr := range transports {
		t.Run(string(tr), func(t *testing.T) {
			cs := connect(t, f.mcpServer(t, t.TempDir(), token), tr)
			var names []string
			for _, a := range pages(t, cs, "fleet_summary", map[string]any{}, func(a mcpserver.FleetSummary) string { return a.Next }) {
				if got := countsMap(t, a.Counts); !equalMaps(got, scoped.Counts) {
					t.Errorf("counts %v, the server's for the token %v", got, scoped.Counts)
				}
				for _, l := range a.Clusters {
					names = append(names, l.Name)
					if !own(l.Teams) {
						t.Errorf("%s: teams %v, not only the token's", l.Name, l.Teams)
					}
				}
			}
			if len(names) != len(scoped.Clusters) {
				t.Errorf("fleet_summary lists %v, the token sees %d clusters", names, len(scoped.Clusters))
			}
			var teams []string
			for _, a := range pages(t, cs, "fleet_findings", map[string]any{"target": "1.37"}, func(a mcpserver.FleetFindingsAnswer) string { return a.Next }) {
				for _, x := range a.Findings {
					teams = append(teams, x.Teams...)
				}
			}
			if len(teams) == 0 || !own(teams) {
				t.Errorf("fleet_findings' teams %v: want the token's and (unattributed) only", teams)
			}
			teams = nil
			for _, a := range pages(t, cs, "list_findings", map[string]any{"cluster": "teams-a"}, func(a mcpserver.FindingsAnswer) string { return a.Next }) {
				for _, x := range a.Findings {
					teams = append(teams, x.Teams...)
				}
			}
			if len(teams) == 0 || !own(teams) {
				t.Errorf("list_findings {cluster}'s teams %v: want the token's and (unattributed) only", teams)
			}
			if msg := callError(t, cs, "list_findings", map[string]any{"cluster": "clean-a"}); !strings.Contains(msg, `no fleet cluster named "clean-a" that the read token sees`) {
				t.Errorf("a cluster out of the token's teams: %q", msg)
			}
		})
	}
}

func TestAWrongReadTokenIsAToolErrorNamingTheFlag(t *testing.T) {
	f := startFleet(t)
	root := t.TempDir()
	writeCandidate(t, root, "candidate.tar.gz", f.privateKey)
	for _, tr := range transports {
		cs := connect(t, f.mcpServer(t, root, "not-the-read-token"), tr)
		for tool, args := range map[string]map[string]any{
			"fleet_summary": {}, "fleet_findings": {}, "list_findings": {"cluster": "teams-a"},
			"dry_run_bundle": {"bundle": "candidate.tar.gz"},
		} {
			t.Run(string(tr)+": "+tool, func(t *testing.T) {
				msg := callError(t, cs, tool, args)
				if !strings.Contains(msg, "401 Unauthorized") || !strings.Contains(msg, "check --read-token") ||
					strings.Contains(msg, "not-the-read-token") {
					t.Errorf("%s: %q: want the server's 401 and the flag to check, without the token", tool, msg)
				}
			})
		}
	}
}

func TestWithoutAServerTheFleetToolsSayHowToStartOne(t *testing.T) {
	for _, tr := range transports {
		cs := connect(t, newServer(t, t.TempDir()), tr)
		for tool, args := range map[string]map[string]any{
			"fleet_summary": {}, "fleet_findings": {}, "list_findings": {"cluster": "prod"}, "dry_run_bundle": {"bundle": "c.tar.gz"},
		} {
			t.Run(string(tr)+": "+tool, func(t *testing.T) {
				if msg := callError(t, cs, tool, args); !strings.Contains(msg, "--server URL and --read-token-file FILE") {
					t.Errorf("%s: %q: want how to start with a fleet server", tool, msg)
				}
			})
		}
	}
}

func TestFleetToolsRefuseATargetThatIsNoMinor(t *testing.T) {
	f := startFleet(t)
	cs := connect(t, f.mcpServer(t, t.TempDir(), fleetReadToken), pipes)
	for _, tool := range []string{"fleet_summary", "fleet_findings"} {
		if msg := callError(t, cs, tool, map[string]any{"target": "next"}); !strings.Contains(msg, `target: invalid Kubernetes version "next"`) {
			t.Errorf("%s: %q: want the target refused", tool, msg)
		}
	}
}

// countsMap is counts as JSON numbers, to compare with the server's answer.
func countsMap(t *testing.T, counts any) map[string]any {
	t.Helper()
	b, err := json.Marshal(counts)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func equalMaps(a, b map[string]any) bool {
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

// The fleet is read again for each page: a push between two pages moves what the next page
// would hold, so the next page is refused rather than skipping or repeating what moved.
func TestAPushBetweenPagesIsAToolErrorNotASkip(t *testing.T) {
	f := startFleet(t)
	// A cluster of the fleet bench's corpus has findings enough for two pages of them.
	f.push(t, "corpus-a", corpus.Cluster(40, 1))
	cs := connect(t, f.mcpServer(t, t.TempDir(), fleetReadToken), pipes)
	teams := func() *inventory.Document {
		return probetest.Scenario(t, repoRoot(t), "teams", builtinEngine(t).Observe().Probes)
	}
	for _, tt := range []struct {
		tool string
		args map[string]any
		push func()
	}{
		{"fleet_summary", map[string]any{"target": "1.37"}, func() { f.push(t, "teams-new", teams()) }},
		{"fleet_findings", map[string]any{}, func() { f.push(t, "teams-newer", teams()) }},
		{"list_findings", map[string]any{"cluster": "corpus-a"}, func() {
			doc := corpus.Cluster(40, 1)
			doc.HelmReleases = doc.HelmReleases[len(doc.HelmReleases)/2:] // half its releases uninstalled
			f.push(t, "corpus-a", doc)
		}},
	} {
		t.Run(tt.tool, func(t *testing.T) {
			first, _ := call[struct{ Next string }](t, cs, tt.tool, tt.args)
			if first.Next == "" {
				t.Fatalf("%s %v answers in one page: the test needs two", tt.tool, tt.args)
			}
			call[struct{ Next string }](t, cs, tt.tool, map[string]any{"cursor": first.Next}) // nothing pushed yet: the next page reads
			tt.push()
			if msg := callError(t, cs, tt.tool, map[string]any{"cursor": first.Next}); !strings.Contains(msg,
				"the fleet changed since the first page (a push or a re-evaluation): ask again without cursor") {
				t.Errorf("the next page after a push: %q, want it refused as the fleet changed", msg)
			}
			call[struct{ Next string }](t, cs, tt.tool, tt.args) // asked again, it reads
		})
	}
	t.Run("explain_finding", func(t *testing.T) {
		// The finding of corpus-a naming the most objects (its nodes) pages them; nodes
		// replaced by others change them.
		var most mcpserver.FindingLine
		for _, p := range pages(t, cs, "list_findings", map[string]any{"cluster": "corpus-a"}, func(a mcpserver.FindingsAnswer) string { return a.Next }) {
			for _, l := range p.Findings {
				if l.Objects > most.Objects {
					most = l
				}
			}
		}
		args := map[string]any{"cluster": "corpus-a", "key": most.Key, "target": most.Target}
		first, _ := call[mcpserver.ExplainAnswer](t, cs, "explain_finding", args)
		if first.Next == "" {
			t.Fatalf("%s's %d objects fit one page: the test needs two", most.Key, most.Objects)
		}
		call[mcpserver.ExplainAnswer](t, cs, "explain_finding", map[string]any{"cursor": first.Next})
		doc := corpus.Cluster(40, 1)
		for _, g := range doc.Nodes {
			for i := range g.Names {
				g.Names[i] = "replaced-" + g.Names[i]
			}
		}
		f.push(t, "corpus-a", doc)
		if msg := callError(t, cs, "explain_finding", map[string]any{"cursor": first.Next}); !strings.Contains(msg, "the fleet changed since the first page") {
			t.Errorf("the next page of %s's objects after a push: %q, want it refused as the fleet changed", most.Key, msg)
		}
	})
}

// A cluster the server cannot judge at the target asked (none: its version is unknown; one
// it runs already) is refused in the tool's words, naming the targets to give instead.
func TestAClusterReportRefusedAtATargetSaysWhichTargetToGive(t *testing.T) {
	f := startFleet(t)
	cs := connect(t, f.mcpServer(t, t.TempDir(), fleetReadToken), pipes)
	for _, tt := range []struct {
		name, tool string
		args       map[string]any
		says       []string
	}{
		{"a cluster of no known version at its next minor", "list_findings", map[string]any{"cluster": "gap-a"},
			[]string{"fleet cluster gap-a has no next minor: its agent reported no Kubernetes version", `"target": "1.37" (the fleet judges it at 1.37)`}},
		{"the same, explained", "explain_finding", map[string]any{"cluster": "gap-a", "key": "removed-api/extensions/v1beta1/Ingress"},
			[]string{"fleet cluster gap-a has no next minor", `"target": "1.37"`}},
		{"a cluster at a minor it runs already", "list_findings", map[string]any{"cluster": "late-a", "target": "1.35"},
			[]string{"fleet cluster late-a runs 1.36: 1.35 is no later minor", `"target": "1.37" (the fleet judges it at 1.37)`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			msg := callError(t, cs, tt.tool, tt.args)
			for _, s := range tt.says {
				if !strings.Contains(msg, s) {
					t.Errorf("%s %v: %q, want it saying %q", tt.tool, tt.args, msg, s)
				}
			}
			if strings.Contains(msg, "?target") || strings.Contains(msg, "422") {
				t.Errorf("%s %v: %q names the server's query parameter, not the tool's input", tt.tool, tt.args, msg)
			}
		})
	}
}

// A blocked cluster's line names its top blocker by key too, for explain_finding to read.
func TestAFleetClustersTopBlockerKeyIsOneExplainFindingReads(t *testing.T) {
	f := startFleet(t)
	cs := connect(t, f.mcpServer(t, t.TempDir(), fleetReadToken), pipes)
	a, _ := call[mcpserver.FleetSummary](t, cs, "fleet_summary", map[string]any{"target": "1.37"})
	l := a.Clusters[0]
	if l.Standing != "blocked" || l.TopBlockerKey == "" {
		t.Fatalf("the first cluster %+v: want a blocked one naming its top blocker's key", l)
	}
	e, _ := call[mcpserver.ExplainAnswer](t, cs, "explain_finding", map[string]any{"cluster": l.Name, "target": l.Target, "key": l.TopBlockerKey})
	if e.Key != l.TopBlockerKey || e.Title != l.TopBlocker || e.Severity != "blocker" {
		t.Errorf("explain_finding answers %s %q (%s), want the top blocker %s %q", e.Key, e.Title, e.Severity, l.TopBlockerKey, l.TopBlocker)
	}
}
