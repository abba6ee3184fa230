package store_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/upgradescope/upgradescope/server/store"
	"github.com/upgradescope/upgradescope/server/store/storetest"
)

func TestPostgres(t *testing.T) {
	if os.Getenv("UPGRADESCOPE_TEST_POSTGRES_URL") == "" {
		t.Skip("no PostgreSQL: set UPGRADESCOPE_TEST_POSTGRES_URL")
	}
	var urls perTest
	storetest.Run(t, func(t *testing.T) (store.Store, error) {
		return openForTest(t, urls.get(t, func() string { return postgresURL(t) }))
	})
}

// postgresURL creates a fresh database t_<hex> on $UPGRADESCOPE_TEST_POSTGRES_URL's
// server, dropped when t ends, and answers its URL; it skips t without the variable.
// (internal/pgtest.URL replaces it.)
func postgresURL(t *testing.T) string {
	t.Helper()
	base := os.Getenv("UPGRADESCOPE_TEST_POSTGRES_URL")
	if base == "" {
		t.Skip("no PostgreSQL: set UPGRADESCOPE_TEST_POSTGRES_URL")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("connect to %s: %v", base, err)
	}
	defer conn.Close(ctx)
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	name := "t_" + hex.EncodeToString(b)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Errorf("drop database %s: %v", name, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP DATABASE "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("parse %s: %v", base, err)
	}
	u.Path = "/" + name
	return u.String()
}

func TestPostgresUnreachableIsUnavailable(t *testing.T) {
	// Port 1 on loopback: nothing listens, the connection is refused at once.
	_, err := store.Open(t.Context(), "postgres://postgres@127.0.0.1:1/postgres?sslmode=disable&connect_timeout=5")
	if !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("Open(unreachable) error = %v, want ErrUnavailable", err)
	}
}
