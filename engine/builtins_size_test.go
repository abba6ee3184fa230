package engine

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/topdown"
)

// What each sizeFunc says a call builds is held against what the call allocates when OPA runs
// it: with a share of half that, the call is refused (a call let through cannot build much
// more than its share); with twenty times that, it runs (a call a rule needs is not refused
// for nothing).
func TestSizesFollowWhatTheBuiltinsAllocate(t *testing.T) {
	s := strings.Repeat("a", 3000)
	mixed := strings.Repeat("é<\x01", 1000)
	many := func(n int, t *ast.Term) *ast.Term {
		ts := make([]*ast.Term, n)
		for i := range ts {
			ts[i] = t
		}
		return ast.ArrayTerm(ts...)
	}
	str := ast.StringTerm
	doubled := ast.StringTerm("xxxxxxxx")
	for range 14 {
		doubled = ast.ArrayTerm(doubled, doubled)
	}
	obj := ast.ObjectTerm()
	for range 12 {
		obj = ast.ObjectTerm(ast.Item(str("a"), obj), ast.Item(str("b"), obj))
	}
	records := make([]*ast.Term, 5000)
	for i := range records {
		records[i] = ast.ObjectTerm(ast.Item(str("k"), str(fmt.Sprintf("v%d", i))), ast.Item(str("n"), ast.IntNumberTerm(i)))
	}
	tests := []struct {
		name     string
		builtin  string
		operands []*ast.Term
	}{
		{"replace with an empty pattern", "replace", []*ast.Term{str(s), str(""), str(s)}},
		{"replace outside ASCII", "replace", []*ast.Term{str(mixed), str(""), str("xyz")}},
		{"replace of a character", "replace", []*ast.Term{str(s), str("a"), str(s)}},
		{"strings.replace_n", "strings.replace_n", []*ast.Term{ast.ObjectTerm(ast.Item(str("a"), str(s))), str(s)}},
		{"regex.replace", "regex.replace", []*ast.Term{str(s), str("a"), str(s)}},
		{"regex.replace with references", "regex.replace", []*ast.Term{str(s), str("(a)a"), str(strings.Repeat("$1", 1000))}},
		{"concat", "concat", []*ast.Term{str(s), many(3000, str(s))}},
		{"sprintf of one argument many times", "sprintf", []*ast.Term{str(strings.Repeat("%[1]s", 3000)), ast.ArrayTerm(str(s))}},
		{"sprintf of a value", "sprintf", []*ast.Term{str("%v"), ast.ArrayTerm(doubled)}},
		{"json.marshal of a shared value", "json.marshal", []*ast.Term{doubled}},
		{"json.marshal of records", "json.marshal", []*ast.Term{ast.ArrayTerm(records...)}},
		{"json.marshal of escaped text", "json.marshal", []*ast.Term{many(300, str(mixed))}},
		{"json.marshal_with_options pretty", "json.marshal_with_options", []*ast.Term{ast.ArrayTerm(records...), ast.ObjectTerm(ast.Item(str("indent"), str("    ")))}},
		{"yaml.marshal of records", "yaml.marshal", []*ast.Term{ast.ArrayTerm(records...)}},
		{"urlquery.encode_object", "urlquery.encode_object", []*ast.Term{ast.ObjectTerm(ast.Item(str("a"), many(3000, str(s))))}},
		{"object.union_n", "object.union_n", []*ast.Term{ast.ArrayTerm(ast.ObjectTerm(ast.Item(str("z"), str("z"))), obj)}},
		{"object.union", "object.union", []*ast.Term{obj, obj}},
		{"array.flatten", "array.flatten", []*ast.Term{many(3000, many(3000, str("a")))}},
		{"split into characters", "split", []*ast.Term{str(strings.Repeat("ab", 150000)), str("")}},
		{"indexof_n", "indexof_n", []*ast.Term{str(strings.Repeat("a", 300000)), str("a")}},
		{"regex.find_all_string_submatch_n", "regex.find_all_string_submatch_n", []*ast.Term{str("(a)(b?)(c?)"), str(strings.Repeat("a", 100000)), ast.IntNumberTerm(-1)}},
		{"json.unmarshal", "json.unmarshal", []*ast.Term{str("[" + strings.Repeat("0,", 300000) + "0]")}},
		{"yaml.unmarshal", "yaml.unmarshal", []*ast.Term{str(strings.Repeat("- 0\n", 100000))}},
		{"yaml.unmarshal with aliases", "yaml.unmarshal", []*ast.Term{str("a: &a [" + strings.Repeat("x,", 300) + "x]\n" + aliasRows(3))}},
		{"a template string", "internal.template_string", []*ast.Term{many(3000, str(s))}},
		{"regex.split", "regex.split", []*ast.Term{str("a"), str(strings.Repeat("ab", 100000))}},
		{"regex.find_n", "regex.find_n", []*ast.Term{str("a"), str(strings.Repeat("ab", 100000)), ast.IntNumberTerm(-1)}},
		{"strings.split_n", "strings.split_n", []*ast.Term{str(strings.Repeat("ab", 100000)), str("b"), ast.IntNumberTerm(-1)}},
		{"array.concat", "array.concat", []*ast.Term{many(300000, str("a")), many(300000, str("b"))}},
		{"io.jwt.encode_sign", "io.jwt.encode_sign", []*ast.Term{
			ast.ObjectTerm(ast.Item(str("typ"), str("JWT")), ast.Item(str("alg"), str("HS256"))),
			ast.ObjectTerm(ast.Item(str("a"), ast.ArrayTerm(records...))),
			ast.ObjectTerm(ast.Item(str("kty"), str("oct")), ast.Item(str("k"), str("AyM1SysPpbyDfgZld3umj1qzKObwVMkoqQ-EstJQLr_T-1qS0gZH75aKtMN3Yj0iPS4hcgUuTwjAzZr1Z9CAow"))),
		}},
		{"json.match_schema", "json.match_schema", []*ast.Term{ast.ArrayTerm(records...), ast.ObjectTerm(ast.Item(str("type"), str("array")))}},
		{"json.remove under one shared object", "json.remove", []*ast.Term{sharedParents(300, 300), removals(300)}},
		{"net.cidr_contains_matches", "net.cidr_contains_matches", []*ast.Term{many(100, str("10.0.0.0/8")), many(100, str("10.1.2.3"))}},
		{"graph.reachable_paths", "graph.reachable_paths", []*ast.Term{layeredGraph(12), ast.ArrayTerm(str("n0_0"))}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			allocated := allocatedBy(t, tt.builtin, tt.operands)
			size := sizedBuiltins[tt.builtin]
			if small := allocated / 2; size(tt.operands, small) <= small {
				t.Errorf("a call that allocates %d bytes fits a share of %d: sized %d", allocated, small, size(tt.operands, small))
			}
			if large := 20 * allocated; size(tt.operands, large) > large {
				t.Errorf("a call that allocates %d bytes does not fit a share of %d: sized %d", allocated, large, size(tt.operands, large))
			}
		})
	}
}

// allocatedBy runs the builtin as OPA defines it and returns the bytes it allocated.
func allocatedBy(t *testing.T, name string, operands []*ast.Term) int64 {
	t.Helper()
	f := topdown.GetBuiltin(name)
	bctx := topdown.BuiltinContext{Context: withCallBudget(context.Background(), math.MaxUint64/2), Location: &ast.Location{}}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	err := f(bctx, operands, func(*ast.Term) error { return nil })
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return int64(after.TotalAlloc - before.TotalAlloc)
}

// aliasRows are n rows of YAML, each naming the anchor a ten times.
func aliasRows(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "b%d: [%s*a]\n", i, strings.Repeat("*a, ", 9))
	}
	return b.String()
}

// sharedParents is an object of n keys, each holding one object of width keys.
func sharedParents(n, width int) *ast.Term {
	inner := ast.NewObject()
	for i := range width {
		inner.Insert(ast.StringTerm(fmt.Sprintf("f%d", i)), ast.IntNumberTerm(i))
	}
	outer := ast.NewObject()
	for i := range n {
		outer.Insert(ast.StringTerm(fmt.Sprintf("k%d", i)), ast.NewTerm(inner))
	}
	return ast.NewTerm(outer)
}

// removals are paths to one field under each of n keys.
func removals(n int) *ast.Term {
	ps := make([]*ast.Term, n)
	for i := range ps {
		ps[i] = ast.StringTerm(fmt.Sprintf("k%d/f0", i))
	}
	return ast.ArrayTerm(ps...)
}

// layeredGraph has n layers of two nodes, each joined to both of the next: 2ⁿ paths.
func layeredGraph(n int) *ast.Term {
	g := ast.NewObject()
	for l := range n + 1 {
		for i := range 2 {
			next := ast.NewSet()
			if l < n {
				next.Add(ast.StringTerm(fmt.Sprintf("n%d_0", l+1)))
				next.Add(ast.StringTerm(fmt.Sprintf("n%d_1", l+1)))
			}
			g.Insert(ast.StringTerm(fmt.Sprintf("n%d_%d", l, i)), ast.NewTerm(next))
		}
	}
	return ast.NewTerm(g)
}
