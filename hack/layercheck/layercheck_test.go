package main

import (
	"go/parser"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The fixture module (testdata/mod) breaks each rule once and keeps each just inside:
// output links a fake OPA through engine while report links nothing; fleet/server's Big
// has 26 methods, Fits 25 (and one more in a test file), the generic Set 26; the store's
// sqlStore has 27 but is exempt; internal/bad imports cmd/tool/lib, internal/badtest does
// in its external test, and cmd/tool itself may.
func TestRulesOnFixture(t *testing.T) {
	dir := filepath.Join("testdata", "mod")
	for _, tc := range []struct {
		name  string
		rules rules
		want  []string
	}{{
		name:  "a package linking OPA through another fails, one that does not passes",
		rules: rules{noOPA: []string{"output", "report"}, forbiddenPrefix: "github.com/open-policy-agent/"},
		want: []string{
			"output/output.go:7: output must not link OPA, but links it: output → engine → github.com/open-policy-agent/opa/ast",
		},
	}, {
		name:  "a listed package the module lacks fails, so a mistyped path cannot turn its rule off",
		rules: rules{noOPA: []string{"kb", "report"}, forbiddenPrefix: "github.com/open-policy-agent/"},
		want: []string{
			"kb: no such package, but the no-OPA rule lists it, so the rule checks nothing: correct or drop the path in the rules",
		},
	}, {
		name:  "a package linking OPA directly fails",
		rules: rules{noOPA: []string{"engine"}, forbiddenPrefix: "github.com/open-policy-agent/"},
		want: []string{
			"engine/engine.go:4: engine must not link OPA, but links it: engine → github.com/open-policy-agent/opa/ast",
		},
	}, {
		name:  "imports of cmd/ from outside it fail, tests included; cmd/ may import itself",
		rules: rules{cmdDir: "cmd"},
		want: []string{
			"internal/bad/bad.go:4: internal/bad imports cmd/tool/lib: only packages under cmd/ may; move what it needs out of cmd/",
			"internal/badtest/x_test.go:6: internal/badtest imports cmd/tool/lib: only packages under cmd/ may; move what it needs out of cmd/",
		},
	}, {
		name:  "26 methods fail, 25 pass, test files and exempt types aside",
		rules: rules{methodsUnder: "fleet/server", maxMethods: 25, methodsExempt: []string{"fleet/server/store.sqlStore"}},
		want: []string{
			"fleet/server/server.go:5: fleet/server.Big has 26 methods, more than 25: split it into types that each hold what their methods use",
			"fleet/server/server.go:11: fleet/server.Set has 26 methods, more than 25: split it into types that each hold what their methods use",
		},
	}, {
		name:  "without the exemption the store's backend fails too",
		rules: rules{methodsUnder: "fleet/server/store", maxMethods: 25},
		want: []string{
			"fleet/server/store/store.go:4: fleet/server/store.sqlStore has 27 methods, more than 25: split it into types that each hold what their methods use",
		},
	}, {
		name:  "26 methods pass a bound of 26",
		rules: rules{methodsUnder: "fleet/server", maxMethods: 26, methodsExempt: []string{"fleet/server/store.sqlStore"}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			n, err := run(t.Context(), dir, tc.rules, &out)
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
			if out.Len() == 0 {
				got = nil
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("output:\n%s\nwant:\n%s", out.String(), strings.Join(tc.want, "\n"))
			}
			if n != len(tc.want) {
				t.Errorf("run answered %d violations, want %d", n, len(tc.want))
			}
		})
	}
}

func TestReceiverName(t *testing.T) {
	for _, src := range []string{"T", "*T", "(T)", "(*T)", "T[K]", "*T[K, V]"} {
		e, err := parser.ParseExpr(src)
		if err != nil {
			t.Fatalf("parse %q: %v", src, err)
		}
		if got := receiverName(e); got != "T" {
			t.Errorf("receiverName(%s) = %q, want T", src, got)
		}
	}
}

// Every path the rules make vet enforces name is one the real module has: a renamed or
// mistyped path would check nothing. (checkNoOPA refuses a missing one too, as the fixture
// shows; this also covers the folders and the exemptions, which no check refuses.)
func TestUpgradescopeRules(t *testing.T) {
	m, err := loadModule(t.Context(), filepath.Join("..", ".."))
	if err != nil {
		t.Fatalf("load the module: %v", err)
	}
	own := map[string]*pkg{}
	for _, p := range m.own {
		own[m.rel(p.ImportPath)] = p
	}
	r := upgradescopeRules
	for _, rel := range r.noOPA {
		if own[rel] == nil {
			t.Errorf("noOPA lists %s, which the module does not have", rel)
		}
	}
	for _, dir := range []string{r.cmdDir, r.methodsUnder} {
		if own[dir] == nil && !slices.ContainsFunc(m.own, func(p *pkg) bool { return strings.HasPrefix(m.rel(p.ImportPath), dir+"/") }) {
			t.Errorf("the rules name folder %s, which holds no package of the module", dir)
		}
	}
	for _, exempt := range r.methodsExempt {
		rel, name, _ := strings.Cut(exempt, ".")
		p := own[rel]
		if p == nil {
			t.Errorf("methodsExempt names %s, whose package the module does not have", exempt)
			continue
		}
		counts, err := countMethods(p)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(counts, func(c typeMethods) bool { return c.name == name }) {
			t.Errorf("methodsExempt names %s, which %s does not declare", exempt, rel)
		}
	}
}
