package main

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/fleet/server"
	"github.com/upgradescope/upgradescope/fleet/server/store"
	"github.com/upgradescope/upgradescope/internal/testenv/pgtest"
)

// clustersEngine is built once: loading the built-in bundles is the slow part of a server.
var clustersEngine = sync.OnceValues(func() (*engine.Engine, error) {
	return engine.New(context.Background(), engine.WithToolVersion("test"))
})

const (
	testAdminToken = "admin-secret-token"
	testReadToken  = "read-secret-token"
	// seedTarget is where the seeded clusters (at 1.30) were evaluated: their next minor.
	seedTarget = "1.31"
)

// fleet is a seeded fleet database, and the flags that reach it: the database itself, or a
// server on it.
type fleet struct {
	st store.Store
	// db names the database for tokens list; via names the backend for clusters commands,
	// admin the admin token's flags (nil on the database).
	db, via, admin []string
	srv            *httptest.Server
}

// sqliteFleet is two seeded clusters in a fresh SQLite file, reached with --db.
func sqliteFleet(t *testing.T) *fleet {
	t.Helper()
	db := tokensDB(t)
	st, err := store.OpenSQLite(t.Context(), db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	seedFleet(t, st)
	args := []string{"--db", db}
	return &fleet{st: st, db: args, via: args}
}

// postgresFleet is sqliteFleet on a PostgreSQL database of the test's own, reached with
// --db-url; skipped without one.
func postgresFleet(t *testing.T) *fleet {
	t.Helper()
	url := pgtest.URL(t)
	t.Setenv(envDBURL, "")
	st, err := store.Open(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	seedFleet(t, st)
	args := []string{"--db-url", url}
	return &fleet{st: st, db: args, via: args}
}

// servedFleet is sqliteFleet behind a real server with an admin token, reached with
// --server and --admin-token-file; edit adjusts the server's Config. Reads are open (no
// read token), as on a loopback server before the first read token is minted.
func servedFleet(t *testing.T, edit func(*server.Config)) *fleet {
	t.Helper()
	f := sqliteFleet(t)
	eng, err := clustersEngine()
	if err != nil {
		t.Fatal(err)
	}
	// Hours ahead, so every seeded cluster is stale: the column shows what the server said.
	cfg := server.Config{Store: f.st, Engine: eng, HostCheck: true, AdminToken: testAdminToken,
		Now: func() time.Time { return time.Now().Add(5 * time.Hour) }}
	if edit != nil {
		edit(&cfg)
	}
	srv, err := server.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	f.srv = httptest.NewServer(srv.Handler())
	t.Cleanup(f.srv.Close)
	f.via = []string{"--server", f.srv.URL}
	f.admin = []string{"--admin-token-file", write(t, t.TempDir(), "admin.token", testAdminToken+"\n")}
	return f
}

// seedFleet stores prod-eu-1 (id 1) and staging (id 2), each with a snapshot, an evaluation
// at seedTarget and an ingest token.
func seedFleet(t *testing.T, st store.Store) {
	t.Helper()
	for _, name := range []string{"prod-eu-1", "staging"} {
		in := store.Ingest{ClusterName: name, ClusterUID: "uid-" + name, Hash: "hash-" + name,
			AgentVersion: "test", KBVersion: "kb-test", ServerVersion: "v1.30.4", Inventory: []byte("gzip"),
			Evaluations: []store.Evaluation{{Target: seedTarget, Verdict: "ready", Score: 100,
				EvaluatedAt: time.Now().UTC(), Bundles: []store.Bundle{{Name: "core", Revision: "r1"}},
				BundlesKey: "core@r1", Report: []byte("{}")}}}
		if _, err := st.Ingest(t.Context(), in); err != nil {
			t.Fatal(err)
		}
		if _, err := st.CreateIngestToken(t.Context(), name, sha256Hex("token-"+name), "token-"+name[:2]); err != nil {
			t.Fatal(err)
		}
	}
}

const seeded = "1 prod-eu-1 uid-prod-eu-1 history=1 | 2 staging uid-staging history=1 | tokens prod-eu-1,staging"

// clusters runs clusters verb args on the fleet's backend, with the admin token for
// delete and rename through a server.
func (f *fleet) clusters(t *testing.T, verb string, args ...string) result {
	t.Helper()
	all := append([]string{"clusters", verb}, args...)
	all = append(all, f.via...)
	if verb != "list" {
		all = append(all, f.admin...)
	}
	return runCLI(t, all...)
}

// state is the fleet as the store and tokens list see it: each cluster with its UID and
// the evaluations it keeps at seedTarget, any snapshot left of a cluster no longer listed,
// then the clusters the ingest tokens push as.
func (f *fleet) state(t *testing.T) string {
	t.Helper()
	cs, err := f.st.Clusters(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var parts []string
	listed := map[int64]bool{}
	for _, c := range cs {
		h, err := f.st.History(t.Context(), c.ID, seedTarget, 0)
		if err != nil {
			t.Fatal(err)
		}
		listed[c.ID] = true
		parts = append(parts, fmt.Sprintf("%d %s %s history=%d", c.ID, c.Name, c.UID, len(h)))
	}
	for _, id := range []int64{1, 2} {
		if _, err := f.st.LatestSnapshot(t.Context(), id); !listed[id] && !errors.Is(err, store.ErrNotFound) {
			parts = append(parts, fmt.Sprintf("cluster %d's snapshot left (%v)", id, err))
		}
	}
	r := runCLI(t, append([]string{"tokens", "list", "-o", "json"}, f.db...)...)
	var toks []tokenJSON
	if err := json.Unmarshal([]byte(r.stdout), &toks); r.code != 0 || err != nil {
		t.Fatalf("tokens list: code %d, %v, stderr %q", r.code, err, r.stderr)
	}
	var names []string
	for _, tok := range toks {
		names = append(names, tok.Cluster)
	}
	return strings.Join(append(parts, "tokens "+strings.Join(names, ",")), " | ")
}

var clusterBackends = []struct {
	name string
	open func(t *testing.T) *fleet
}{
	{name: "on SQLite", open: sqliteFleet},
	{name: "on PostgreSQL", open: postgresFleet},
	{name: "through a server", open: func(t *testing.T) *fleet { return servedFleet(t, nil) }},
}

func TestClustersDeleteAndRenameChangeTheFleetOnEveryBackend(t *testing.T) {
	tests := []struct {
		name   string
		verb   string
		args   []string
		code   int
		stderr string
		state  string
	}{
		{name: "delete by id removes the cluster, its history and its tokens", verb: "delete", args: []string{"1"},
			stderr: `deleted cluster "prod-eu-1" (id 1) with its snapshots, evaluations and ingest tokens`,
			state:  "2 staging uid-staging history=1 | tokens staging"},
		{name: "delete by name removes that cluster", verb: "delete", args: []string{"staging"},
			stderr: `deleted cluster "staging" (id 2)`,
			state:  "1 prod-eu-1 uid-prod-eu-1 history=1 | tokens prod-eu-1"},
		{name: "delete of an unknown cluster fails naming it", verb: "delete", args: []string{"nope"}, code: 1,
			stderr: `cluster "nope" not found`, state: seeded},
		{name: "delete of an unknown id fails naming it", verb: "delete", args: []string{"99"}, code: 1,
			stderr: `cluster "99" not found`, state: seeded},
		{name: "rename by name keeps the UID and history and moves the tokens", verb: "rename", args: []string{"prod-eu-1", "prod-eu-west-1"},
			stderr: `renamed cluster "prod-eu-1" (id 1) to "prod-eu-west-1"`,
			state:  "1 prod-eu-west-1 uid-prod-eu-1 history=1 | 2 staging uid-staging history=1 | tokens prod-eu-west-1,staging"},
		{name: "rename by id renames that cluster", verb: "rename", args: []string{"2", "stage.eu"},
			stderr: `renamed cluster "staging" (id 2) to "stage.eu"`,
			state:  "1 prod-eu-1 uid-prod-eu-1 history=1 | 2 stage.eu uid-staging history=1 | tokens prod-eu-1,stage.eu"},
		{name: "rename to a taken name fails naming it", verb: "rename", args: []string{"1", "staging"}, code: 1,
			stderr: `rename cluster "1" to "staging": another cluster is named "staging"`, state: seeded},
		{name: "rename to an invalid name is refused", verb: "rename", args: []string{"prod-eu-1", "Prod_1"}, code: 1,
			stderr: `"Prod_1" is not an RFC 1123 subdomain`, state: seeded},
		{name: "rename of an unknown cluster fails naming it", verb: "rename", args: []string{"nope", "other"}, code: 1,
			stderr: `cluster "nope" not found`, state: seeded},
	}
	for _, b := range clusterBackends {
		t.Run(b.name, func(t *testing.T) {
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					f := b.open(t)
					r := f.clusters(t, tt.verb, tt.args...)
					if r.code != tt.code || r.stdout != "" || !strings.Contains(r.stderr, tt.stderr) {
						t.Errorf("code %d (want %d), stdout %q (want none), stderr %q (want %q)", r.code, tt.code, r.stdout, r.stderr, tt.stderr)
					}
					if got := f.state(t); got != tt.state {
						t.Errorf("afterwards:\n got %s\nwant %s", got, tt.state)
					}
				})
			}
		})
	}
}

func TestClustersListShowsEveryClusterOnEveryBackend(t *testing.T) {
	for _, b := range clusterBackends {
		t.Run(b.name, func(t *testing.T) {
			f := b.open(t)
			// Through a server, staleness is the server's word; the database has none.
			stale, staleJSON := "-", "absent"
			if f.srv != nil {
				stale, staleJSON = "true", "true"
			}
			r := f.clusters(t, "list")
			if r.code != 0 || r.stderr != "" {
				t.Fatalf("list: code %d, stderr %q", r.code, r.stderr)
			}
			var rows []string
			for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
				fields := strings.Fields(line)
				if len(fields) != 6 && !strings.HasPrefix(line, "ID") {
					t.Fatalf("want six columns: %q", line)
				}
				if !strings.HasPrefix(line, "ID") {
					if _, err := time.Parse(time.RFC3339, fields[4]); err != nil {
						t.Errorf("LAST SEEN %q is not RFC 3339", fields[4])
					}
					fields = append(fields[:4], fields[5])
				}
				rows = append(rows, strings.Join(fields, " "))
			}
			want := []string{
				"ID NAME UID SERVER VERSION LAST SEEN STALE",
				"1 prod-eu-1 uid-prod-eu-1 v1.30.4 " + stale,
				"2 staging uid-staging v1.30.4 " + stale,
			}
			if strings.Join(rows, "\n") != strings.Join(want, "\n") {
				t.Errorf("list:\n%s\nwant (LAST SEEN left out):\n%s", strings.Join(rows, "\n"), strings.Join(want, "\n"))
			}

			r = f.clusters(t, "list", "-o", "json")
			var got []clusterListing
			if err := json.Unmarshal([]byte(r.stdout), &got); r.code != 0 || err != nil {
				t.Fatalf("list -o json: code %d, %v, %q", r.code, err, r.stdout)
			}
			if len(got) != 2 || got[0].ID != 1 || got[0].Name != "prod-eu-1" || got[0].ClusterUID != "uid-prod-eu-1" ||
				got[0].ServerVersion != "v1.30.4" || got[0].LatestSnapshotID == 0 || got[0].LastSeen.IsZero() ||
				got[1].Name != "staging" || staleOf(got[0]) != staleJSON || staleOf(got[1]) != staleJSON {
				t.Errorf("list -o json: %s", r.stdout)
			}
			if f.srv == nil && strings.Contains(r.stdout, `"stale"`) {
				t.Errorf("on the database there is no stale flag: %s", r.stdout)
			}
		})
	}
}

func staleOf(c clusterListing) string {
	if c.Stale == nil {
		return "absent"
	}
	return strconv.FormatBool(*c.Stale)
}

func TestClustersThroughAServerNeedItsTokens(t *testing.T) {
	withReadToken := func(c *server.Config) { c.ReadToken = testReadToken }
	noAdmin := func(c *server.Config) { c.AdminToken = "" }
	tests := []struct {
		name   string
		edit   func(*server.Config)
		env    map[string]string
		args   []string // after clusters, before --server URL
		code   int
		stdout string
		stderr []string
		state  string
	}{
		{name: "delete without --admin-token is refused with the server's message", args: []string{"delete", "1"}, code: 1,
			stderr: []string{"DELETE ", "/api/v1/clusters/1: 403 Forbidden: the admin token is required", "give --admin-token or --admin-token-file"},
			state:  seeded},
		// The admin token reads too: a wrong one is refused at the read that finds the cluster.
		{name: "rename with a wrong --admin-token is refused, never showing it", args: []string{"rename", "1", "x", "--admin-token", "wrong-secret"}, code: 1,
			stderr: []string{`find cluster "1": GET `, "401 Unauthorized: invalid read token", "check --admin-token"}, state: seeded},
		{name: "rename without --admin-token is refused with the server's message", args: []string{"rename", "staging", "x"}, code: 1,
			stderr: []string{"PATCH ", "/api/v1/clusters/2: 403 Forbidden: the admin token is required"}, state: seeded},
		{name: "delete on a server without an admin token is refused with its message", edit: noAdmin,
			args: []string{"delete", "1"}, code: 1,
			stderr: []string{"403 Forbidden: administration is disabled: start the server with --admin-token"}, state: seeded},
		{name: "delete with $UPGRADESCOPE_ADMIN_TOKEN deletes", env: map[string]string{"UPGRADESCOPE_ADMIN_TOKEN": testAdminToken},
			args: []string{"delete", "prod-eu-1"}, stderr: []string{`deleted cluster "prod-eu-1" (id 1)`},
			state: "2 staging uid-staging history=1 | tokens staging"},
		{name: "list without a read token on a closed read API is refused with the server's message", edit: withReadToken,
			args: []string{"list"}, code: 1,
			stderr: []string{"GET ", "/api/v1/clusters: 401 Unauthorized: a read credential is required", "give --read-token or --read-token-file"},
			state:  seeded},
		{name: "list with --read-token reads a closed read API", edit: withReadToken, args: []string{"list", "--read-token", testReadToken},
			stdout: "prod-eu-1", state: seeded},
		{name: "list with $UPGRADESCOPE_READ_TOKEN reads a closed read API", edit: withReadToken,
			env: map[string]string{"UPGRADESCOPE_READ_TOKEN": testReadToken}, args: []string{"list"}, stdout: "staging", state: seeded},
		{name: "delete with the admin token reads a closed read API to resolve the name", edit: withReadToken,
			args: []string{"delete", "staging", "--admin-token", testAdminToken}, stderr: []string{`deleted cluster "staging" (id 2)`},
			state: "1 prod-eu-1 uid-prod-eu-1 history=1 | tokens prod-eu-1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("UPGRADESCOPE_ADMIN_TOKEN", "")
			t.Setenv("UPGRADESCOPE_READ_TOKEN", "")
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			f := servedFleet(t, tt.edit)
			r := runCLI(t, append(append([]string{"clusters"}, tt.args...), f.via...)...)
			if r.code != tt.code || !strings.Contains(r.stdout, tt.stdout) {
				t.Errorf("code %d (want %d), stdout %q (want %q), stderr %q", r.code, tt.code, r.stdout, tt.stdout, r.stderr)
			}
			for _, want := range tt.stderr {
				if !strings.Contains(r.stderr, want) {
					t.Errorf("stderr lacks %q: %q", want, r.stderr)
				}
			}
			for _, secret := range []string{testAdminToken, testReadToken, "wrong-secret"} {
				if strings.Contains(r.stderr+r.stdout, secret) {
					t.Errorf("the output shows a token: %q %q", r.stdout, r.stderr)
				}
			}
			if got := f.state(t); got != tt.state {
				t.Errorf("afterwards:\n got %s\nwant %s", got, tt.state)
			}
		})
	}
}

// A redirect would carry the bearer token to another address: it is refused, naming where.
func TestClustersRefuseARedirectingServer(t *testing.T) {
	var mu sync.Mutex
	var leaked []string
	target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		leaked = append(leaked, r.Method+" "+r.Header.Get("Authorization"))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"clusters":[]}`)
	}))
	defer target.Close()
	redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer redirect.Close()

	tests := []struct {
		name string
		args []string
	}{
		{name: "list", args: []string{"list", "--read-token", testReadToken}},
		{name: "delete", args: []string{"delete", "1", "--admin-token", testAdminToken}},
		{name: "rename", args: []string{"rename", "1", "other", "--admin-token", testAdminToken}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runCLI(t, append(append([]string{"clusters"}, tt.args...), "--server", redirect.URL)...)
			want := "307 Temporary Redirect: redirected to " + target.URL + "/api/v1/clusters"
			if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, want) || !strings.Contains(r.stderr, "point --server at the final address") {
				t.Errorf("want exit 1 naming the redirect %q: code %d, stdout %q, stderr %q", want, r.code, r.stdout, r.stderr)
			}
			if strings.Contains(r.stderr, testReadToken) || strings.Contains(r.stderr, testAdminToken) {
				t.Errorf("stderr shows the token: %q", r.stderr)
			}
		})
	}
	mu.Lock()
	defer mu.Unlock()
	if len(leaked) > 0 {
		t.Errorf("the redirect was followed: %q", leaked)
	}
}

func TestClustersReachAnHTTPSServerWithAPrivateCA(t *testing.T) {
	f := sqliteFleet(t)
	eng, err := clustersEngine()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.New(server.Config{Store: f.st, Engine: eng, HostCheck: true})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(srv.Handler())
	ts.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake below is expected
	ts.StartTLS()
	defer ts.Close()
	ca := write(t, t.TempDir(), "ca.pem", string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ts.Certificate().Raw})))

	r := runCLI(t, "clusters", "list", "--server", ts.URL, "--server-ca-file", ca)
	if r.code != 0 || !strings.Contains(r.stdout, "prod-eu-1") {
		t.Errorf("list over https with --server-ca-file: code %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	r = runCLI(t, "clusters", "list", "--server", ts.URL)
	if r.code != 1 || !strings.Contains(r.stderr, "certificate") {
		t.Errorf("list over https without the CA must fail on the certificate: code %d, stderr %q", r.code, r.stderr)
	}
}

func TestClustersRefuseConflictingOrUnusableFlags(t *testing.T) {
	dir := t.TempDir()
	notPEM := write(t, dir, "not.pem", "hello\n")
	tests := []struct {
		name   string
		args   []string
		stderr string
	}{
		{name: "--server with --db", args: []string{"list", "--server", "http://127.0.0.1:1", "--db", "x.db"}, stderr: "--server and --db: give one"},
		{name: "--server with --db-url", args: []string{"delete", "1", "--server", "http://127.0.0.1:1", "--db-url", "postgres://u:hunter2@h/db"}, stderr: "--server and --db-url: give one"},
		{name: "--server with --db-url-file", args: []string{"rename", "1", "b", "--server", "http://127.0.0.1:1", "--db-url-file", notPEM}, stderr: "--server and --db-url-file: give one"},
		{name: "--admin-token without --server", args: []string{"delete", "1", "--admin-token", "hunter2"}, stderr: "--admin-token goes with --server URL"},
		{name: "--read-token-file without --server", args: []string{"list", "--read-token-file", notPEM}, stderr: "--read-token-file goes with --server URL"},
		{name: "--server-ca-file without --server", args: []string{"list", "--server-ca-file", notPEM}, stderr: "--server-ca-file goes with --server URL"},
		{name: "--server that is no http URL", args: []string{"list", "--server", "ftp://fleet"}, stderr: "--server ftp://fleet: want an http:// or https:// URL"},
		{name: "--server with credentials in it", args: []string{"list", "--server", "https://u:hunter2@fleet"}, stderr: "without credentials"},
		{name: "--server-ca-file with plain http", args: []string{"list", "--server", "http://127.0.0.1:1", "--server-ca-file", notPEM}, stderr: "--server-ca-file needs an https --server"},
		{name: "--server-ca-file without a certificate", args: []string{"list", "--server", "https://127.0.0.1:1", "--server-ca-file", notPEM}, stderr: "no PEM certificate"},
		{name: "an unreachable server", args: []string{"list", "--server", "http://127.0.0.1:1"}, stderr: "GET http://127.0.0.1:1/api/v1/clusters:"},
		{name: "an unknown --output", args: []string{"list", "-o", "yaml"}, stderr: `--output "yaml": want table or json`},
		{name: "delete without a cluster", args: []string{"delete"}, stderr: "accepts 1 arg"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(envDBURL, "")
			t.Chdir(t.TempDir())
			r := runCLI(t, append([]string{"clusters"}, tt.args...)...)
			if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, tt.stderr) {
				t.Errorf("want exit 1, nothing on stdout and %q: code %d, stdout %q, stderr %q", tt.stderr, r.code, r.stdout, r.stderr)
			}
			if strings.Contains(r.stderr, "hunter2") {
				t.Errorf("stderr shows a secret: %q", r.stderr)
			}
			if _, err := os.Stat("upgradescope.db"); err == nil {
				t.Error("a refused command created the default database")
			}
		})
	}
}

// An invalid new name is refused before the database is opened or the server asked.
func TestClustersRenameChecksTheNewNameBeforeTouchingAnything(t *testing.T) {
	var asked atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { asked.Store(true) }))
	defer srv.Close()
	t.Setenv(envDBURL, "")
	db := filepath.Join(t.TempDir(), "fleet.db")
	for _, via := range [][]string{{"--db", db}, {"--server", srv.URL, "--admin-token", testAdminToken}} {
		r := runCLI(t, append([]string{"clusters", "rename", "prod", "bad_name"}, via...)...)
		if r.code != 1 || !strings.Contains(r.stderr, `rename cluster "prod": cluster name "bad_name" is not an RFC 1123 subdomain`) {
			t.Errorf("%s: code %d, stderr %q", via[0], r.code, r.stderr)
		}
	}
	if _, err := os.Stat(db); err == nil {
		t.Error("the database was created")
	}
	if asked.Load() {
		t.Error("the server was asked")
	}
}
