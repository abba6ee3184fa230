package main

import (
	"os"
	"strings"
	"testing"
)

// The README's first example is pasted output; it must be what scan prints, in order, so
// that a rule or an example manifest that changes cannot leave it behind. The golden is the
// scan TestCLIGolden holds to the real command.
func TestTheREADMEsFirstExampleIsWhatScanPrints(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	golden, err := os.ReadFile("testdata/golden/scan-examples-table.txt")
	if err != nil {
		t.Fatal(err)
	}
	example := exampleBlock(string(readme), "    TARGET 1.37  VERDICT")
	if len(example) < 10 {
		t.Fatalf("the README's first example has %d lines; want the scan's output", len(example))
	}
	printed := strings.Split(string(golden), "\n")
	at := 0
	for _, line := range example {
		if strings.TrimSpace(line) == "…" {
			continue
		}
		for at < len(printed) && printed[at] != line {
			at++
		}
		if at == len(printed) {
			t.Fatalf("README line %q is not printed by the scan (in this order); run the README's command and paste what it prints", line)
		}
	}
}

// exampleBlock is the indented block of text that starts with the line beginning start,
// without its four spaces of indentation.
func exampleBlock(text, start string) []string {
	var block []string
	in := false
	for _, line := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(line, start):
			in = true
		case in && line != "" && !strings.HasPrefix(line, "    "):
			return block
		}
		if in {
			block = append(block, strings.TrimPrefix(line, "    "))
		}
	}
	return block
}

// The README counts the check families docs/checks.md lists (generated from the packs).
func TestTheREADMECountsTheCheckFamiliesChecksMdLists(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	checks, err := os.ReadFile("../../docs/checks.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(checks), "**")
	count, _, _ := strings.Cut(rest, " check families**")
	if !ok || count == "" {
		t.Fatal("docs/checks.md states no count of check families")
	}
	if want := "family (" + count + " of them)"; !strings.Contains(strings.ReplaceAll(string(readme), "\n", " "), want) {
		t.Errorf("the README does not say %q, the count docs/checks.md states", want)
	}
}
