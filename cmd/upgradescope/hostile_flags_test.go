package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/internal/testenv/bundletest"
)

// Every flag that names a key, token, claims or CA file reads it whole, so each refuses what
// is not a regular file before reading it (issue 13, item 6): on /dev/zero it would grow
// without bound, and opening a FIFO would wait for a writer forever. Each command exits 1
// naming the file; the context kills one that hangs, which fails the test.
func TestKeyAndTokenFlagsRefuseEndlessFiles(t *testing.T) {
	buildBinary(t)
	dir := t.TempDir()
	private, public := bundletest.Keys(t, dir)
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(dir, "big.pem")
	if err := os.WriteFile(big, make([]byte, 65<<10), 0o600); err != nil {
		t.Fatal(err)
	}
	someFile := filepath.Join(dir, "some.tar.gz")
	if err := os.WriteFile(someFile, []byte("not read"), 0o600); err != nil {
		t.Fatal(err)
	}
	url := "https://127.0.0.1:1/rules.tar.gz"
	inv := "../../testdata/clean-is-ready/inventory.json"
	flags := []struct {
		name string
		args func(file string) []string
	}{
		{"eval --config", func(f string) []string {
			return []string{"eval", "--inventory", inv, "--target", "1.37", "--config", f}
		}},
		{"eval --inventory", func(f string) []string {
			return []string{"eval", "--inventory", f, "--target", "1.37"}
		}},
		{"bundle verify --verification-key", func(f string) []string {
			return []string{"bundle", "verify", someFile, "--verification-key", f}
		}},
		{"bundle sign --signing-key", func(f string) []string {
			return []string{"bundle", "sign", someFile, "--signing-key", f, "-o", filepath.Join(dir, "out.tar.gz")}
		}},
		{"bundle sign --claims-file", func(f string) []string {
			return []string{"bundle", "sign", someFile, "--signing-key", private, "--claims-file", f, "-o", filepath.Join(dir, "out.tar.gz")}
		}},
		{"bundle serve --bundle-token-file", func(f string) []string {
			return []string{"bundle", "serve", dir, "--listen", "127.0.0.1:0", "--bundle-token-file", f}
		}},
		{"--bundle with --verification-key", func(f string) []string {
			return []string{"version", "--bundle", someFile, "--verification-key", f}
		}},
		{"--bundle URL with --bundle-token-file", func(f string) []string {
			return []string{"version", "--bundle", url, "--verification-key", public, "--bundle-token-file", f}
		}},
		{"--bundle URL with --bundle-ca-file", func(f string) []string {
			return []string{"version", "--bundle", url, "--verification-key", public, "--bundle-ca-file", f}
		}},
		{"agent --ingest-token-file", func(f string) []string {
			return []string{"agent", "--server", "https://127.0.0.1:1", "--ingest-token-file", f}
		}},
		{"agent --server-ca-file", func(f string) []string {
			return []string{"agent", "--server", "https://127.0.0.1:1", "--ingest-token", "t0k", "--server-ca-file", f}
		}},
		{"push --inventory", func(f string) []string {
			return []string{"push", "--inventory", f, "--server", "https://127.0.0.1:1", "--ingest-token", "t0k", "--cluster-name", "c"}
		}},
		{"push --ingest-token-file", func(f string) []string {
			return []string{"push", "--inventory", inv, "--server", "https://127.0.0.1:1", "--ingest-token-file", f, "--cluster-name", "c"}
		}},
		{"push --server-ca-file", func(f string) []string {
			return []string{"push", "--inventory", inv, "--server", "https://127.0.0.1:1", "--ingest-token", "t0k", "--server-ca-file", f, "--cluster-name", "c"}
		}},
	}
	files := []struct{ name, path, want string }{
		{"/dev/zero", "/dev/zero", "not a regular file"},
		{"a FIFO", fifo, "not a regular file"},
		{"a file past the bound", big, "is larger than 64 KiB"},
	}
	for _, fl := range flags {
		for _, f := range files {
			if f.path == big && !strings.Contains(fl.name, "key") && !strings.Contains(fl.name, "token") && !strings.Contains(fl.name, "claims") {
				continue // a CA bundle, a configuration or an inventory may be larger than a key
			}
			t.Run(fl.name+" on "+f.name+" exits 1 naming the file", func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				out, err := exec.CommandContext(ctx, agentBin, fl.args(f.path)...).CombinedOutput()
				if ctx.Err() != nil {
					t.Fatalf("still running after 10 s: %s", out)
				}
				var ee *exec.ExitError
				if !errors.As(err, &ee) || ee.ExitCode() != 1 {
					t.Errorf("exit %v, want 1\n%s", err, out)
				}
				if !strings.Contains(string(out), f.path) || !strings.Contains(string(out), f.want) {
					t.Errorf("output %q does not name %s and say %q", out, f.path, f.want)
				}
			})
		}
	}
}
