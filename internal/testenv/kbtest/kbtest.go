// Package kbtest gives tests the knowledge base built into the binary.
package kbtest

import (
	"testing"

	"github.com/upgradescope/upgradescope/bundles"
	"github.com/upgradescope/upgradescope/kb"
	"github.com/upgradescope/upgradescope/policies"
)

// Builtin is the embedded kb bundle's knowledge base, as the CLI loads it without --bundle.
func Builtin(t testing.TB) *kb.KB {
	t.Helper()
	b, err := bundles.ReadFS(policies.KB)
	if err != nil {
		t.Fatal(err)
	}
	k, err := kb.FromData("built-in", b.Data)
	if err != nil {
		t.Fatal(err)
	}
	return k
}
