package main

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/upgradescope/upgradescope/fleet/server/store"
	"github.com/upgradescope/upgradescope/internal/testenv/pgtest"
)

var tokenLine = regexp.MustCompile(`^[0-9a-f]{64}\n$`)

// tokensDB is a fresh SQLite path, with $UPGRADESCOPE_DB_URL cleared so the caller's
// environment cannot choose the database.
func tokensDB(t *testing.T) string {
	t.Helper()
	t.Setenv(envDBURL, "")
	return filepath.Join(t.TempDir(), "fleet", "upgradescope.db")
}

// createToken runs tokens create and answers the token it printed.
func createToken(t *testing.T, cluster string, db ...string) string {
	t.Helper()
	r := runCLI(t, append([]string{"tokens", "create", cluster}, db...)...)
	if r.code != 0 || !tokenLine.MatchString(r.stdout) {
		t.Fatalf("tokens create %s: code %d, stdout %q, stderr %q", cluster, r.code, r.stdout, r.stderr)
	}
	return strings.TrimSpace(r.stdout)
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func TestTokensCreatePrintsTheTokenOnceAndTheDatabaseKeepsOnlyItsHash(t *testing.T) {
	db := tokensDB(t)
	r := runCLI(t, "tokens", "create", "prod-eu-1", "--db", db)
	if r.code != 0 || !tokenLine.MatchString(r.stdout) {
		t.Fatalf("stdout must be one 64-hex line: code %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	tok := strings.TrimSpace(r.stdout)
	if !strings.Contains(r.stderr, "shown once") || !strings.Contains(r.stderr, tok[:8]) || strings.Contains(r.stderr, tok) {
		t.Errorf("stderr must say the token is shown once and name its prefix, not the token: %q", r.stderr)
	}
	if info, err := os.Stat(db); err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("the database file must be 0600: %v %v", info, err)
	}

	st, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	ts, err := st.Tokens(context.Background())
	if err != nil || len(ts) != 1 || ts[0].Cluster != "prod-eu-1" || ts[0].Prefix != tok[:8] {
		t.Errorf("the store must hold one token for prod-eu-1 with the prefix %s: %+v %v", tok[:8], ts, err)
	}
	if c, err := st.IngestTokenCluster(context.Background(), sha256Hex(tok)); c != "prod-eu-1" || err != nil {
		t.Errorf("the token's sha256 must push as prod-eu-1: %q %v", c, err)
	}
	if _, err := st.IngestTokenCluster(context.Background(), tok); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the token itself must not be stored as a hash: %v", err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{db, db + "-wal"} {
		if data, err := os.ReadFile(f); err == nil && strings.Contains(string(data), tok) {
			t.Errorf("%s holds the token itself", filepath.Base(f))
		}
	}

	if second := createToken(t, "prod-eu-1", "--db", db); second == tok {
		t.Error("two tokens for one cluster must differ")
	}
}

func TestTokensListNeverShowsATokenNorItsHash(t *testing.T) {
	db := tokensDB(t)
	tok := createToken(t, "prod-eu-1", "--db", db)
	createToken(t, "staging", "--db", db)
	if r := runCLI(t, "tokens", "revoke", "--id", "2", "--db", db); r.code != 0 {
		t.Fatalf("revoke: %+v", r)
	}

	for _, format := range []string{"table", "json"} {
		t.Run(format, func(t *testing.T) {
			r := runCLI(t, "tokens", "list", "-o", format, "--db", db)
			if r.code != 0 {
				t.Fatalf("code %d, stderr %q", r.code, r.stderr)
			}
			if strings.Contains(r.stdout, tok) || strings.Contains(r.stdout, sha256Hex(tok)) {
				t.Errorf("list shows a token or its hash:\n%s", r.stdout)
			}
			if !strings.Contains(r.stdout, tok[:8]) || !strings.Contains(r.stdout, "prod-eu-1") || !strings.Contains(r.stdout, "staging") {
				t.Errorf("list must name both tokens by prefix and cluster:\n%s", r.stdout)
			}
			if format == "table" {
				lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
				if len(lines) != 3 || !strings.HasPrefix(lines[0], "ID") || !strings.HasSuffix(lines[1], " -") || strings.HasSuffix(lines[2], " -") {
					t.Errorf("want a header, token 1 active and token 2 revoked:\n%s", r.stdout)
				}
				return
			}
			var got []tokenJSON
			if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
				t.Fatal(err)
			}
			if len(got) != 2 || got[0].Revoked != nil || got[1].Revoked == nil || got[0].Prefix != tok[:8] {
				t.Errorf("want token 1 active and token 2 revoked: %+v", got)
			}
		})
	}
}

func TestTokensRevokeTakesExactlyOneOfIDAndAll(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
		active int // tokens of the two still pushing afterwards
	}{
		{name: "--id revokes that token", args: []string{"--id", "1"}, stdout: "revoked 1 token\n", active: 1},
		{name: "--all revokes every active token", args: []string{"--all"}, stdout: "revoked 2 tokens\n", active: 0},
		{name: "an unknown id fails naming it", args: []string{"--id", "99"}, code: 1, stderr: "no ingest token with id 99", active: 2},
		{name: "neither --id nor --all is refused", args: nil, code: 1, stderr: "exactly one of --id N and --all", active: 2},
		{name: "both --id and --all are refused", args: []string{"--id", "1", "--all"}, code: 1, stderr: "exactly one of --id N and --all", active: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := tokensDB(t)
			toks := []string{createToken(t, "a", "--db", db), createToken(t, "b", "--db", db)}
			r := runCLI(t, append([]string{"tokens", "revoke", "--db", db}, tt.args...)...)
			if r.code != tt.code || r.stdout != tt.stdout || !strings.Contains(r.stderr, tt.stderr) {
				t.Errorf("code %d (want %d), stdout %q (want %q), stderr %q (want %q)", r.code, tt.code, r.stdout, tt.stdout, r.stderr, tt.stderr)
			}
			active := countActive(t, db, toks, func(st store.Store, hash string) error {
				_, err := st.IngestTokenCluster(context.Background(), hash)
				return err
			})
			if active != tt.active {
				t.Errorf("%d tokens still push, want %d", active, tt.active)
			}
		})
	}
}

func TestTokensRefuseConflictingOrUnusableDatabaseFlags(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "db-url.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	urlFile := write(t, dir, "db-url", "postgres://u:hunter2@127.0.0.1:1/fleet\n")
	const secretURL = "postgres://u:hunter2@127.0.0.1:1/fleet?sslmode=disable"

	tests := []struct {
		name   string
		env    string
		args   []string
		stderr []string
	}{
		{name: "a cluster name that is no RFC 1123 subdomain", args: []string{"create", "Prod_1"}, stderr: []string{`"Prod_1" is not an RFC 1123 subdomain`}},
		{name: "--db with --db-url", args: []string{"list", "--db", "x.db", "--db-url", secretURL}, stderr: []string{"--db names a SQLite file and --db-url a PostgreSQL database"}},
		{name: "--db-url with --db-url-file", args: []string{"list", "--db-url", secretURL, "--db-url-file", urlFile}, stderr: []string{"--db-url, --db-url-file: give the PostgreSQL URL once"}},
		{name: "--db-url overrides $UPGRADESCOPE_DB_URL", env: "postgres://other@127.0.0.1:1/env", args: []string{"list", "--db-url", secretURL}, stderr: []string{"postgres://xxxxx@127.0.0.1:1/fleet", "database unavailable"}},
		{name: "--db-url-file on a FIFO", args: []string{"list", "--db-url-file", fifo}, stderr: []string{"--db-url-file", "not a regular file"}},
		{name: "--db-url-file on /dev/zero", args: []string{"list", "--db-url-file", "/dev/zero"}, stderr: []string{"--db-url-file", "not a regular file"}},
		{name: "a URL that is not PostgreSQL's", args: []string{"list", "--db-url", "mysql://u:hunter2@db/fleet"}, stderr: []string{"--db-url mysql://xxxxx@db/fleet: want a postgres://"}},
		{name: "a key=value connection string", args: []string{"list", "--db-url", "host=db password=hunter2"}, stderr: []string{"--db-url: want a postgres://"}},
		{name: "an unreachable PostgreSQL, named without credentials", args: []string{"list", "--db-url", secretURL}, stderr: []string{"postgres://xxxxx@127.0.0.1:1/fleet", "database unavailable", "reachable?"}},
		{name: "an unreachable PostgreSQL from --db-url-file", args: []string{"create", "prod", "--db-url-file", urlFile}, stderr: []string{"postgres://xxxxx@127.0.0.1:1/fleet", "database unavailable"}},
		{name: "an unreachable PostgreSQL from $UPGRADESCOPE_DB_URL", env: secretURL, args: []string{"revoke", "--all"}, stderr: []string{"postgres://xxxxx@127.0.0.1:1/fleet", "database unavailable"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(envDBURL, tt.env)
			t.Chdir(t.TempDir())
			r := runCLI(t, append([]string{"tokens"}, tt.args...)...)
			if r.code != 1 || r.stdout != "" {
				t.Errorf("want exit 1 and nothing on stdout: code %d, stdout %q", r.code, r.stdout)
			}
			for _, want := range tt.stderr {
				if !strings.Contains(r.stderr, want) {
					t.Errorf("stderr lacks %q: %q", want, r.stderr)
				}
			}
			if strings.Contains(r.stderr, "hunter2") {
				t.Errorf("stderr shows the password: %q", r.stderr)
			}
		})
	}
}

// The environment only names the database when no flag does: --db overrides it.
func TestDBOverridesTheEnvironmentsURL(t *testing.T) {
	db := tokensDB(t)
	t.Setenv(envDBURL, "postgres://u:hunter2@127.0.0.1:1/fleet")
	if r := runCLI(t, "tokens", "list", "--db", db); r.code != 0 {
		t.Errorf("--db with $%s set: exit %d, stderr %q; want the SQLite file listed", envDBURL, r.code, r.stderr)
	}
}

func TestTokensRefuseADatabaseNewerThanTheBinary(t *testing.T) {
	db := tokensDB(t)
	createToken(t, "prod", "--db", db)
	st, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	raw := st.(interface{ SQLDB() *sql.DB }).SQLDB()
	if _, err := raw.Exec(`INSERT INTO schema_migrations (version, name, applied_at) VALUES (99, 'future', 0)`); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	r := runCLI(t, "tokens", "list", "--db", db)
	if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, "database schema version 99 is newer than this binary") ||
		!strings.Contains(r.stderr, "point --db/--db-url at another database") {
		t.Errorf("want exit 1 naming the newer schema and what to do: code %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

func TestTokensOnPostgres(t *testing.T) {
	url := pgtest.URL(t)
	t.Setenv(envDBURL, "")
	tok := createToken(t, "prod-eu-1", "--db-url", url)
	createToken(t, "staging", "--db-url", url)

	r := runCLI(t, "tokens", "list", "-o", "json", "--db-url", url)
	var got []tokenJSON
	if err := json.Unmarshal([]byte(r.stdout), &got); r.code != 0 || err != nil || len(got) != 2 || got[0].Prefix != tok[:8] {
		t.Fatalf("list: code %d, %v, %q, stderr %q", r.code, err, r.stdout, r.stderr)
	}
	if strings.Contains(r.stdout, tok) {
		t.Errorf("list shows the token: %s", r.stdout)
	}

	t.Setenv(envDBURL, url) // the environment names the database as --db-url does
	if r := runCLI(t, "tokens", "revoke", "--id", "1"); r.code != 0 || r.stdout != "revoked 1 token\n" {
		t.Errorf("revoke --id 1: %+v", r)
	}
	if r := runCLI(t, "tokens", "revoke", "--all"); r.code != 0 || r.stdout != "revoked 1 token\n" {
		t.Errorf("revoke --all after --id 1 revokes the other one: %+v", r)
	}
	st, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.IngestTokenCluster(context.Background(), sha256Hex(tok)); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a revoked token must not push: %v", err)
	}

	read := mintReadToken(t, "payments", "--db-url", url)
	if teams, err := st.ReadTokenTeams(context.Background(), sha256Hex(read)); err != nil || strings.Join(teams, ",") != "payments" {
		t.Errorf("the read token must read payments: %q %v", teams, err)
	}
	if r := runCLI(t, "tokens", "revoke", "--read", "--all"); r.code != 0 || r.stdout != "revoked 1 read token\n" {
		t.Errorf("revoke --read --all: %+v", r)
	}
	if closed, err := st.ReadAPIClosed(context.Background()); !closed || err != nil {
		t.Errorf("the read API must stay closed after revoking every read token: %v %v", closed, err)
	}
}

// mintReadToken runs tokens create --read and answers the token it printed.
func mintReadToken(t *testing.T, teams string, db ...string) string {
	t.Helper()
	r := runCLI(t, append([]string{"tokens", "create", "--read", "--teams", teams}, db...)...)
	if r.code != 0 || !tokenLine.MatchString(r.stdout) {
		t.Fatalf("tokens create --read --teams %s: code %d, stdout %q, stderr %q", teams, r.code, r.stdout, r.stderr)
	}
	return strings.TrimSpace(r.stdout)
}

func TestTokensCreateReadPrintsTheTokenOnceAndClosesTheReadAPI(t *testing.T) {
	db := tokensDB(t)
	r := runCLI(t, "tokens", "create", "--read", "--teams", "payments,checkout", "--teams", "payments", "--db", db)
	if r.code != 0 || !tokenLine.MatchString(r.stdout) {
		t.Fatalf("stdout must be one 64-hex line: code %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	tok := strings.TrimSpace(r.stdout)
	if !strings.Contains(r.stderr, "read token") || !strings.Contains(r.stderr, "shown once") ||
		!strings.Contains(r.stderr, tok[:8]) || strings.Contains(r.stderr, tok) {
		t.Errorf("stderr must say a read token is shown once and name its prefix, not the token: %q", r.stderr)
	}
	fleet := mintReadToken(t, "*", "--db", db)

	st, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for tok, want := range map[string]string{tok: "checkout,payments", fleet: "*"} {
		teams, err := st.ReadTokenTeams(context.Background(), sha256Hex(tok))
		if err != nil || strings.Join(teams, ",") != want {
			t.Errorf("the token's sha256 must read %s: %q %v", want, teams, err)
		}
	}
	if _, err := st.IngestTokenCluster(context.Background(), sha256Hex(tok)); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a read token must not push: %v", err)
	}
	if closed, err := st.ReadAPIClosed(context.Background()); !closed || err != nil {
		t.Errorf("a read token must close the read API: %v %v", closed, err)
	}
}

func TestTokensCreateReadRefusesMissingOrInvalidTeams(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		stderr string
	}{
		{name: "--read without --teams", args: []string{"--read"}, stderr: "--read needs --teams"},
		{name: "--teams without --read", args: []string{"prod", "--teams", "a"}, stderr: "--teams scopes a read token: give --read too"},
		{name: "--read with a cluster", args: []string{"prod", "--read", "--teams", "a"}, stderr: `a read token is not bound to a cluster: drop "prod"`},
		{name: "no cluster and no --read", args: nil, stderr: "give the CLUSTER an ingest token pushes as, or --read --teams"},
		{name: "a team that is no label value", args: []string{"--read", "--teams", "pay ments"}, stderr: `team "pay ments" is not a label value`},
		{name: "a team longer than 63 characters", args: []string{"--read", "--teams", strings.Repeat("a", 64)}, stderr: "is not a label value"},
		{name: "an empty team", args: []string{"--read", "--teams", "a,,b"}, stderr: "empty team name"},
		{name: "'*' with named teams", args: []string{"--read", "--teams", "a,*"}, stderr: "--teams '*' reads the whole fleet: give it alone"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := tokensDB(t)
			r := runCLI(t, append([]string{"tokens", "create", "--db", db}, tt.args...)...)
			if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, tt.stderr) {
				t.Errorf("want exit 1, nothing on stdout and %q: code %d, stdout %q, stderr %q", tt.stderr, r.code, r.stdout, r.stderr)
			}
			if _, err := os.Stat(db); err == nil {
				st, err := store.Open(context.Background(), db)
				if err != nil {
					t.Fatal(err)
				}
				defer st.Close()
				if ts, err := st.ReadTokens(context.Background()); err != nil || len(ts) != 0 {
					t.Errorf("a refused create must store nothing: %+v %v", ts, err)
				}
			}
		})
	}
}

func TestTokensListShowsBothKinds(t *testing.T) {
	db := tokensDB(t)
	ingest := createToken(t, "prod-eu-1", "--db", db)
	read := mintReadToken(t, "payments,checkout", "--db", db)
	mintReadToken(t, "*", "--db", db)
	if r := runCLI(t, "tokens", "revoke", "--read", "--id", "2", "--db", db); r.code != 0 {
		t.Fatalf("revoke --read: %+v", r)
	}

	r := runCLI(t, "tokens", "list", "--db", db)
	if r.code != 0 {
		t.Fatalf("code %d, stderr %q", r.code, r.stderr)
	}
	for _, tok := range []string{ingest, read} {
		if strings.Contains(r.stdout, tok) || strings.Contains(r.stdout, sha256Hex(tok)) {
			t.Errorf("list shows a token or its hash:\n%s", r.stdout)
		}
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		f := strings.Fields(line)
		if len(f) != 6 {
			t.Fatalf("want six columns: %q", line)
		}
		revoked := "revoked"
		if f[5] == "-" {
			revoked = "active"
		}
		got = append(got, strings.Join([]string{f[0], f[1], f[2], f[3], revoked}, " "))
	}
	want := []string{
		"ID KIND PREFIX CLUSTER/TEAMS revoked",
		"1 ingest " + ingest[:8] + " prod-eu-1 active",
		"1 read " + read[:8] + " checkout,payments active",
	}
	if len(got) != 4 || strings.Join(got[:3], "|") != strings.Join(want, "|") || !strings.HasPrefix(got[3], "2 read ") ||
		!strings.HasSuffix(got[3], " * revoked") {
		t.Errorf("list:\n%s\nwant the header, the ingest token, then read tokens 1 (active) and 2 (revoked)", strings.Join(got, "\n"))
	}

	r = runCLI(t, "tokens", "list", "-o", "json", "--db", db)
	var js []tokenJSON
	if err := json.Unmarshal([]byte(r.stdout), &js); r.code != 0 || err != nil {
		t.Fatalf("list -o json: code %d, %v, %q", r.code, err, r.stdout)
	}
	if len(js) != 3 || js[0].Kind != "ingest" || js[0].Cluster != "prod-eu-1" || js[1].Kind != "read" ||
		strings.Join(js[1].Teams, ",") != "checkout,payments" || js[1].Cluster != "" || js[2].Revoked == nil {
		t.Errorf("list -o json: %+v", js)
	}
}

func TestTokensRevokeReadLeavesIngestTokensAndTheReadAPIClosed(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
		active int // read tokens of the two still reading afterwards
	}{
		{name: "--read --id revokes that read token", args: []string{"--read", "--id", "1"}, stdout: "revoked 1 read token\n", active: 1},
		{name: "--read --all revokes every read token", args: []string{"--read", "--all"}, stdout: "revoked 2 read tokens\n", active: 0},
		{name: "an unknown id fails naming it", args: []string{"--read", "--id", "99"}, code: 1, stderr: "no read token with id 99", active: 2},
		{name: "--read alone is refused", args: []string{"--read"}, code: 1, stderr: "exactly one of --id N and --all", active: 2},
		{name: "plain revoke stays with ingest tokens", args: []string{"--all"}, stdout: "revoked 1 token\n", active: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := tokensDB(t)
			createToken(t, "prod", "--db", db)
			toks := []string{mintReadToken(t, "a", "--db", db), mintReadToken(t, "b", "--db", db)}
			r := runCLI(t, append([]string{"tokens", "revoke", "--db", db}, tt.args...)...)
			if r.code != tt.code || r.stdout != tt.stdout || !strings.Contains(r.stderr, tt.stderr) {
				t.Errorf("code %d (want %d), stdout %q (want %q), stderr %q (want %q)", r.code, tt.code, r.stdout, tt.stdout, r.stderr, tt.stderr)
			}
			closed := true
			active := countActive(t, db, toks, func(st store.Store, hash string) error {
				c, err := st.ReadAPIClosed(context.Background())
				closed = closed && c && err == nil
				_, err = st.ReadTokenTeams(context.Background(), hash)
				return err
			})
			if active != tt.active {
				t.Errorf("%d read tokens still read, want %d", active, tt.active)
			}
			if !closed {
				t.Error("the read API must stay closed")
			}
		})
	}
}

// countActive opens db and counts the tokens lookup still finds by their hash.
func countActive(t *testing.T, db string, toks []string, lookup func(st store.Store, hash string) error) int {
	t.Helper()
	st, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	active := 0
	for _, tok := range toks {
		if lookup(st, sha256Hex(tok)) == nil {
			active++
		}
	}
	return active
}
