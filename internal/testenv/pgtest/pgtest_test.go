package pgtest

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

func TestAMissingServerSkipsUnlessTheRunRequiresIt(t *testing.T) {
	tests := []struct {
		name     string
		ci       string
		require  string
		wantFail bool
	}{
		{name: "a local run skips", wantFail: false},
		{name: "CI alone skips, as in a contributor's fork", ci: "true", wantFail: false},
		{name: "UPGRADESCOPE_REQUIRE_POSTGRES=1 fails", require: "1", wantFail: true},
		{name: "UPGRADESCOPE_REQUIRE_POSTGRES=true fails, with CI set too", ci: "true", require: "true", wantFail: true},
		{name: "UPGRADESCOPE_REQUIRE_POSTGRES=0 skips", require: "0", wantFail: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("CI", tt.ci)
			t.Setenv(EnvRequire, tt.require)
			fail, msg := absent()
			if fail != tt.wantFail {
				t.Errorf("fail = %v (%q), want %v", fail, msg, tt.wantFail)
			}
			// hack/testsummary counts skips by their first line: one fixed line per reason
			if strings.Contains(msg, "\n") || !strings.Contains(msg, "hack/with-postgres.sh") {
				t.Errorf("message %q: want one line naming hack/with-postgres.sh", msg)
			}
		})
	}
}

func TestURLIsAFreshEmptyDatabase(t *testing.T) {
	conn := connect(t, URL(t))
	var db string
	var tables int
	if err := conn.QueryRow(t.Context(), `SELECT current_database(),
		(SELECT count(*) FROM information_schema.tables WHERE table_schema NOT IN ('pg_catalog', 'information_schema'))`).Scan(&db, &tables); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(db, "t_") || tables != 0 {
		t.Errorf("database %q has %d tables, want a t_ database with none", db, tables)
	}
	if _, err := conn.Exec(t.Context(), "CREATE TABLE x (id int PRIMARY KEY)"); err != nil {
		t.Errorf("the test cannot write to its database: %v", err)
	}
}

func TestTwoCallsGiveTwoDatabases(t *testing.T) {
	a, b := URL(t), URL(t)
	if a == b {
		t.Fatalf("both calls gave %s", a)
	}
	if _, err := connect(t, a).Exec(t.Context(), "CREATE TABLE only_in_a (id int)"); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := connect(t, b).QueryRow(t.Context(), "SELECT count(*) FROM pg_tables WHERE tablename = 'only_in_a'").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Error("a table created in one test database is visible in the other")
	}
}

func TestTheDatabaseIsDroppedAfterTheTestEvenWithAConnectionOpen(t *testing.T) {
	base := BaseURL(t)
	var name string
	t.Run("test", func(t *testing.T) {
		u := URL(t)
		name = databaseOf(t, u)
		conn, err := pgx.Connect(context.Background(), u)
		if err != nil {
			t.Fatal(err)
		}
		// left open past the subtest: the drop closes it
		t.Cleanup(func() { _ = conn.Close(context.Background()) })
		if err := conn.Ping(t.Context()); err != nil {
			t.Fatal(err)
		}
	})
	var n int
	if err := connect(t, base).QueryRow(t.Context(), "SELECT count(*) FROM pg_database WHERE datname = $1", name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("database %s still exists after its test", name)
	}
}

func TestURLKeepsTheServerUserAndOptions(t *testing.T) {
	got, err := withDatabase("postgres://postgres@127.0.0.1:15432/postgres?sslmode=disable", "t_1")
	if want := "postgres://postgres@127.0.0.1:15432/t_1?sslmode=disable"; err != nil || got != want {
		t.Errorf("withDatabase = %q, %v; want %q", got, err, want)
	}
	if _, err := withDatabase("host=127.0.0.1 user=postgres", "t_1"); err == nil {
		t.Error("a keyword/value DSN was accepted; want an error asking for a postgres:// URL")
	}
}

// connect opens a connection closed when the test ends.
func connect(t *testing.T, u string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}

func databaseOf(t *testing.T, u string) string {
	t.Helper()
	p, err := url.Parse(u)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimPrefix(p.Path, "/")
}
