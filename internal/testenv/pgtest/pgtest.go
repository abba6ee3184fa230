// Package pgtest connects tests to the throwaway PostgreSQL hack/with-postgres.sh starts
// (UPGRADESCOPE_TEST_POSTGRES_URL) and gives each test a database of its own.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// EnvURL names the server's URL, a superuser's connection to its postgres database.
const EnvURL = "UPGRADESCOPE_TEST_POSTGRES_URL"

// EnvRequire, set to 1 or true, turns a missing server from a skip into a failure. .ci/run
// sets it, where the server must have run; CI does not count, since GitHub Actions and GitLab
// set it in every contributor's fork.
const EnvRequire = "UPGRADESCOPE_REQUIRE_POSTGRES"

// timeout bounds creating or dropping a test's database.
const timeout = 30 * time.Second

// BaseURL is the server's URL as EnvURL names it. Without it the test is skipped, or fails
// under EnvRequire. Tests should use URL: what they write here, every test sees.
func BaseURL(t testing.TB) string {
	t.Helper()
	base := os.Getenv(EnvURL)
	if base == "" {
		fail, msg := absent()
		if fail {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return base
}

// URL creates an empty database for the test alone and returns its URL; the database is
// dropped when the test and its subtests finish, connections still open to it closed by
// force. Without a server the test is skipped, or fails under EnvRequire.
func URL(t testing.TB) string {
	t.Helper()
	base := BaseURL(t)
	name := "t_" + randomHex(8)
	dbURL, err := withDatabase(base, name)
	if err != nil {
		t.Fatal(err)
	}
	// FILE_COPY, as before PostgreSQL 15, takes half the time of WAL_LOG on a small template
	// with fsync off (55 against 115 ms a database, measured through psql)
	if err := exec(base, "CREATE DATABASE "+name+" STRATEGY FILE_COPY"); err != nil {
		t.Fatalf("create test database: %v", err)
	}
	t.Cleanup(func() {
		if err := exec(base, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("drop test database: %v", err)
		}
	})
	return dbURL
}

// absent says what a test does when EnvURL is not set: fail where EnvRequire says the server
// must have run, else skip. The message is what `make test` counts skips by.
func absent() (fail bool, msg string) {
	if required, _ := strconv.ParseBool(os.Getenv(EnvRequire)); required {
		return true, fmt.Sprintf("%s is not set but %s is: start PostgreSQL first (hack/with-postgres.sh)", EnvURL, EnvRequire)
	}
	return false, fmt.Sprintf("%s is not set: run the tests under hack/with-postgres.sh, or `make pg-up` and eval `hack/pg-env.sh env`", EnvURL)
}

// exec runs one statement on a connection of its own to base.
func exec(base, sql string) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		return fmt.Errorf("connect to %s: %w", EnvURL, err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, sql); err != nil {
		return fmt.Errorf("%s: %w", sql, err)
	}
	return nil
}

// withDatabase is base with its database replaced by name.
func withDatabase(base, name string) (string, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "", fmt.Errorf("%s must be a postgres:// URL, such as hack/pg-env.sh env prints", EnvURL)
	}
	u.Path, u.RawPath = "/"+name, ""
	return u.String(), nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return hex.EncodeToString(b)
}
