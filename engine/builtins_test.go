package engine_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/upgradescope/upgradescope/engine"
	"github.com/upgradescope/upgradescope/report"
)

// s30k is a rule of 30,000 characters: small enough to build, large enough that one call on
// it can build gigabytes.
const s30k = `s := concat("", ["a" | some _ in numbers.range(1, 30000)])` + "\n"

// doubling is n rules, each built by pair from the one before (X) twice: rule n holds base
// 2ⁿ times in n lines. A pair that is a comprehension keeps the rules' static types small:
// OPA's type checker walks a literal [X, X] as a tree, for minutes at 30 levels.
func doubling(name, base string, n int, pair string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s0 := %s\n", name, base)
	for i := 1; i <= n; i++ {
		prev := fmt.Sprintf("%s%d", name, i-1)
		fmt.Fprintf(&b, "%s%d := %s\n", name, i, strings.ReplaceAll(pair, "X", prev))
	}
	return b.String()
}

// layers is a graph of n layers of two nodes, each joined to both of the next: 2ⁿ paths.
func layers(n int) string {
	return fmt.Sprintf(`g := {sprintf("n%%d_%%d", [l, i]): {sprintf("n%%d_%%d", [l + 1, j]) | some j in [0, 1]} | some l in numbers.range(0, %d); some i in [0, 1]}`+"\n", n)
}

// A builtin call that would build far more than one call may (16 MiB of the default 128) is
// refused before it runs, naming the builtin, the pack and the line: the heap guard only
// cancels between expressions, so such a call would grow the heap by gigabytes first.
func TestABuiltinCallThatWouldBuildTooMuchIsRefusedBeforeItRuns(t *testing.T) {
	tests := []struct {
		name    string
		setup   string
		expr    string
		builtin string
	}{
		{"replace with an empty pattern inserts s before every byte of s", s30k, `count(replace(s, "", s)) > 0`, "replace"},
		{"replace of each character by s", s30k, `count(replace(s, "a", s)) > 0`, "replace"},
		{"strings.replace_n of each character by s", s30k, `count(strings.replace_n({"a": s}, s)) > 0`, "strings.replace_n"},
		{"strings.replace_n with an empty pattern", s30k, `count(strings.replace_n({"": s}, s)) > 0`, "strings.replace_n"},
		{"regex.replace of the empty match by s", s30k, `count(regex.replace(s, "", s)) > 0`, "regex.replace"},
		{"regex.replace whose size passes 2^63 (a million $0 over 2 MB)", doubling("s", `"a"`, 21, `concat("", [X, X])`) + doubling("v", `"$0"`, 20, `concat("", [X, X])`),
			`count(regex.replace(s21, "a", v20)) > 0`, "regex.replace"},
		{"regex.replace expanding the match many times", s30k, `count(regex.replace(s, "a+", concat("", ["$0" | some _ in numbers.range(1, 3000)]))) > 0`, "regex.replace"},
		{"regex.replace of a pattern of many groups keeps every match's indexes", s30k,
			`count(regex.replace(s, concat("", ["(a)", concat("", ["(b?)" | some _ in numbers.range(1, 2000)])]), "x")) > 0`, "regex.replace"},
		{"concat with s between 3,000 copies of s", s30k, `count(concat(s, [s | some _ in numbers.range(1, 3000)])) > 0`, "concat"},
		{"concat doubling a string rule after rule", doubling("c", `"aaaaaaaaaaaaaaaa"`, 30, `concat("", [X, X])`), `count(c30) > 0`, "concat"},
		{"sprintf writing one argument thousands of times", s30k, `count(sprintf(concat("", ["%[1]s" | some _ in numbers.range(1, 3000)]), [s])) > 0`, "sprintf"},
		{"a template string of many copies", s30k + "t := " + `$"` + strings.Repeat("{s}", 1000) + `"` + "\n", `count(t) > 0`, "internal.template_string"},
		{"json.marshal of a value holding another 2^30 times", doubling("a", `"xxxxxxxx"`, 30, `[x | some x in [X, X]]`), `count(json.marshal(a30)) > 0`, "json.marshal"},
		{"json.marshal_with_options indenting with a long string", s30k + doubling("a", `1`, 12, `[x | some x in [X, X]]`), `count(json.marshal_with_options(a12, {"indent": s})) > 0`, "json.marshal_with_options"},
		{"yaml.marshal of a value holding another 2^20 times", doubling("o", `{"x": "y"}`, 20, `{k: X | some k in ["a", "b"]}`), `count(yaml.marshal(o20)) > 0`, "yaml.marshal"},
		{"urlquery.encode_object of s 3,000 times", s30k, `count(urlquery.encode_object({"a": [s | some _ in numbers.range(1, 3000)]})) > 0`, "urlquery.encode_object"},
		{"object.union_n copying an object that holds another 2^30 times", doubling("o", `{"x": "y"}`, 30, `{k: X | some k in ["a", "b"]}`), `count(object.union_n([{"z": 1}, o30])) > 0`, "object.union_n"},
		{"object.union merging two such objects level by level", doubling("o", `{"x": "y"}`, 30, `{k: X | some k in ["a", "b"]}`) + `p := {"a": o29, "b": o29, "c": 1}` + "\n", `count(object.union(o30, p)) > 0`, "object.union"},
		{"array.flatten of one array 30,000 times", `a := numbers.range(1, 30000)` + "\n", `count(array.flatten([a | some _ in numbers.range(1, 30000)])) > 0`, "array.flatten"},
		{"array.concat doubling an array rule after rule", doubling("a", `[1, 2, 3, 4]`, 30, `array.concat(X, X)`), `count(a30) > 0`, "array.concat"},
		{"split of a long string into characters", `s := concat("", ["a" | some _ in numbers.range(1, 300000)])` + "\n", `count(split(s, "")) > 0`, "split"},
		{"indexof_n of every character", `s := concat("", ["a" | some _ in numbers.range(1, 300000)])` + "\n", `count(indexof_n(s, "a")) > 0`, "indexof_n"},
		{"regex.find_all_string_submatch_n of a pattern of many groups", s30k,
			`count(regex.find_all_string_submatch_n(concat("", ["(a)", concat("", ["(b?)" | some _ in numbers.range(1, 100)])]), s, -1)) > 0`, "regex.find_all_string_submatch_n"},
		{"graph.reachable_paths of 2^40 paths", layers(40), `count(graph.reachable_paths(g, {"n0_0"})) > 0`, "graph.reachable_paths"},
		{"json.unmarshal of 300,000 numbers", `j := concat("", ["[", concat(",", ["0" | some _ in numbers.range(1, 300000)]), "]"])` + "\n", `count(json.unmarshal(j)) > 0`, "json.unmarshal"},
		{"yaml.unmarshal of aliases expanding", `y := concat("\n", array.concat([sprintf("a: &a [%s]", [concat(",", ["x" | some _ in numbers.range(1, 300)])])], [sprintf("b%d: [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]", [i]) | some i in numbers.range(1, 30)]))` + "\n",
			`is_object(yaml.unmarshal(y))`, "yaml.unmarshal"},
		{"net.cidr_contains_matches of every pair", `c := [sprintf("10.0.%d.0/24", [i % 256]) | some i in numbers.range(1, 3000)]` + "\n", `count(net.cidr_contains_matches(c, c)) > 0`, "net.cidr_contains_matches"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := evaluateExpr(t, tt.setup, tt.expr)
			var le *engine.LimitError
			if !errors.As(err, &le) {
				t.Fatalf("Evaluate = %v, want a LimitError naming %s", err, tt.builtin)
			}
			want := engine.LimitError{Limit: engine.LimitMemory, Bound: "16 MiB", Pack: "big", Builtin: tt.builtin}
			at := le.At
			le.At = ""
			if *le != want || !strings.Contains(at, "p.rego:") {
				t.Errorf("LimitError = %+v at %q, want %+v in p.rego", *le, at, want)
			}
			if msg := tt.builtin + " would build more than 16 MiB in one call"; !strings.Contains(err.Error(), msg) {
				t.Errorf("error %q does not say %q", err, msg)
			}
		})
	}
}

// Below the share, every bounded builtin means what it means in OPA.
func TestBoundedBuiltinsKeepTheirMeaningBelowTheShare(t *testing.T) {
	tests := []struct {
		name, setup, expr string
	}{
		{"replace", "", `replace("aba", "a", "xy") == "xybxy"`},
		{"replace with an empty pattern", "", `replace("ab", "", "-") == "-a-b-"`},
		{"strings.replace_n", "", `strings.replace_n({"a": "1", "b": "22"}, "abc") == "122c"`},
		{"regex.replace with a reference", "", `regex.replace("a1b22", "[0-9]+", "<$0>") == "a<1>b<22>"`},
		{"concat", "", `concat(", ", ["a", "b", "c"]) == "a, b, c"`},
		{"sprintf with an argument index", "", `sprintf("%[2]s-%[1]s-%s", ["a", "b"]) == "b-a-b"`},
		{"a template string", `x := 3` + "\n", `$"x is {x}" == "x is 3"`},
		{"json.marshal", "", `json.marshal({"a": [1, "x"]}) == "{\"a\":[1,\"x\"]}"`},
		{"json.marshal_with_options", "", `json.marshal_with_options([1], {"indent": "  "}) == "[\n  1\n]"`},
		{"yaml.marshal", "", `yaml.marshal({"a": 1}) == "a: 1\n"`},
		{"object.union merges nested objects", "", `object.union({"a": {"b": 1}}, {"a": {"c": 2}}) == {"a": {"b": 1, "c": 2}}`},
		{"object.union_n", "", `object.union_n([{"a": 1}, {"b": 2}, {"a": 3}]) == {"a": 3, "b": 2}`},
		{"json.remove", "", `json.remove({"a": {"b": 1, "c": 2}}, ["a/b"]) == {"a": {"c": 2}}`},
		{"array.flatten", "", `array.flatten([[1, 2], 3, [4]]) == [1, 2, 3, 4]`},
		{"array.concat", "", `array.concat([1], [2, 3]) == [1, 2, 3]`},
		{"split", "", `split("a,b", ",") == ["a", "b"]`},
		{"indexof_n", "", `indexof_n("aaa", "aa") == [0, 1]`},
		{"regex.find_all_string_submatch_n", "", `regex.find_all_string_submatch_n("(a)(b)?", "aab", -1) == [["a", "a", ""], ["ab", "a", "b"]]`},
		{"graph.reachable_paths", "", `graph.reachable_paths({"a": ["b"], "b": []}, ["a"]) == {["a", "b"]}`},
		{"json.unmarshal", "", `json.unmarshal("[1, {\"a\": 2}]") == [1, {"a": 2}]`},
		{"yaml.unmarshal with an alias", "", `yaml.unmarshal("a: &x [1]\nb: *x") == {"a": [1], "b": [1]}`},
		{"net.cidr_contains_matches", "", `net.cidr_contains_matches(["10.0.0.0/8"], ["10.1.1.1"]) == {[0, 0]}`},
		{"a string of a few MiB", `s := concat("", ["a" | some _ in numbers.range(1, 1000)])` + "\n", `count(concat(s, [s | some _ in numbers.range(1, 1000)])) == 1999000`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := evaluateExpr(t, tt.setup, tt.expr)
			if err != nil {
				t.Fatalf("Evaluate = %v, want the pack's blocker", err)
			}
			if r.Targets[0].Verdict != "blocked" {
				t.Errorf("verdict %s, want blocked by the pack: %s is false", r.Targets[0].Verdict, tt.expr)
			}
		})
	}
}

// The share follows the memory bound: a call that fits in an eighth of 1 GiB runs, and one
// that does not fit in an eighth of 32 MiB is refused at 4 MiB.
func TestTheShareOfOneCallIsAnEighthOfTheMemoryBound(t *testing.T) {
	const setup = `s := concat("", ["a" | some _ in numbers.range(1, 3000)])` + "\n"
	const expr = `count(concat(s, [s | some _ in numbers.range(1, 1000)])) > 0` // 6 MB
	for _, tt := range []struct {
		memory uint64
		want   string
	}{
		{1 << 30, ""},
		{32 << 20, "concat would build more than 4 MiB in one call"},
	} {
		_, err := evaluateExpr(t, setup, expr, engine.WithLimits(engine.Limits{Memory: tt.memory, Timeout: time.Minute}))
		if got := fmt.Sprint(err); (tt.want == "" && err != nil) || !strings.Contains(got, tt.want) {
			t.Errorf("with %d MiB: Evaluate = %v, want %q", tt.memory>>20, err, tt.want)
		}
	}
}

// A template rendered by strings.render_template runs loops no bound can size: the engine
// refuses it when the pack is loaded, with its file and line, as it refuses http.send.
func TestRenderTemplateIsRefusedWhenThePackLoads(t *testing.T) {
	rego := "package upgradescope.custom.big\n\nx := strings.render_template(\"{{.a}}\", {\"a\": 1})\n"
	_, err := engine.New(context.Background(), engine.WithPolicy(writePack(t, map[string]string{"p.rego": rego})))
	if err == nil || !strings.Contains(err.Error(), "p.rego:3") || !strings.Contains(err.Error(), "strings.render_template") {
		t.Errorf("New = %v, want strings.render_template refused at p.rego:3", err)
	}
}

// evaluateExpr evaluates a pack that finds a blocker when expr holds, after the rules of setup.
func evaluateExpr(t *testing.T, setup, expr string, opts ...engine.Option) (*report.Report, error) {
	t.Helper()
	rego := "package upgradescope.custom.big\n\n" + setup +
		"\nfindings contains {\"key\": \"big/x\", \"category\": \"big\", \"severity\": \"blocker\", \"target\": t, \"title\": \"x\"} if {\n" +
		"\tsome t in input.targets\n\t" + expr + "\n}\n"
	eng := newEngine(t, append([]engine.Option{engine.WithPolicy(writePack(t, map[string]string{"p.rego": rego}))}, opts...)...)
	return eng.Evaluate(context.Background(), prodInventory(), []string{"1.37"}, now)
}
