package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// measureEnv makes this test binary a wrapper that runs its arguments as a command and
// writes the command's peak RSS and CPU time to the file the variable names.
const measureEnv = "UPGRADESCOPE_TEST_MEASURE_RSS"

// Linux starts a child's maxrss at the high-water mark of the process it was forked from: Go
// forks with CLONE_VM, so a command started by a test that has grown to 180 MiB reports at
// least 180 MiB. A freshly started wrapper is small, so what its child reports is close to
// the command's own peak (still an upper bound, never an undercount).
func TestMain(m *testing.M) {
	if out := os.Getenv(measureEnv); out != "" {
		os.Exit(wrap(out, os.Args[1:]))
	}
	os.Exit(m.Run())
}

func wrap(out string, argv []string) int {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	_ = cmd.Run()
	if cmd.ProcessState == nil {
		fmt.Fprintf(os.Stderr, "measure: %s did not start\n", argv[0])
		return 125
	}
	peak := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10 // KiB on Linux
	cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	if err := os.WriteFile(out, fmt.Appendf(nil, "%d %d", peak, cpu), 0o600); err != nil {
		fmt.Fprintf(os.Stderr, "measure: %v\n", err)
		return 125
	}
	return cmd.ProcessState.ExitCode()
}

// measured runs name with args in dir through the wrapper and returns its exit code, peak RSS
// in bytes and combined output. ctx kills the wrapper and the command with it.
func measured(ctx context.Context, t *testing.T, dir, name string, args ...string) (int, int64, string) {
	code, use, out := measuredUse(ctx, t, dir, name, args...)
	return code, use.peak, out
}

// usage is what a command used: its peak RSS in bytes and its CPU time, user and system.
// CPU time, unlike the wall clock, does not grow when other tests share the machine.
type usage struct {
	peak int64
	cpu  time.Duration
}

// measuredUse is measured, with the command's CPU time too.
func measuredUse(ctx context.Context, t *testing.T, dir, name string, args ...string) (int, usage, string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	rssFile := filepath.Join(t.TempDir(), "rss")
	cmd := exec.CommandContext(ctx, self, append([]string{name}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), measureEnv+"="+rssFile)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	out, _ := cmd.CombinedOutput()
	raw, err := os.ReadFile(rssFile)
	if err != nil {
		return cmd.ProcessState.ExitCode(), usage{}, string(out)
	}
	var use usage
	if _, err := fmt.Sscanf(string(raw), "%d %d", &use.peak, &use.cpu); err != nil {
		t.Fatalf("measure %q: %v", raw, err)
	}
	return cmd.ProcessState.ExitCode(), use, string(out)
}

// peakRSSOf is a running child's own peak RSS (VmHWM from /proc), in bytes. Its rusage
// Maxrss is no good for a child the test process started itself: exec starts it with the
// test process's pages (vfork), so a test binary grown past the bound fails the child.
func peakRSSOf(t *testing.T, pid int) int64 {
	t.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatalf("peak RSS of %d: %v", pid, err)
	}
	for line := range strings.Lines(string(status)) {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kib int64
			if _, err := fmt.Sscanf(strings.TrimSpace(rest), "%d kB", &kib); err != nil {
				t.Fatalf("peak RSS of %d: %q: %v", pid, line, err)
			}
			return kib << 10
		}
	}
	t.Fatalf("peak RSS of %d: no VmHWM in /proc/%d/status", pid, pid)
	return 0
}
