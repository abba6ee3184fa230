package main

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/internal/testenv/syncbuf"

	"golang.org/x/sys/unix"

	"github.com/upgradescope/upgradescope/policies"
)

// openTerminal opens a pseudo-terminal: the command writes to tty, the test reads what a
// terminal would show from the returned buffer once tty is closed.
func openTerminal(t *testing.T) (tty *os.File, shown func() string) {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { _ = ptmx.Close() })
	if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Skipf("unlock the pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Skipf("pseudo-terminal number: %v", err)
	}
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("open the pseudo-terminal: %v", err)
	}
	var buf syncbuf.Buffer
	done := make(chan struct{})
	go func() { // drain, or the command blocks once the terminal's buffer is full
		defer close(done)
		b := make([]byte, 4096)
		for {
			n, err := ptmx.Read(b)
			_, _ = buf.Write(b[:n])
			if err != nil {
				return
			}
		}
	}()
	return tty, func() string {
		_ = tty.Close() // the reader then sees EIO
		select {
		case <-done:
		case <-time.After(5 * time.Second):
		}
		return buf.String()
	}
}

// On a terminal, a scan shows its steps on stderr, one line each with what it found and the
// time since the start; --quiet shows none. The report on stdout is the same either way.
func TestScanShowsProgressOnATerminalUnlessQuiet(t *testing.T) {
	for _, quiet := range []bool{false, true} {
		t.Run(fmt.Sprintf("quiet=%v", quiet), func(t *testing.T) {
			tty, shown := openTerminal(t)
			var out syncbuf.Buffer
			args := []string{"scan", "--files", examples, "--target", "1.37", "--fail-on", "never", pinned}
			if quiet {
				args = append(args, "--quiet")
			}
			code := run(args, streams{in: strings.NewReader(""), out: &out, err: tty})
			screen := shown()
			if code != 0 || !strings.Contains(out.String(), "VERDICT BLOCKED") {
				t.Fatalf("exit %d\n%s\n%s", code, out.String(), screen)
			}
			steps := []string{"loading policy bundles: rules " + policies.RulesRevision + ", kb " + policies.KBRevision, "reading manifests in " + examples + ": ", " objects in ", "evaluating 1 target: 1.37 blocked"}
			for _, step := range steps {
				if strings.Contains(screen, step) == quiet {
					t.Errorf("terminal shows %q: %v, want %v:\n%q", step, !quiet, !quiet, screen)
				}
			}
			if !quiet && !strings.Contains(screen, "s  evaluating") {
				t.Errorf("no elapsed time before a step:\n%q", screen)
			}
		})
	}
}

// Off a terminal (a file, as in CI logs), stderr gets no progress: only what it always gets.
func TestScanShowsNoProgressOffATerminal(t *testing.T) {
	stderr, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	defer stderr.Close()
	var out syncbuf.Buffer
	code := run([]string{"scan", "--files", examples, "--target", "1.37", "--fail-on", "never", pinned}, streams{in: strings.NewReader(""), out: &out, err: stderr})
	written, err := os.ReadFile(stderr.Name())
	if code != 0 || err != nil || len(written) != 0 {
		t.Errorf("exit %d (%v), stderr %q; want 0 and nothing", code, err, written)
	}
}
