package policyset

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/bundle"

	"github.com/upgradescope/upgradescope/bundles"
	"github.com/upgradescope/upgradescope/engine"
)

// A polled pack whose rule runs away is refused when it is activated, with an error naming
// the pack, and the set that was active stays: no tick or request ever evaluates it.
func TestAPolledPackThatRunsAwayIsRefusedAndTheActiveSetStays(t *testing.T) {
	ctx := context.Background()
	limits := engine.WithLimits(engine.Limits{Timeout: 300 * time.Millisecond})
	policy := newSet(t, Base{Options: []engine.Option{limits}})
	eng, _ := policy.Engine()
	src := `package upgradescope.custom.spin

findings contains {"key": "spin/x", "category": "spin", "severity": "info", "target": t, "title": "x"} if {
	some t in input.targets
	some i in numbers.range(1, 100000)
	some j in numbers.range(1, 100000)
	i == j + 1000000
}
`
	m, err := ast.ParseModuleWithOpts("/upgradescope/custom/spin/p.rego", src, ast.ParserOptions{RegoVersion: ast.RegoV1})
	if err != nil {
		t.Fatal(err)
	}
	roots := []string{"upgradescope/custom/spin"}
	b := &bundle.Bundle{
		Manifest: bundle.Manifest{Revision: "1", Roots: &roots},
		Modules:  []bundle.ModuleFile{{Path: "/upgradescope/custom/spin/p.rego", URL: "/upgradescope/custom/spin/p.rego", Raw: []byte(src), Parsed: m}},
		Data:     map[string]any{},
	}
	err = policy.Activate(ctx, &bundles.Fetched{Source: "http://bundles.example/spin.tar.gz", Bundle: b})
	var le *engine.LimitError
	if !errors.As(err, &le) || le.Pack != "spin" || le.Limit != engine.LimitTimeout {
		t.Fatalf("Activate = %v, want a timeout naming the pack spin", err)
	}
	if active, _ := policy.Engine(); active != eng {
		t.Error("the pack was swapped in")
	}
}
