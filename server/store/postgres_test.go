package store_test

import (
	"errors"
	"testing"

	"github.com/upgradescope/upgradescope/internal/pgtest"
	"github.com/upgradescope/upgradescope/server/store"
	"github.com/upgradescope/upgradescope/server/store/storetest"
)

func TestPostgres(t *testing.T) {
	pgtest.BaseURL(t) // skips, or fails under UPGRADESCOPE_REQUIRE_POSTGRES, without a server
	var urls perTest
	storetest.Run(t, func(t *testing.T) (store.Store, error) {
		return openForTest(t, urls.get(t, func() string { return pgtest.URL(t) }))
	})
}

func TestPostgresUnreachableIsUnavailable(t *testing.T) {
	// Port 1 on loopback: nothing listens, the connection is refused at once.
	_, err := store.Open(t.Context(), "postgres://postgres@127.0.0.1:1/postgres?sslmode=disable&connect_timeout=5")
	if !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("Open(unreachable) error = %v, want ErrUnavailable", err)
	}
}
