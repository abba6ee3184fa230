package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/fleet/server/store"
	"github.com/upgradescope/upgradescope/fleet/server/store/storetest"
	"github.com/upgradescope/upgradescope/internal/testenv/pgtest"
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

// TestPostgresLockExcludesOtherHandles: the advisory lock is the database's, so a second
// replica (another handle) is refused while the first holds it, and runs once it is
// released. SQLite promises this only within a handle (the suite's testWithLock).
func TestPostgresLockExcludesOtherHandles(t *testing.T) {
	url := pgtest.URL(t)
	a, err := openForTest(t, url)
	if err != nil {
		t.Fatalf("open a: %v", err)
	}
	b, err := openForTest(t, url)
	if err != nil {
		t.Fatalf("open b: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	held, release := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		ran, err := a.WithLock(ctx, "prune", func(ctx context.Context) error {
			close(held)
			select {
			case <-release:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
		if err == nil && !ran {
			err = errors.New("handle a did not run")
		}
		done <- err
	}()
	select {
	case <-held:
	case err := <-done:
		t.Fatalf("handle a's WithLock returned before fn blocked: %v", err)
	}
	if ran, err := b.WithLock(ctx, "prune", func(context.Context) error {
		t.Error("handle b ran while handle a held the lock")
		return nil
	}); ran || err != nil {
		t.Errorf("handle b's WithLock while a holds it = %v, %v; want false, nil", ran, err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatalf("handle a's WithLock: %v", err)
	}
	if ran, err := b.WithLock(ctx, "prune", func(context.Context) error { return nil }); !ran || err != nil {
		t.Errorf("handle b's WithLock after a released = %v, %v; want true, nil", ran, err)
	}
}
