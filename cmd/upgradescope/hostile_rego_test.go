package main

import (
	"path/filepath"
	"testing"
)

// Issue 13, item 4: custom Rego that runs away. A rule that spins is stopped at
// --policy-timeout and one that builds numbers.range(1, 1e9) by --policy-memory, or by the
// deadline with the defaults. Each exits 1 naming the pack, where it was and the flag that
// raises the bound, and prints no report; policy test runs a pack's tests under the same guard.
func TestCustomRegoThatRunsAwayEndsNamingItsPack(t *testing.T) {
	const head = `findings contains {"key": "x/y", "category": "x", "severity": "info", "target": t, "title": "t"} if {
	some t in input.targets
`
	const spins = head + "\tsome i in numbers.range(1, 100000)\n\tsome j in numbers.range(1, 100000)\n\ti == j + 1000000\n}\n"
	const hoards = head + "\tcount(numbers.range(1, 1e9)) == 0\n}\n"
	inv, _ := filepath.Abs("../../testdata/clean-is-ready/inventory.json")
	manifests, _ := filepath.Abs("../../testdata/manifests/request-only")
	pack := func(name, body string, args ...string) func(*testing.T, string) []string {
		return func(t *testing.T, dir string) []string {
			writeRego(t, dir, name, body)
			return append(args, "--policy", name)
		}
	}
	noReport := []string{"upgradescope report"}
	runHostile(t, []hostile{
		{
			name: "a rule that spins is stopped at --policy-timeout",
			args: pack("spin", spins, "eval", "--inventory", inv, "--target", "1.37", "--policy-timeout", "500ms"),
			code: 1, want: []string{`policy pack "spin" (spin/p.rego:`, "evaluation exceeded 500ms (--policy-timeout)"}, absent: noReport,
		},
		{
			name: "numbers.range(1, 1e9) is stopped by the memory guard",
			args: pack("hoard", hoards, "eval", "--inventory", inv, "--target", "1.37", "--policy-memory", "32"),
			code: 1, want: []string{`policy pack "hoard" (hoard/p.rego:`, "evaluation exceeded 32 MiB of heap (--policy-memory)"}, absent: noReport,
		},
		{
			name: "numbers.range(1, 1e9) with the default bounds ends naming the pack",
			args: pack("hoard", hoards, "eval", "--inventory", inv, "--target", "1.37"),
			code: 1, want: []string{`policy pack "hoard" (hoard/p.rego:`, "evaluation exceeded"}, absent: noReport,
		},
		{
			name: "scan stops a rule the same way",
			args: pack("spin", spins, "scan", "--files", manifests, "--target", "1.37", "--policy-timeout", "500ms"),
			code: 1, want: []string{`policy pack "spin"`, "(--policy-timeout)"}, absent: noReport,
		},
		{
			name: "a pack's test that runs away stops policy test, naming the test",
			args: func(t *testing.T, dir string) []string {
				writeRego(t, dir, "hoard", "test_hoard if count(numbers.range(1, 1e9)) > 0\n")
				return []string{"policy", "test", "hoard", "--policy-memory", "32"}
			},
			code: 1, want: []string{"policy test stopped while data.upgradescope.custom.hoard.test_hoard ran: the heap grew by more than 32 MiB (--policy-memory)"},
		},
	})
}

// writeRego writes a one-module pack upgradescope.custom.<name> into dir/name.
func writeRego(t *testing.T, dir, name, body string) {
	t.Helper()
	write(t, filepath.Join(dir, name), "p.rego", "package upgradescope.custom."+name+"\n\n"+body)
}
