package store_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/upgradescope/upgradescope/fleet/server/store"
	"github.com/upgradescope/upgradescope/fleet/server/store/storetest"
)

func TestSQLite(t *testing.T) {
	var paths perTest
	storetest.Run(t, func(t *testing.T) (store.Store, error) {
		return openForTest(t, paths.get(t, func() string {
			return filepath.Join(t.TempDir(), "state", "upgradescope.db")
		}))
	})
}

// perTest remembers one database per test, created on the test's first open.
type perTest struct {
	mu  sync.Mutex
	dsn map[*testing.T]string
}

func (p *perTest) get(t *testing.T, create func() string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dsn == nil {
		p.dsn = map[*testing.T]string{}
	}
	if _, ok := p.dsn[t]; !ok {
		p.dsn[t] = create()
	}
	return p.dsn[t]
}

func openForTest(t *testing.T, dsn string) (store.Store, error) {
	t.Helper()
	s, err := store.Open(t.Context(), dsn)
	if err == nil {
		t.Cleanup(func() { _ = s.Close() })
	}
	return s, err
}

func TestSQLiteFileModes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "state")
	path := filepath.Join(dir, "upgradescope.db")
	s, err := openForTest(t, path)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	if _, err := s.BindCluster(t.Context(), "a", "uid"); err != nil { // the log holds a write
		t.Fatalf("BindCluster: %v", err)
	}
	wantMode(t, dir, 0o700)
	wantMode(t, filepath.Dir(dir), 0o700)
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		wantMode(t, p, 0o600)
	}
}

func TestSQLiteTightensAnExistingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "upgradescope.db")
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := openForTest(t, "file:"+path); err != nil {
		t.Fatalf("Open: %v", err)
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		wantMode(t, p, 0o600)
	}
}

func TestSQLitePathTakenLiterally(t *testing.T) {
	dir := t.TempDir()
	name := "a%20b?mode=ro#frag.db"
	if _, err := openForTest(t, filepath.Join(dir, name)); err != nil {
		t.Fatalf("Open: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
		t.Errorf("the database is not at the path as written: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), name) {
			t.Errorf("unexpected file %q beside the database", e.Name())
		}
	}
}

func TestSQLiteRefusesBadPaths(t *testing.T) {
	for _, dsn := range []string{"", "file:", "a\x00b.db"} {
		if s, err := store.Open(t.Context(), dsn); err == nil {
			_ = s.Close()
			t.Errorf("Open(%q) succeeded, want an error", dsn)
		}
	}
}

func wantMode(t *testing.T, path string, want fs.FileMode) {
	t.Helper()
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s: missing", filepath.Base(path))
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != want {
		t.Errorf("%s: mode %v, want %v", filepath.Base(path), got, want)
	}
}
