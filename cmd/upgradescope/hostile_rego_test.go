package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Custom Rego that runs away (issue 13, item 4): a rule that spins is stopped at
// --policy-timeout and one that builds numbers.range(1, 1e9) by --policy-memory. Each exits 1 naming the pack and the flag that raises the bound, below 256 MiB
// peak RSS, and prints no report. The peak is the kernel's count for the child, an upper
// bound (see TestAGzipBombStaysBelow256MiB), not a timing.
func TestCustomRegoThatRunsAwayEndsNamingItsPack(t *testing.T) {
	buildBinary(t)
	const head = `findings contains {"key": "x/y", "category": "x", "severity": "info", "target": t, "title": "t"} if {
	some t in input.targets
`
	spin := writeRego(t, "spin", head+"\tsome i in numbers.range(1, 100000)\n\tsome j in numbers.range(1, 100000)\n\ti == j + 1000000\n}\n")
	hoard := writeRego(t, "hoard", head+"\tcount(numbers.range(1, 1e9)) == 0\n}\n")
	inv := "../../testdata/clean-is-ready/inventory.json"
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{
			name: "a rule that spins is stopped at --policy-timeout",
			args: []string{"eval", "--inventory", inv, "--target", "1.37", "--policy", spin, "--policy-timeout", "500ms"},
			want: []string{`policy pack "spin" (` + spin, "evaluation exceeded 500ms (--policy-timeout)"},
		},
		{
			name: "numbers.range(1, 1e9) is stopped by the memory guard",
			args: []string{"eval", "--inventory", inv, "--target", "1.37", "--policy", hoard, "--policy-memory", "32"},
			want: []string{`policy pack "hoard" (` + hoard, "evaluation exceeded 32 MiB of heap (--policy-memory)"},
		},
		{
			name: "scan stops a rule the same way",
			args: []string{"scan", "--files", "../../testdata/manifests/request-only", "--target", "1.37", "--policy", spin, "--policy-timeout", "500ms"},
			want: []string{`policy pack "spin"`, "(--policy-timeout)"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(agentBin, tt.args...)
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			if code := cmd.ProcessState.ExitCode(); code != 1 || err == nil {
				t.Errorf("exit %d, want 1\n%s", code, stderr.String())
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr.String(), w) {
					t.Errorf("stderr %q does not say %q", stderr.String(), w)
				}
			}
			if stdout.Len() > 0 {
				t.Errorf("a report was printed: %s", stdout.String())
			}
			peak := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10 // KiB on Linux
			t.Logf("peak RSS %d MiB", peak>>20)
			if peak > 256<<20 {
				t.Errorf("peak RSS %d MiB, want under 256 MiB", peak>>20)
			}
		})
	}
}

// writeRego writes a one-module pack upgradescope.custom.<name> and returns its directory.
func writeRego(t *testing.T, name, body string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	src := "package upgradescope.custom." + name + "\n\n" + body
	if err := os.WriteFile(filepath.Join(dir, "p.rego"), []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// policy test runs a pack's tests under the same memory guard: a test that builds
// numbers.range(1, 1e9) stops the run with exit 1, naming the test and the flag, below
// 256 MiB peak RSS. (OPA's runner stops each test after 5 s of itself.)
func TestAPolicyTestThatRunsAwayIsStoppedByTheMemoryGuard(t *testing.T) {
	buildBinary(t)
	dir := writeRego(t, "hoard", "test_hoard if count(numbers.range(1, 1e9)) > 0\n")
	cmd := exec.Command(agentBin, "policy", "test", dir, "--policy-memory", "32")
	out, err := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != 1 || err == nil {
		t.Errorf("exit %d, want 1\n%s", code, out)
	}
	want := "policy test stopped while data.upgradescope.custom.hoard.test_hoard ran: the heap grew by more than 32 MiB (--policy-memory)"
	if !strings.Contains(string(out), want) {
		t.Errorf("output %q does not say %q", out, want)
	}
	peak := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10 // KiB on Linux
	t.Logf("peak RSS %d MiB", peak>>20)
	if peak > 256<<20 {
		t.Errorf("peak RSS %d MiB, want under 256 MiB", peak>>20)
	}
}
