package main

import (
	"os/exec"
	"strings"
	"testing"
)

// html/template executes templates through reflection, and a binary that links it keeps every
// exported method of every type: 31 MB more binary and 15 MiB more peak memory for every scan
// (docs/performance.md). Pages are written with html.EscapeString instead.
func TestTheBinaryDoesNotLinkHTMLTemplate(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if pkg == "html/template" {
			t.Fatal("cmd/upgradescope links html/template")
		}
	}
}
