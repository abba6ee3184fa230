package atomicfile_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/upgradescope/upgradescope/internal/atomicfile"
)

func TestWriteReplacesTheFileOwnerOnlyAndLeavesNoTemporary(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "cache.json")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := atomicfile.Write(path, []byte("new")); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != "new" {
		t.Fatalf("read %q, %v; want new", got, err)
	}
	info, err := os.Stat(path)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, %v; want 0600", info.Mode().Perm(), err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("%d entries in the directory, want the file alone", len(entries))
	}
}

func TestWriteIntoAMissingDirectoryFails(t *testing.T) {
	if err := atomicfile.Write(filepath.Join(t.TempDir(), "no", "such"), []byte("x")); err == nil {
		t.Fatal("wrote into a missing directory")
	}
}
