package store_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/upgradescope/upgradescope/fleet/server/store"
	"github.com/upgradescope/upgradescope/fleet/server/store/storetest"
)

// Open picks the backend from the DSN: a postgres:// URL opens PostgreSQL, anything else
// is a SQLite file, created 0600 with its folder. A cluster name is bound to the first
// kube-system UID that pushes as it; another UID is a conflict the database decides, so
// replicas racing on one database agree.
func ExampleOpen() {
	dir, err := os.MkdirTemp("", "store-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()
	s, err := store.Open(ctx, filepath.Join(dir, "upgradescope.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()

	c, err := s.BindCluster(ctx, "prod-eu-1", "9f1c2d3e-0000-4000-8000-00000000000a")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(c.ID, c.Name, c.UID)
	_, err = s.BindCluster(ctx, "prod-eu-1", "another-uid")
	fmt.Println("another UID:", errors.Is(err, store.ErrConflict))
	// Output:
	// 1 prod-eu-1 9f1c2d3e-0000-4000-8000-00000000000a
	// another UID: true
}

// A backend is done when the conformance suite passes on a real instance of it, as in
// Vault's physical.ExerciseBackend. Its test hands storetest.Run an Opener: the first call
// for a test creates an empty database, later calls for the same test open that database
// again (a restart, or a second replica). This is TestSQLite in sqlite_test.go; TestPostgres
// does the same with a database per test on the server UPGRADESCOPE_TEST_POSTGRES_URL names.
func Example_conformanceSuite() {
	testSQLite := func(t *testing.T) {
		var mu sync.Mutex
		paths := map[*testing.T]string{}
		storetest.Run(t, func(t *testing.T) (store.Store, error) {
			mu.Lock()
			path, ok := paths[t]
			if !ok {
				path = filepath.Join(t.TempDir(), "upgradescope.db")
				paths[t] = path
			}
			mu.Unlock()
			s, err := store.Open(t.Context(), path)
			if err == nil {
				t.Cleanup(func() { _ = s.Close() })
			}
			return s, err
		})
	}
	_ = testSQLite // go test runs it as func TestSQLite(t *testing.T)
}
