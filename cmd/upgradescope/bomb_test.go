package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/upgradescope/upgradescope/internal/bundletest"
)

// The gzip bomb (34 files of 60 MiB zeros) costs `bundle inspect` and an unsigned
// local `scan --bundle` a bounded pass, not gigabytes: each exits 1 naming the bound, below
// 256 MiB peak RSS (the kernel's count for the child, no timing). Linux counts in a child's
// maxrss the memory it shared with this test process until exec, so the figure is an upper
// bound: about 112 MiB here, where /usr/bin/time measures the command alone at about 45 MiB.
func TestAGzipBombStaysBelow256MiB(t *testing.T) {
	buildBinary(t)
	path := filepath.Join(t.TempDir(), "bomb.tar.gz")
	if err := os.WriteFile(path, bundletest.Bomb(t, 34, 60<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"bundle", "inspect", path},
		{"version", "--bundle", path},
	} {
		cmd := exec.Command(agentBin, args...)
		out, err := cmd.CombinedOutput()
		if code := cmd.ProcessState.ExitCode(); code != 1 || err == nil {
			t.Errorf("%v: exit %d, want 1\n%s", args, code, out)
		}
		if !strings.Contains(string(out), "bundle too large: unpacks to more than 64 MiB") || !strings.Contains(string(out), path) {
			t.Errorf("%v: %s, want the bound and the file named", args, out)
		}
		peak := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10 // KiB on Linux
		t.Logf("%v: peak RSS %d MiB", args, peak>>20)
		if peak > 256<<20 {
			t.Errorf("%v: peak RSS %d MiB, want under 256 MiB", args, peak>>20)
		}
	}
}
