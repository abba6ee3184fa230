package progress

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/internal/testenv/syncbuf"
)

// fakeClock advances by step on every reading.
func fakeClock(step time.Duration) func() time.Time {
	t := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	return func() time.Time {
		now := t
		t = t.Add(step)
		return now
	}
}

// The terminal receives the running step on a line it redraws in place, then each finished
// step as a line of its own under the time since the start.
func TestReporterDrawsStepsOnATerminal(t *testing.T) {
	var term bytes.Buffer
	r := New(&term, WithClock(fakeClock(1200*time.Millisecond)))
	r.Start("policy bundles")
	r.Done("rules 2026-11-29.9, kb 2026-11-29.5")
	r.Start("[1/8] versions")
	r.Done("3 nodes")
	r.Start("[2/8] namespaces")
	r.Close()
	want := "\r\x1b[K   1.2s  policy bundles …" +
		"\r\x1b[K   2.4s  policy bundles: rules 2026-11-29.9, kb 2026-11-29.5\n" +
		"\r\x1b[K   3.6s  [1/8] versions …" +
		"\r\x1b[K   4.8s  [1/8] versions: 3 nodes\n" +
		"\r\x1b[K   6.0s  [2/8] namespaces …" +
		"\r\x1b[K"
	if got := term.String(); got != want {
		t.Errorf("terminal got:\n%q\nwant:\n%q", got, want)
	}
}

func TestElapsedTimeIsInMinutesAndSecondsAfterAMinute(t *testing.T) {
	var term bytes.Buffer
	r := New(&term, WithClock(fakeClock(61*time.Second+400*time.Millisecond)))
	r.Start("helm")
	r.Done("2 Helm releases")
	if want := "\r\x1b[K  2m02s  helm: 2 Helm releases\n"; !strings.HasSuffix(term.String(), want) {
		t.Errorf("got %q, want it to end with %q", term.String(), want)
	}
}

// With a refresh interval the running step's line is redrawn while it runs.
func TestRefreshRedrawsTheRunningStep(t *testing.T) {
	var term syncbuf.Buffer
	r := New(&term, WithRefresh(5*time.Millisecond))
	r.Start("api-usage")
	deadline := time.Now().Add(5 * time.Second)
	for strings.Count(term.String(), "api-usage …") < 3 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	r.Close()
	if n := strings.Count(term.String(), "api-usage …"); n < 3 {
		t.Errorf("drawn %d times, want a redraw per tick:\n%q", n, term.String())
	}
	after := term.String()
	time.Sleep(20 * time.Millisecond)
	if term.String() != after {
		t.Error("redraws went on after Close")
	}
}

// Nothing reaches a writer that is not a terminal (a pipe, a file, a buffer), nor a terminal
// under --quiet; the nil Reporter that stands for them takes every call.
func TestForTerminalIsSilentOffATerminalAndWhenQuiet(t *testing.T) {
	file, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close()
	for name, w := range map[string]any{"a file": file, "a pipe": pw, "a buffer": &bytes.Buffer{}} {
		if r := ForTerminal(w.(interface{ Write([]byte) (int, error) }), false); r != nil {
			t.Errorf("%s: got a reporter", name)
		}
	}
	var r *Reporter = ForTerminal(os.Stderr, true)
	if r != nil {
		t.Error("--quiet: got a reporter")
	}
	r.Start("x")
	r.Done("y")
	r.Close()
	if info, _ := file.Stat(); info.Size() != 0 {
		t.Errorf("the file received %d bytes", info.Size())
	}
}
