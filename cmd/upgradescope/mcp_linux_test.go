package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/upgradescope/upgradescope/mcpserver"
)

// Even with stderr a terminal, as when a user starts mcp by hand to try it, the server shows
// no progress: its steps would interleave with whatever the client logs there, and stdout
// carries the protocol only.
func TestMCPShowsNoProgressEvenOnATerminal(t *testing.T) {
	root, _ := filepath.Abs("../..")
	tty, shown := openTerminal(t)
	m := startStdio(t, tty, "--root", root, "--no-cluster")
	var a mcpserver.ScanAnswer
	m.call(t, "scan", map[string]any{"path": "examples/manifests", "targets": []string{"1.37"}}, &a)
	if code := m.stop(); code != exitOK {
		t.Errorf("exit %d", code)
	}
	onlyProtocol(t, m.stdout.String())
	screen := shown()
	for _, step := range []string{"loading policy bundles", "reading manifests", "evaluating"} {
		if strings.Contains(screen, step) {
			t.Errorf("the terminal shows the progress step %q:\n%q", step, screen)
		}
	}
}
